/**
 * The reference samples about probe events, reproduced through the files:
 * the same writes and enables as the capture script, the kernel's read path
 * driven through the executor, and the outputs compared line for line apart
 * from timestamps, pids and addresses.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { executorOf } from '../src/ftrace/kernel_seam.js';
import type { Series } from '../src/kernel/series.js';
import { Task } from '../src/kernel/task.js';
import type { Kernel } from '../src/kernel/kernel.js';
import { run, READ_PROC_VERSION, type CallTree } from './helpers/ftrace_driver.js';
import { echo, setup } from './helpers/tracefs.js';

const REF = process.env.TRACEFS_REFERENCE ?? '/work/shared/reference';
const sample = (series: Series, name: string): string | undefined => {
  const p = `${REF}/kernel-${series}/samples/${name}`;
  return existsSync(p) ? readFileSync(p, 'latin1') : undefined;
};

/** A trace line without task, pid, CPU and timestamp: `flags FUNCTION`, kernel pointers blanked. */
function shape(line: string): string {
  const m = /^\s*\S.*?-\d+\s+\[\d+\]\s+(\S{5})\s+\d+\.\d+: (.*)$/.exec(line);
  if (!m) return line;
  return `${m[1]} ${m[2].replace(/0xff[0-9a-f]{14}/g, '0xPTR')}`;
}
const events = (text: string): string[] => text.split('\n').filter((l) => l && !l.startsWith('#')).map(shape);

/** The real kernels' return offsets of calls: `ksys_read+0x7b` after vfs_read. */
function realCallSites(kernel: Kernel): void {
  executorOf(kernel).callSite = (caller, callee) => kernel.callSites.returnOffset(caller, callee);
}

/** `head -c 20 /proc/version` reads: vfs_read returns what it read. */
function readTree(ret: number): CallTree {
  const [fn, [inner, ...rest]] = READ_PROC_VERSION as [string, [string, ...CallTree[]]];
  return [fn, { fn: inner, ret, calls: rest }];
}

describe.each(['7.2', '6.12'] as Series[])('probe event samples of %s', (series) => {
  const has = sample(series, 'trace.fprobe-kprobe-events-on-vfs_read.head30.txt') !== undefined;

  it.skipIf(!has)('four probe events on vfs_read: enabled_functions, trace, kprobe_profile', async () => {
    const { fs, read, kernel } = setup({ series });
    realCallSites(kernel);
    for (const def of ['f:myprobe vfs_read', 'f:myretprobe vfs_read%return arg1=$retval', 'p:kp1 vfs_read', 'r:kr1 vfs_read']) {
      await echo(fs, 'dynamic_events', def + '\n', true);
    }
    await echo(fs, 'events/fprobes/enable', '1\n');
    await echo(fs, 'events/kprobes/enable', '1\n');
    expect(await read('enabled_functions')).toBe(sample(series, 'enabled_functions.with-fprobe-and-kprobe-events.txt'));
    const head = kernel.tasks.add(new Task(156, 156, 'head', 1));
    // `head -c 20 /proc/version` read the whole file: 220 bytes on 7.2's, 229 on 6.12's
    const size = series === '7.2' ? 220 : 229;
    run(kernel, head, readTree(size));
    run(kernel, head, readTree(size));
    const want = events(sample(series, 'trace.fprobe-kprobe-events-on-vfs_read.head30.txt')!).slice(8, 16);
    expect(events(await read('trace'))).toEqual(want);
    const prof = await read('kprobe_profile');
    expect(prof).toBe(`  ${'kp1'.padEnd(44)} ${'2'.padStart(15)} ${'0'.padStart(15)}\n  ${'kr1'.padEnd(44)} ${'2'.padStart(15)} ${'0'.padStart(15)}\n`);
  });
});
