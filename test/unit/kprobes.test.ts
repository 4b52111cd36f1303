/**
 * kprobes as mechanisms: ftrace-based and int3 probes, aggregates, the
 * debugfs list (checked against the real 7.2 and 6.12 kernels: format,
 * aggregate order, flags, disarm), enabled_functions of the shared kprobe
 * ops, optimization, recursion misses, registration errors.
 */
import { describe, expect, it } from 'vitest';
import { Ftrace } from '../../src/ftrace/ftrace.js';
import { Kprobe } from '../../src/ftrace/kprobe.js';
import { Kprobes, kprobeHash } from '../../src/ftrace/kprobes.js';
import { Kretprobe } from '../../src/ftrace/kretprobes.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { Task } from '../../src/kernel/task.js';
import { echo, setup } from '../helpers/tracefs.js';
import { withStack } from '../helpers/ftrace-driver.js';

function kernelOf(series: Series) {
  const kernel = new Kernel({ cpus: 2, series, virtualClock: true });
  const task = withStack(kernel.tasks.add(new Task(700, 700, 'cat', 1)));
  const ftrace = new Ftrace(kernel);
  return { kernel, ftrace, task, kp: ftrace.kprobes, exec: ftrace.exec };
}

/** The probes of the oracle run: kp1 vfs_read, kp9 vfs_read+9, kr1 vfs_read, kp0 vfs_read+0, kpo do_sys_openat2+5, kro do_sys_openat2. */
function oracleProbes(kp: Kprobes, log: string[] = []) {
  const p = (name: string, symbol: string, offset = 0) => new Kprobe({ symbol, offset, name, pre: () => void log.push(name) });
  const r = (name: string, symbol: string) => new Kretprobe({ symbol, name, handler: () => void log.push(name) });
  const probes = { kp1: p('kp1', 'vfs_read'), kp9: p('kp9', 'vfs_read', 9), kr1: r('kr1', 'vfs_read'), kp0: p('kp0', 'vfs_read', 0), kpo: p('kpo', 'do_sys_openat2', 5), kro: r('kro', 'do_sys_openat2') };
  kp.register(probes.kp1, { disabled: true });
  kp.register(probes.kp9, { disabled: true });
  kp.registerKretprobe(probes.kr1, { disabled: true });
  kp.register(probes.kp0, { disabled: true });
  kp.register(probes.kpo, { disabled: true });
  kp.registerKretprobe(probes.kro, { disabled: true });
  return probes;
}

const noAddr = (s: string) => s.replace(/^[0-9a-f]{16}/gm, 'ADDR');

