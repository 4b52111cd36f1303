/**
 * Subtrees that only the function profiler sees are not run call by call
 * (counted_calls.ts): the profiler is given their calls at once. Its hit
 * counts are the same as when every call runs, whatever else hooks some of
 * the functions; far fewer calls run.
 */
import { describe, expect, it } from 'vitest';
import { Task } from '../../src/kernel/task.js';
import { echo } from '../helpers/tracefs.js';
import { testEmulator } from '../helpers/emulator.js';

const SH = { pid: 4000, uid: 0, gid: 0 };

/** Hits per function over every CPU, after process lives and tracefs reads with the profiler on. */
async function hits(skipping: boolean, setup: string[][] = []) {
  const emu = testEmulator({ features: ['function-profiler'], virtualClock: true });
  const k = emu.kernel;
  k.runner.subtrees.skipping = skipping;
  const write = (p: string, d: string) => echo(emu.fs, p, d, false, SH);
  for (const [p, d] of setup) {
    if (d === undefined) emu.fs.mkdir(p!, SH);
    else await write(p!, d);
  }
  await write('function_profile_enabled', '1\n');
  const calls0 = k.exec.calls;
  const skipped0 = k.runner.skipped;
  const sh = k.tasks.add(new Task(SH.pid, SH.pid, 'sh', 1));
  for (let i = 0; i < 3; i++) {
    const child = k.tasks.add(new Task(SH.pid + 1 + i, SH.pid + 1 + i, 'sh', SH.pid));
    k.procs.fork(sh, child);
    k.procs.exec(child, '/usr/bin/cat', 'cat');
    await emu.fs.readFile('events/sched/sched_switch/format', { ...SH, pid: child.pid });
    k.procs.exit(child, 0);
    k.procs.reap(sh, child);
  }
  await emu.fs.readFile('trace_options', SH);
  const calls = k.exec.calls - calls0;
  const skipped = k.runner.skipped - skipped0;
  await write('function_profile_enabled', '0\n');
  const out = new Map<string, number>();
  for (let cpu = 0; cpu < k.nrCpus; cpu++) {
    for (const line of (await emu.fs.readFile(`trace_stat/function${cpu}`, SH)).split('\n').slice(2)) {
      const m = /^ {2}(\S+)\s+(\d+) /.exec(line);
      if (m) out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
    }
  }
  return { hits: Object.fromEntries([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), calls, skipped };
}

describe('the profiler given the calls of subtrees nobody else sees', () => {
  it.each([
    ['the profiler alone', [], true],
    ['a global filter of lock functions', [['set_ftrace_filter', '*lock*\n']], true],
    ['the function tracer of an instance on a few functions', [['instances/i'], ['instances/i/set_ftrace_filter', '_raw_spin_lock*\nkmem_cache_alloc*\n'], ['instances/i/current_tracer', 'function\n']], true],
    ['a kprobe on a function of the trees', [['kprobe_events', 'p:kp vfs_read\n'], ['events/kprobes/enable', '1\n']], true],
    // function_graph sees every function (set_graph_function is its entry's test): everything runs.
    ['function_graph beside it', [['set_graph_function', 'do_exit\n'], ['current_tracer', 'function_graph\n']], false],
  ] as const)('%s: the same hits as when every call runs', async (_what, setup, skips) => {
    const all = await hits(false, setup.map((s) => [...s] as string[]));
    const counted = await hits(true, setup.map((s) => [...s] as string[]));
    expect(Object.keys(all.hits).length).toBeGreaterThan(5);
    expect(counted.hits).toEqual(all.hits);
    expect(all.skipped).toBe(0);
    if (skips) {
      expect(counted.skipped).toBeGreaterThan(0);
      expect(counted.calls).toBeLessThan(all.calls);
    } else expect(counted.calls).toBe(all.calls);
  });

  it('runs a fraction of the calls when only the profiler looks', async () => {
    const all = await hits(false);
    const counted = await hits(true);
    expect(counted.calls * 5).toBeLessThan(all.calls);
  });
});
