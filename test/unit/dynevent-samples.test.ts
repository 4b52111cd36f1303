/**
 * The reference samples about probe events, reproduced through the files:
 * the same writes and enables as the capture script, the kernel's read path
 * driven through the executor, and the outputs compared line for line apart
 * from timestamps, pids and addresses.
 */
import { describe, expect, it } from 'vitest';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { Task } from '../../src/kernel/task.js';
import type { Kernel } from '../../src/kernel/kernel.js';
import { kernelSample as sample } from '../helpers/fixtures.js';
import { run, READ_PROC_VERSION, withStack as withStackOf, type CallTree } from '../helpers/ftrace-driver.js';
import { echo, setup } from '../helpers/tracefs.js';

/** A trace line without task, pid, CPU and timestamp: `flags FUNCTION`, kernel pointers blanked. */
function shape(line: string): string {
  const m = /^\s*\S.*?-\d+\s+\[\d+\]\s+(\S{5})\s+\d+\.\d+: (.*)$/.exec(line);
  if (!m) return line;
  return `${m[1]} ${m[2].replace(/0xff[0-9a-f]{14}/g, '0xPTR')}`;
}
const events = (text: string): string[] => text.split('\n').filter((l) => l && !l.startsWith('#')).map(shape);

/** The real kernels' return offsets of calls: `ksys_read+0x7b` after vfs_read. */
function realCallSites(kernel: Kernel): void {
  kernel.exec.callSite = (caller, callee) => kernel.callSites.returnOffset(caller, callee);
}

/** `head -c 20 /proc/version` reads: vfs_read returns what it read. */
function readTree(ret: number): CallTree {
  const [fn, [inner, ...rest]] = READ_PROC_VERSION as [string, [string, ...CallTree[]]];
  return [fn, { fn: inner, ret, calls: rest }];
}

/** The last lines of a sample that are trace events, shaped. */
const tail = (text: string, n: number): string[] => events(text).slice(-n);

/** Trampoline pages depend on what was allocated before in the boot. */
const noTramp = (s: string): string => s.replace(/tramp: 0x[0-9a-f]+/g, 'tramp: 0x?');

/** The first complete `vfs_read() { … }` block of a function_graph trace, without CPU and duration. */
function graphBlock(t: string): string[] {
  const lines = t.split('\n').filter((l) => /^\s*\d+\)/.test(l)).map((l) => l.replace(/^\s*\d+\)\s*[+!#*@$]?\s*[\d.]*( us)?\s*\|/, ' |'));
  const open = lines.findIndex((l) => l.endsWith('vfs_read() {'));
  const close = lines.findIndex((l, i) => i > open && l.trim() === '|  }');
  return open >= 0 && close > open ? lines.slice(open, close + 1) : lines;
}

/** error_log text without timestamps. */
const noTs = (s: string): string[] => s.split('\n').filter(Boolean).map((l) => l.replace(/^\[\s*\d+\.\d+\] /, ''));

/** `## def` / `echo: write error: …` / `exit status: N` / error_log lines, as the capture script prints them. */
function parseWrites(text: string): { def: string; errno: string | 0; log: string[] }[] {
  const STRERROR: Record<string, string> = { 'Invalid argument': 'EINVAL', 'No such file or directory': 'ENOENT', 'File exists': 'EEXIST' };
  const out: { def: string; errno: string | 0; log: string[] }[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) out.push({ def: line.slice(3), errno: 0, log: [] });
    else if (line.startsWith('echo: write error: ')) out[out.length - 1].errno = STRERROR[line.slice(19)] ?? line;
    else if (line && !line.startsWith('exit status')) out[out.length - 1]?.log.push(line.replace(/^\[\s*\d+\.\d+\] /, ''));
  }
  return out;
}