describe.each(SERIES)('kprobes (%s)', (series) => {
  it('kprobes/list: hash-bucket order, aggregates newest first, [DISABLED] [OPTIMIZED] [FTRACE], disarm', () => {
    const { kernel, ftrace, kp } = kernelOf(series);
    const pr = oracleProbes(kp);
    const lines = kp.listText().split('\n').filter(Boolean);
    // As the kernels listed them (their order of buckets depends on the boot's addresses).
    expect(noAddr(lines.filter((l) => l.includes('vfs_read+0x4')).join('\n'))).toBe(
      ['ADDR  k  vfs_read+0x4    [DISABLED][FTRACE]', 'ADDR  r  vfs_read+0x4    [DISABLED][FTRACE]', 'ADDR  k  vfs_read+0x4    [DISABLED][FTRACE]'].join('\n'),
    );
    expect(noAddr(lines.filter((l) => !l.includes('vfs_read+0x4')).join('\n')).split('\n').sort().join('\n')).toBe(
      ['ADDR  k  do_sys_openat2+0x5    [DISABLED]', 'ADDR  k  vfs_read+0x9    [DISABLED]', 'ADDR  r  do_sys_openat2+0x0    [DISABLED][FTRACE]'].join('\n'),
    );
    const order = lines.map((l) => BigInt('0x' + l.slice(0, 16)));
    expect(order.map(kprobeHash)).toEqual([...order.map(kprobeHash)].sort((a, b) => a - b));

    for (const p of [pr.kp1, pr.kp9, pr.kr1.kp, pr.kp0, pr.kpo, pr.kro.kp]) kp.enable(p);
    // Marked OPTIMIZED as soon as queued for the optimizer (the real 7.2 kernel lists it right after the enable),
    // while hits come through int3 until the optimizer puts the jump in, 5 jiffies later.
    const enabled = kp.listText();
    expect(kp.isOptimized(pr.kp9)).toBe(false);
    kernel.clock.advance(20_000_000);
    expect(kp.listText()).toBe(enabled);
    expect(noAddr(enabled)).toMatch(/^ADDR  k  vfs_read\+0x9    \[OPTIMIZED\]$/m);
    expect(noAddr(enabled)).toMatch(/^ADDR  k  do_sys_openat2\+0x5    \[OPTIMIZED\]$/m);
    expect(noAddr(enabled)).toMatch(/^ADDR  r  do_sys_openat2\+0x0    \[FTRACE\]$/m);
    expect(kp.isOptimized(pr.kp9)).toBe(true);
    expect(kp.isOptimized(pr.kp1)).toBe(false);

    kp.setArmed(false);
    const disarmed = noAddr(kp.listText());
    expect(disarmed).toMatch(/^ADDR  k  vfs_read\+0x9    $/m);
    expect(disarmed).toMatch(/^ADDR  k  vfs_read\+0x4    \[FTRACE\]$/m);
    expect(ftrace.opsList.length).toBe(0);
    kp.setArmed(false);
    kp.setArmed(true);
    kernel.clock.advance(20_000_000);
    expect(kp.listText()).toBe(enabled);

    kp.disable(pr.kp0);
    expect(noAddr(kp.listText()).split('\n').filter((l) => l.includes('vfs_read+0x4'))[0]).toBe('ADDR  k  vfs_read+0x4    [DISABLED][FTRACE]');
    for (const p of [pr.kp1, pr.kp9, pr.kp0, pr.kpo]) kp.unregister(p);
    kp.unregisterKretprobe(pr.kr1);
    kp.unregisterKretprobe(pr.kro);
    expect(kp.listText()).toBe('');
    expect(ftrace.opsList.length).toBe(0);
  });

  it('hits: aggregates newest first at the ftrace site, then int3 probes in the body, then the return', () => {
    const { kernel, task, kp, exec } = kernelOf(series);
    const log: string[] = [];
    const pr = oracleProbes(kp, log);
    for (const p of [pr.kp1, pr.kp9, pr.kr1.kp, pr.kp0]) kp.enable(p);
    exec.call(task, 'ksys_read', [], (x) => x.call('vfs_read'));
    expect(log).toEqual(['kp0', 'kp1', 'kp9', 'kr1']);
    expect(pr.kp1.nhit).toBe(1);
    expect(exec.corruptions).toBe(0);
    void kernel;
  });

  it('a kprobe hit while another kprobe handler runs is a miss', () => {
    const { task, kp, exec } = kernelOf(series);
    // An int3 probe inside dput (through ftrace, the recursion lock would drop the nested hit before kprobes sees it).
    let inner = new Kprobe({ symbol: 'dput', offset: 9 });
    for (let off = 9; off < 40; off++) {
      inner = new Kprobe({ symbol: 'dput', offset: off, pre: () => {} });
      try {
        kp.register(inner);
        break;
      } catch {
        /* not an instruction boundary */
      }
    }
    expect(inner.ftrace).toBe(false);
    const outer = new Kprobe({ symbol: 'vfs_read', pre: () => void exec.call(task, 'dput') });
    kp.register(outer);
    exec.call(task, 'vfs_read');
    expect(inner.nmissed).toBe(1);
    expect(inner.nhit).toBe(0);
    exec.call(task, 'dput');
    expect(inner.nhit).toBe(1);
    expect(exec.corruptions).toBe(0);
  });

  it('refuses what the kernel refuses', () => {
    const { kp } = kernelOf(series);
    expect(() => kp.register(new Kprobe({ symbol: 'no_such_function' }))).toThrow('ENOENT');
    expect(() => kp.register(new Kprobe({ symbol: 'vfs_read', offset: 1 }))).toThrow('EILSEQ');
    expect(() => kp.register(new Kprobe({}))).toThrow('EINVAL');
    const p = new Kprobe({ symbol: 'vfs_read' });
    kp.register(p);
    expect(() => kp.register(p)).toThrow('EINVAL');
    expect(() => kp.enable(new Kprobe({ symbol: 'vfs_read' }))).toThrow('EINVAL');
    kp.unregister(new Kprobe({ symbol: 'vfs_read' }));
    expect(kp.isRegistered(p)).toBe(true);
  });

  it('enabled_functions: the shared kprobe_ftrace_handler ops, R, one line per probed function', async () => {
    const { read, kernel, ftrace } = setup({ series });
    const kp = ftrace.kprobes;
    const size = `0x${kernel.symbols.lookupName('kprobe_ftrace_handler')!.size.toString(16)}`;
    kp.register(new Kprobe({ symbol: 'vfs_read' }));
    kp.registerKretprobe(new Kretprobe({ symbol: 'do_sys_openat2', handler: () => {} }));
    const ef = (await read('enabled_functions')).replace(/tramp: 0x[0-9a-f]+/g, 'tramp: T');
    expect(ef).toBe(
      `do_sys_openat2 (1) R         \ttramp: T (kprobe_ftrace_handler+0x0/${size}) ->kprobe_ftrace_handler+0x0/${size}\n` +
        `vfs_read (1) R         \ttramp: T (kprobe_ftrace_handler+0x0/${size}) ->kprobe_ftrace_handler+0x0/${size}\n`,
    );
  });

  it('debugfs kprobes/list and kprobes/enabled', async () => {
    const { ftrace, debugfs, root } = setup({ series });
    ftrace.kprobes.register(new Kprobe({ symbol: 'vfs_read' }));
    expect(await debugfs.readFile('kprobes/list', root)).toMatch(/^[0-9a-f]{16}  k  vfs_read\+0x4    \[FTRACE\]\n$/);
    expect(await debugfs.readFile('kprobes/enabled', root)).toBe('1\n');
    await echo(debugfs, 'kprobes/enabled', '0\n');
    expect(await debugfs.readFile('kprobes/enabled', root)).toBe('0\n');
    expect(ftrace.kprobes.armed).toBe(false);
    await echo(debugfs, 'kprobes/enabled', '1\n');
    expect(ftrace.kprobes.armed).toBe(true);
  });
});
