/** `tracefs-emu stats`: what the kernel does not show about return hooks, through the control command. */
import { describe, expect, it } from 'vitest';
import { type ControlContext, handleControlRequest } from '../../src/daemon/control.js';
import '../../src/daemon/control_commands.js';
import type { MountedTracefs } from '../../src/fuse/mount.js';
import { RequestStats } from '../../src/fuse/request_stats.js';
import { Fprobe, registerFprobe } from '../../src/ftrace/fprobe.js';
import { formatHookStats, type HookStats } from '../../src/ftrace/hook_stats.js';
import { Kretprobe } from '../../src/ftrace/kretprobes.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { Task } from '../../src/kernel/task.js';
import { withStack } from '../helpers/ftrace-driver.js';
import { testEmulator } from '../helpers/emulator.js';

function ctx(series: Series): ControlContext {
  const emulator = testEmulator({ series });
  const mount: MountedTracefs = {
    mountpoint: '/x',
    fs: emulator.fs,
    openFiles: 0,
    knownNodes: 1,
    unmount: async () => {},
    ended: new Promise(() => {}),
    settled: async () => {},
    requests: new RequestStats(),
    cachedAnswers: () => ({}),
    hold: () => () => {},
  };
  return { emulator, mount, state: { mountpoint: '/x', pid: process.pid, series, cpus: 2, seed: 1, options: '', socket: '', daemon: false, startedAt: 'now' }, shutdown() {} };
}

describe.each(SERIES)('stats (%s)', (series) => {
  it('reports pools, stacks, hits and misses, and the functions hooked twice', async () => {
    const c = ctx(series);
    const { kernel, ftrace } = c.emulator;
    const exec = ftrace.exec;
    const fexit = new Fprobe({ exit: () => {}, name: 'fprobes/fexit' });
    registerFprobe(ftrace, fexit, 'vfs_read');
    const kret = new Kretprobe({ symbol: 'vfs_read', maxactive: 1, handler: () => {}, name: 'kprobes/kret' });
    ftrace.kprobes.registerKretprobe(kret);
    const a = withStack(kernel.tasks.add(new Task(900, 900, 'a', 1)));
    const b = withStack(kernel.tasks.add(new Task(901, 901, 'b', 1)));
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const pa = exec.call(a, 'ksys_read', [], (x) => x.call('vfs_read', [], () => gate.then(() => 1)));
    const pb = exec.call(b, 'ksys_read', [], (x) => x.call('vfs_read', [], () => gate.then(() => 1)));

    const r = (await handleControlRequest({ cmd: 'stats', args: {} }, c)) as { ok: true; result: HookStats };
    expect(r.ok).toBe(true);
    const s = r.result;
    expect(s.series).toBe(series);
    expect(s.kretprobes).toEqual([expect.objectContaining({ name: 'kprobes/kret', backend: 'rethook', hits: 2, missed: 1, maxactive: 1 })]);
    const fgraph = kernel.profile.fprobeBackend === 'fgraph';
    expect(s.fprobes).toEqual([expect.objectContaining({ name: 'fprobes/fexit', backend: kernel.profile.fprobeBackend, missed: 0 })]);
    expect(s.doubleHooked).toEqual([{ function: 'vfs_read', hooks: fgraph ? ['fgraph(fprobe_return)', 'rethook:kretprobe:kprobes/kret'] : ['rethook:kretprobe:kprobes/kret', 'rethook:fprobe:fprobes/fexit'] }]);
    if (fgraph) {
      expect(s.fgraph.users).toEqual(['0:fprobe_fgraph_entry/fprobe_return']);
      // Each task is inside vfs_read: one frame (4 longs), the fprobe header and the data meta word.
      expect(s.fgraph.perTask.map((t) => [t.comm, t.bytesInUse, t.depth])).toEqual([
        ['a', 48, 1],
        ['b', 48, 1],
      ]);
      expect(s.fgraph.bytesAllocated).toBe(s.fgraph.tasksWithStack * 4096);
      expect(s.rethook.pools.map((p) => [p.owner, p.allocated, p.inUse, p.missed])).toEqual([['kretprobe:kprobes/kret', 1, 1, 1]]);
    } else {
      expect(s.fgraph.tasksWithStack).toBe(0);
      // The fprobe's pool: 1 function x 2 CPUs x 2 nodes of 64 bytes.
      expect(s.rethook.pools.map((p) => [p.owner, p.allocated, p.inUse, p.missed, p.nodeSize]).sort()).toEqual([
        ['fprobe:fprobes/fexit', 4, 2, 0, 64],
        ['kretprobe:kprobes/kret', 1, 1, 1, 48],
      ]);
    }
    expect(formatHookStats(s)).toMatch(/vfs_read: /);
    open();
    await Promise.all([pa, pb]);
    const after = (await handleControlRequest({ cmd: 'stats', args: {} }, c)) as { ok: true; result: HookStats };
    // kret's one instance went to one of the two calls: that call was hooked twice.
    expect(after.result.rethook.stackedHooks).toBe(1);
    expect(exec.corruptions).toBe(0);
  });
});