/** busybox `echo "$def" >> file`: one write with the newline; the errno or 0. */
async function echoErr(fs: Parameters<typeof echo>[0], path: string, text: string): Promise<string | 0> {
  try {
    await echo(fs, path, text + '\n', true);
    return 0;
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

/** A struct file for vfs_read's arguments: f_mode where BTF says, the rest zero. */
function fileObject(kernel: Kernel, addr: bigint, fMode: number): bigint {
  const st = kernel.types.struct('file');
  const m = st?.members.find((x) => x.name === 'f_mode');
  const b = Buffer.alloc(4);
  b.writeUInt32LE(fMode);
  kernel.exec.memory.write(addr + BigInt((m?.bitOffset ?? 0) / 8), b);
  return addr;
}

describe('probe events per trace array', () => {
  it('a kprobe off the ftrace site (int3) records the NMI-like context: `..Zff` (7.2, as the real kernel showed)', async () => {
    const { fs, read, kernel } = setup();
    realCallSites(kernel);
    await echo(fs, 'kprobe_events', 'p:k3 vfs_read+9\n');
    await echo(fs, 'events/kprobes/k3/enable', '1\n');
    const head = kernel.tasks.add(new Task(130, 130, 'head', 1));
    run(kernel, head, readTree(10));
    expect(events(await read('trace'))).toEqual(['..Zff k3: (vfs_read+0x9/0x490)']);
  });

  it('record only in the arrays where they are enabled', async () => {
    const { fs, read, kernel } = setup();
    realCallSites(kernel);
    fs.mkdir('instances/a');
    await echo(fs, 'dynamic_events', 'p:kp1 vfs_read\nf:fx vfs_read%return\n');
    await echo(fs, 'instances/a/events/kprobes/kp1/enable', '1\n');
    await echo(fs, 'events/fprobes/fx/enable', '1\n');
    const cat = kernel.tasks.add(new Task(300, 300, 'cat', 1));
    run(kernel, cat, readTree(10));
    expect(events(await read('trace')).map((l) => l.replace(/^\S+ /, ''))).toEqual(['fx: (ksys_read+0x7b/0x110 <- vfs_read)']);
    expect(events(await read('instances/a/trace')).map((l) => l.replace(/^\S+ /, ''))).toEqual(['kp1: (vfs_read+0x4/0x490)']);
  });
});

/** What `head` read (vfs_read's return) in each kernel's samples. */
const HEAD_READ: Record<Series, number> = { '7.2': 220, '7.3': 215, '6.12': 229 };

describe.each(SERIES)('probe event samples of %s', (series) => {
  const size = HEAD_READ[series];

  it('four probe events on vfs_read: listings, formats, directories, enabled_functions, trace, kprobe_profile', async () => {
    const { fs, read, kernel } = setup({ series });
    realCallSites(kernel);
    for (const def of ['f:myprobe vfs_read', 'f:myretprobe vfs_read%return arg1=$retval', 'p:kp1 vfs_read', 'r:kr1 vfs_read']) {
      await echo(fs, 'dynamic_events', def + '\n', true);
    }
    expect(await read('dynamic_events')).toBe(sample(series, 'dynamic_events.after-adding-4.txt'));
    expect(await read('kprobe_events')).toBe(sample(series, 'kprobe_events.after-adding-4.txt'));
    for (const [file, path] of [['fprobes-myprobe', 'fprobes/myprobe'], ['fprobes-myretprobe', 'fprobes/myretprobe'], ['kprobes-kp1', 'kprobes/kp1'], ['kprobes-kr1', 'kprobes/kr1']]) {
      expect(await read(`events/${path}/format`), file).toBe(sample(series, `format.${file}.txt`));
    }
    const names = (ls: string) => ls.split('\n').slice(3).filter(Boolean).map((l) => l.split(/\s+/).pop()).sort();
    expect(fs.readdir('events/fprobes').sort()).toEqual(names(sample(series, 'ls-la.events-fprobes.txt')));
    expect(fs.readdir('events/kprobes').sort()).toEqual(names(sample(series, 'ls-la.events-kprobes.txt')));
    expect(fs.readdir('events/fprobes/myprobe').sort()).toEqual(names(sample(series, 'ls-la.events-fprobes-myprobe.txt')));
    await echo(fs, 'events/fprobes/enable', '1\n');
    await echo(fs, 'events/kprobes/enable', '1\n');
    expect(await read('enabled_functions')).toBe(sample(series, 'enabled_functions.with-fprobe-and-kprobe-events.txt'));
    const head = kernel.tasks.add(new Task(156, 156, 'head', 1));
    run(kernel, head, readTree(size));
    run(kernel, head, readTree(size));
    const want = events(sample(series, 'trace.fprobe-kprobe-events-on-vfs_read.head30.txt')).slice(8, 16);
    expect(events(await read('trace'))).toEqual(want);
    const row = (name: string, hits: number) => `  ${name.padEnd(44)} ${String(hits).padStart(15)} ${'0'.padStart(15)}\n`;
    expect(await read('kprobe_profile')).toBe(row('kp1', 2) + row('kr1', 2));
    // the sample's layout, numbers aside
    const shapeOf = (t: string) => t.replace(/\d+/g, 'N');
    expect(shapeOf(await read('kprobe_profile'))).toBe(shapeOf(sample(series, 'kprobe_profile.txt')));
  });

  it('bad fprobe writes: statuses, error_log, listing, clear', async () => {
    const { fs, read } = setup({ series });
    for (const def of ['f:myprobe vfs_read', 'f:myretprobe vfs_read%return arg1=$retval', 'p:kp1 vfs_read', 'r:kr1 vfs_read', 'f:myopen do_sys_openat2']) {
      await echo(fs, 'dynamic_events', def + '\n', true);
    }
    for (const w of parseWrites(sample(series, 'error_log.fprobe-writes-and-their-status.txt'))) {
      expect(await echoErr(fs, 'dynamic_events', w.def), w.def).toBe(w.errno);
    }
    expect(noTs(await read('error_log'))).toEqual(noTs(sample(series, 'error_log.after-fprobe-writes.txt')));
    expect(await read('dynamic_events')).toBe(sample(series, 'dynamic_events.after-fprobe-writes.txt'));
    await echo(fs, 'error_log', '\n');
    await echoErr(fs, 'dynamic_events', 'f:bad vfs_read $none_var');
    expect(noTs(await read('error_log'))).toEqual(noTs(sample(series, 'error_log.after-one-bad-fprobe.txt')));
    await echo(fs, 'dynamic_events', '\n');
    expect(await read('dynamic_events')).toBe(sample(series, 'dynamic_events.after-clear.txt'));
  });

  it('fprobe arguments: writes, listing, formats, trace (x-args, x-format, x-trace.args)', async () => {
    const { fs, read, kernel } = setup({ series });
    realCallSites(kernel);
    for (const w of parseWrites(sample(series, 'x-args.writes-status-and-error_log.txt'))) {
      await echo(fs, 'error_log', '\n');
      expect(await echoErr(fs, 'dynamic_events', w.def), w.def).toBe(w.errno);
      expect(noTs(await read('error_log')), w.def).toEqual(w.log);
    }
    expect(await read('dynamic_events')).toBe(sample(series, 'x-args.dynamic_events.txt'));
    for (const name of ['fret', 'fargs', 'btf', 'btfret', 'btfmem', 'argret']) {
      expect(await read(`events/fprobes/${name}/format`), name).toBe(sample(series, `x-format.fprobes-${name}.txt`));
    }
    await echo(fs, 'events/fprobes/enable', '1\n');
    const head = kernel.tasks.add(new Task(240, 240, 'head', 1));
    const file = fileObject(kernel, 0xff48e065413ca000n, 67797005);
    const exec = kernel.exec;
    withStackOf(head);
    const want = tail(sample(series, 'x-trace.args-fprobes-vfs_read.head40.txt'), 6);
    // the user buffer of that read, as the sample's last read had it
    const buf = BigInt(/fargs: .* buf=(0x[0-9a-f]+)/.exec(want.join('\n'))![1]);
    exec.call(head, 'ksys_read', [], (x) => x.call('vfs_read', [file, buf, 1024, 0xff739a64805e7d10n], () => BigInt(size)));
    expect(events(await read('trace'))).toEqual(want);
  });

  it('more writes: each status and error_log entry, then the listing', async () => {
    const { fs, read } = setup({ series });
    for (const w of parseWrites(sample(series, 'x-error_log.more-writes-status-and-error_log.txt'))) {
      await echo(fs, 'error_log', '\n');
      expect(await echoErr(fs, 'dynamic_events', w.def), w.def).toBe(w.errno);
      expect(noTs(await read('error_log')), w.def).toEqual(w.log);
    }
    expect(await read('dynamic_events')).toBe(sample(series, 'x-dynamic_events.after-more-writes.txt'));
    await echo(fs, 'dynamic_events', '\n');
    await echo(fs, 'error_log', '\n');
    for (let i = 1; i <= 10; i++) await echoErr(fs, 'dynamic_events', `f:cap${i} no_such_function_${i}`);
    expect(noTs(await read('error_log'))).toEqual(noTs(sample(series, 'x-error_log.after-10-errors.txt')));
  });

  it('an entry and an exit fprobe, function_graph beside the exit one, then a kretprobe (x-trace.b, c, d)', async () => {
    const { fs, read, kernel } = setup({ series });
    realCallSites(kernel);
    await echo(fs, 'dynamic_events', 'f:fentry vfs_read\n', true);
    await echo(fs, 'events/fprobes/fentry/enable', '1\n');
    expect(noTramp(await read('enabled_functions'))).toBe(noTramp(sample(series, 'x-enabled_functions.a-fprobe-entry-vfs_read.txt')));
    await echo(fs, 'dynamic_events', 'f:fexit vfs_read%return\n', true);
    await echo(fs, 'events/fprobes/fexit/enable', '1\n');
    expect(noTramp(await read('enabled_functions'))).toBe(noTramp(sample(series, 'x-enabled_functions.b-fprobe-entry-and-exit-vfs_read.txt')));
    const cat = kernel.tasks.add(new Task(202, 202, 'cat', 1));
    run(kernel, cat, readTree(size));
    expect(events(await read('trace'))).toEqual(tail(sample(series, 'x-trace.b-fprobe-entry-and-exit-vfs_read.head20.txt'), 2));
    await echo(fs, 'events/fprobes/fentry/enable', '0\n');
    expect(noTramp(await read('enabled_functions'))).toBe(noTramp(sample(series, 'x-enabled_functions.b2-fprobe-exit-only-vfs_read.txt')));
    // (c) function_graph filtered to vfs_read beside the exit fprobe: its event is a comment in the graph
    await echo(fs, 'trace', '\n');
    await echo(fs, 'set_ftrace_filter', 'vfs_read\n');
    await echo(fs, 'current_tracer', 'function_graph\n');
    expect(noTramp(await read('enabled_functions'))).toBe(noTramp(sample(series, 'x-enabled_functions.c-function_graph-and-fprobe-exit-vfs_read.txt')));
    run(kernel, cat, readTree(size));
    expect(graphBlock(await read('trace'))).toEqual(graphBlock(sample(series, 'x-trace.c-function_graph-and-fprobe-exit-vfs_read.head30.txt')));
    await echo(fs, 'current_tracer', 'nop\n');
    await echo(fs, 'set_ftrace_filter', '\n');
    expect(noTramp(await read('enabled_functions'))).toBe(noTramp(sample(series, 'x-enabled_functions.c2-after-nop.txt')));
    // (d) a kretprobe beside the exit fprobe
    await echo(fs, 'trace', '\n');
    await echo(fs, 'dynamic_events', 'r:kret vfs_read\n', true);
    await echo(fs, 'events/kprobes/kret/enable', '1\n');
    expect(noTramp(await read('enabled_functions'))).toBe(noTramp(sample(series, 'x-enabled_functions.d-kretprobe-and-fprobe-exit-vfs_read.txt')));
    run(kernel, cat, readTree(size));
    expect(events(await read('trace'))).toEqual(tail(sample(series, 'x-trace.d-kretprobe-and-fprobe-exit-vfs_read.head20.txt'), 2));
    expect(await read('dynamic_events')).toBe(sample(series, 'x-dynamic_events.d.txt'));
    await echo(fs, 'events/kprobes/kret/enable', '0\n');
    await echo(fs, 'events/fprobes/fexit/enable', '0\n');
    await echo(fs, 'dynamic_events', '\n');
    expect(noTramp(await read('enabled_functions'))).toBe(noTramp(sample(series, 'x-enabled_functions.e-all-removed.txt')));
  });

  it('the default kretprobe maxactive follows the CPU count (8 vCPUs: r16)', async () => {
    const { fs, read } = setup({ series, cpus: 8 });
    await echo(fs, 'dynamic_events', 'r:kr1 vfs_read\n', true);
    expect((await read('dynamic_events')).split('\n')[0]).toBe(sample(series, 'x-dynamic_events.kretprobe-smp8.txt').split('\n')[1]);
  });

  it('an fprobe on do_sys_openat2 through trace_pipe', async () => {
    const { fs, kernel } = setup({ series });
    await echo(fs, 'dynamic_events', 'f:myopen do_sys_openat2\n', true);
    await echo(fs, 'events/fprobes/myopen/enable', '1\n');
    const sh = kernel.tasks.add(new Task(163, 163, 'sh', 1));
    for (let i = 0; i < 3; i++) run(kernel, sh, 'do_sys_openat2');
    const h = await fs.open('trace_pipe', 0);
    const got = (await h.read(65536, 0, new AbortController().signal)).toString('latin1');
    h.release();
    expect(events(got)).toEqual(tail(sample(series, 'trace_pipe.fprobe-do_sys_openat2.timeout-2s.txt'), 3));
  });
});
