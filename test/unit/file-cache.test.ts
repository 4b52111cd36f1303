/**
 * Files the native FUSE side may answer by itself (src/fuse/file_cache.ts):
 * which files are cached, when an entry goes, and when the native side may
 * answer at all (nothing can see a request on the mount run).
 */
import { describe, expect, it } from 'vitest';
import { FileCache, type FileCacheSink, NativeGate } from '../../src/fuse/file_cache.js';
import type { Emulator } from '../../src/index.js';
import { File } from '../../src/tracefs/node.js';
import { testEmulator } from '../helpers/emulator.js';
import { kernelEmu } from '../helpers/kernel.js';

class Sink implements FileCacheSink {
  readonly files = new Map<number, string>();
  readonly groups = new Map<number, number>();
  /** Opens the native side would hold, by group. */
  readonly open = new Map<number, number>();
  gate = NativeGate.None;
  /** The pid the native side would let open per CPU under NativeGate.Current. */
  readonly current = new Map<number, number>();
  /** Every open answered natively (NativeGate.All). */
  get unobserved(): boolean {
    return this.gate === NativeGate.All;
  }
  cacheFile(id: number, text: Buffer, _attr: unknown, group: number): void {
    this.files.set(id, text.toString());
    this.groups.set(id, group);
  }
  openCount(group: number): number {
    return this.open.get(group) ?? 0;
  }
  uncache(id: number): void {
    this.files.delete(id);
  }
  setGate(gate: NativeGate): void {
    this.gate = gate;
  }
  setCurrent(cpu: number, pid: number): void {
    this.current.set(cpu, pid);
  }
}

function fileAt(emu: Emulator, path: string): File {
  const n = emu.fs.nodeAt(path);
  if (!(n instanceof File)) throw new Error(`no file ${path}`);
  return n;
}

async function write(emu: Emulator, path: string, text: string, flags = 0o1001): Promise<void> {
  const h = await emu.fs.open(path, flags);
  try {
    await h.write(Buffer.from(text), 0);
  } finally {
    h.release();
  }
}

function setup(): { emu: Emulator; cache: FileCache; sink: Sink } {
  const emu = testEmulator();
  const cache = new FileCache(emu.kernel, 0);
  const sink = new Sink();
  cache.sink = sink;
  return { emu, cache, sink };
}

const stat = () => ({ ino: 1, mode: 0o100640, uid: 0, gid: 0, nlink: 1, size: 0, atimeMs: 0, mtimeMs: 0, ctimeMs: 0 });

describe('native file cache', () => {
  it('caches what a built-in event trigger and filter file of the top level show by default', async () => {
    const { emu, cache, sink } = setup();
    const trig = 'events/sched/sched_switch/trigger';
    const h = await emu.fs.open(trig, 0);
    const shown = (await h.read(4096, 0)).toString();
    h.release();
    cache.known(1, fileAt(emu, trig), stat);
    cache.known(2, fileAt(emu, 'events/sched/sched_switch/filter'), stat);
    expect(sink.files.get(1)).toBe(shown);
    expect(shown).toMatch(/^# Available triggers:\n# traceon traceoff/);
    expect(sink.files.get(2)).toBe('none\n');
    // Files that change by themselves or whose opens count are not cached.
    cache.known(3, fileAt(emu, 'events/sched/sched_switch/enable'), stat);
    cache.known(4, fileAt(emu, 'trace'), stat);
    expect(sink.files.has(3) || sink.files.has(4)).toBe(false);
  });

  it('does not cache a probe event’s files', async () => {
    const { emu, cache, sink } = setup();
    await write(emu, 'kprobe_events', 'p:myprobe vfs_read\n', 0o2001);
    cache.known(2, fileAt(emu, 'events/kprobes/myprobe/trigger'), stat);
    cache.known(3, fileAt(emu, 'events/kprobes/myprobe/filter'), stat);
    expect(sink.files.size).toBe(0);
  });

  it('caches an instance’s files, whose native opens hold the instance as the kernel’s opens do', async () => {
    const { emu, cache, sink } = setup();
    emu.fs.mkdir('instances/foo');
    emu.fs.mkdir('instances/bar');
    cache.known(1, fileAt(emu, 'instances/foo/events/sched/sched_switch/trigger'), stat);
    cache.known(2, fileAt(emu, 'instances/foo/events/sched/sched_switch/filter'), stat);
    cache.known(3, fileAt(emu, 'instances/bar/events/sched/sched_switch/filter'), stat);
    cache.known(4, fileAt(emu, 'events/sched/sched_switch/filter'), stat);
    expect(sink.files.get(2)).toBe('none\n');
    const foo = sink.groups.get(1)!;
    expect(foo).toBeGreaterThan(0);
    expect(sink.groups.get(2)).toBe(foo);
    expect(sink.groups.get(3)).not.toBe(foo);
    expect(sink.groups.get(4)).toBe(0); // the top level is never removed
    sink.open.set(foo, 1);
    expect(() => emu.fs.rmdir('instances/foo')).toThrow(expect.objectContaining({ errno: 16 })); // EBUSY
    sink.open.set(foo, 0);
    emu.fs.rmdir('instances/foo');
    // Gone with its instance: the entries go before the native side answers again.
    cache.changed();
    cache.settle(true);
    expect([...sink.files.keys()].sort()).toEqual([3, 4]);
  });

  it('drops an entry once its file shows something else, before the native side answers again', async () => {
    const { emu, cache, sink } = setup();
    const trig = 'events/sched/sched_switch/trigger';
    const filt = 'events/sched/sched_switch/filter';
    cache.known(1, fileAt(emu, trig), stat);
    cache.known(2, fileAt(emu, filt), stat);
    cache.settle(true);
    expect(sink.unobserved).toBe(true);
    await write(emu, filt, 'prev_pid == 1\n');
    // Nothing is checked before the request that changed it settles.
    expect(sink.files.size).toBe(2);
    cache.changed();
    cache.settle(true);
    expect([...sink.files.keys()]).toEqual([1]);
    cache.known(2, fileAt(emu, filt), stat);
    expect(sink.files.has(2)).toBe(false);
    // A trigger holds the event in soft mode: the scheduler observes, only running tasks' opens are answered natively,
    // and the trigger file, which shows the trigger now, is not among the answers.
    await write(emu, trig, 'traceoff\n');
    cache.changed();
    cache.settle(true);
    expect(sink.gate).toBe(NativeGate.Current);
    expect([...sink.files.keys()]).toEqual([]);
    await write(emu, filt, '0\n');
    cache.changed();
    cache.settle(true);
    expect(sink.gate).toBe(NativeGate.Current);
    await write(emu, trig, '!traceoff\n');
    cache.changed();
    cache.settle(true);
    expect(sink.unobserved).toBe(true);
    // Cached again once looked up.
    cache.known(1, fileAt(emu, trig), stat);
    cache.known(2, fileAt(emu, filt), stat);
    expect([...sink.files.keys()].sort()).toEqual([1, 2]);
    cache.drop(1);
    expect([...sink.files.keys()]).toEqual([2]);
  });

  it('checks its entries once after a burst of changes, answering nothing meanwhile', async () => {
    const emu = testEmulator();
    const cache = new FileCache(emu.kernel, 20);
    const sink = new Sink();
    cache.sink = sink;
    const filt = 'events/sched/sched_switch/filter';
    cache.known(1, fileAt(emu, filt), stat);
    cache.changed();
    cache.settle(true); // the first check is at once
    expect(sink.unobserved).toBe(true);
    await write(emu, filt, 'prev_pid == 1\n');
    cache.changed();
    cache.settle(true); // within the interval: put off, and nothing answered meanwhile
    expect(sink.unobserved).toBe(false);
    expect(sink.files.has(1)).toBe(true);
    await new Promise((r) => setTimeout(r, 40));
    expect(sink.unobserved).toBe(true);
    expect(sink.files.has(1)).toBe(false);
  });

  it('answers natively while a probe elsewhere cannot see the cached files’ opens and reads run', async () => {
    const emu = testEmulator({ callPaths: true });
    const cache = new FileCache(emu.kernel, 0);
    const sink = new Sink();
    cache.sink = sink;
    cache.known(1, fileAt(emu, 'events/sched/sched_switch/trigger'), stat);
    cache.known(2, fileAt(emu, 'events/sched/sched_switch/filter'), stat);
    const answers = async (probe: string): Promise<boolean> => {
      await write(emu, 'kprobe_events', `p:p1 ${probe}\n`);
      await write(emu, 'events/kprobes/p1/enable', '1\n');
      cache.settle(true);
      const on = sink.unobserved;
      await write(emu, 'events/kprobes/p1/enable', '0\n');
      await write(emu, 'kprobe_events', '\n');
      return on;
    };
    expect(await answers('tracefs_create_dir')).toBe(true); // mkdir's, not an open's
    expect(await answers('do_sys_openat2')).toBe(false); // the open's system call
    expect(await answers('seq_read')).toBe(false); // the trigger file's own read
    expect(await answers('vfs_read')).toBe(false);
    expect(await answers('filp_flush')).toBe(false); // the close's
    cache.settle(true);
    expect(sink.unobserved).toBe(true);
  });

  it('lets the native side answer only while nothing can see a request run and nothing waits', async () => {
    const { emu, cache, sink } = setup();
    cache.settle(true);
    expect(sink.unobserved).toBe(true);
    cache.settle(false);
    expect(sink.unobserved).toBe(false);
    cache.settle(true);
    await write(emu, 'events/sched/sched_switch/enable', '1\n');
    cache.settle(true);
    expect(sink.unobserved).toBe(false);
    await write(emu, 'events/sched/sched_switch/enable', '0\n');
    cache.settle(true);
    expect(sink.unobserved).toBe(true);
    // Process events see no request run (a hist on forks, as trigger-hist.tc has): the native side answers.
    await write(emu, 'events/sched/sched_process_fork/trigger', 'hist:keys=parent_pid\n');
    await write(emu, 'events/sched/sched_process_exec/enable', '1\n');
    cache.settle(true);
    expect(sink.unobserved).toBe(true);
    await write(emu, 'events/sched/sched_waking/enable', '1\n');
    cache.settle(true);
    expect(sink.unobserved).toBe(false);
    await write(emu, 'events/sched/sched_waking/enable', '0\n');
    await write(emu, 'events/sched/sched_process_exec/enable', '0\n');
    await write(emu, 'events/sched/sched_process_fork/trigger', '!hist:keys=parent_pid\n');
    await write(emu, 'events/raw_syscalls/sys_enter/enable', '1\n');
    cache.settle(true);
    expect(sink.unobserved).toBe(false);
    await write(emu, 'events/raw_syscalls/sys_enter/enable', '0\n');
    await write(emu, 'set_ftrace_filter', 'vfs_read\n');
    await write(emu, 'current_tracer', 'function\n');
    cache.settle(true);
    expect(sink.unobserved).toBe(false);
    await write(emu, 'current_tracer', 'nop\n');
    cache.settle(true);
    expect(sink.unobserved).toBe(true);
    const done = cache.hold();
    expect(sink.unobserved).toBe(false);
    cache.settle(true);
    expect(sink.unobserved).toBe(false);
    done();
    cache.settle(true);
    expect(sink.unobserved).toBe(true);
  });
  it('while only the scheduler can see requests, lets a watched process already running on its CPU open natively', async () => {
    const { emu, k, proc, host } = (() => {
      const e = kernelEmu({ cpus: 2 });
      return { ...e, emu: e as unknown as Emulator };
    })();
    const cache = new FileCache(k, 0);
    const sink = new Sink();
    cache.sink = sink;
    cache.known(1, fileAt(emu, 'events/sched/sched_switch/trigger'), stat);
    proc.set({ pid: 700, comm: 'sh', ppid: 1, startTime: 5, cpu: 0 });
    proc.set({ pid: 701, comm: 'grep', ppid: 1, startTime: 5, cpu: 0 });
    const sh = host.mirror.taskOf(700);
    host.mirror.watch(sh);
    const other = host.mirror.taskOf(701); // not watched: its activity is not followed between its calls
    await write(emu, 'events/sched/sched_switch/trigger', 'hist:keys=next_pid\n');
    cache.settle(true);
    expect(sink.gate).toBe(NativeGate.Current);
    k.sched.ensureRunning(sh);
    expect(sink.current.get(sh.cpu)).toBe(700);
    // Switched out: its opens go to JS again, which switches it back in.
    k.sched.ensureRunning(other);
    expect(other.cpu).toBe(sh.cpu);
    expect(sink.current.get(sh.cpu)).toBe(0);
    k.sched.ensureRunning(sh);
    expect(sink.current.get(sh.cpu)).toBe(700);
    // Anything more than the scheduler: every open goes to JS.
    await write(emu, 'events/syscalls/sys_enter_openat/enable', '1\n');
    cache.settle(true);
    expect(sink.gate).toBe(NativeGate.None);
    await write(emu, 'events/syscalls/sys_enter_openat/enable', '0\n');
    await write(emu, 'kprobe_events', 'p:p1 do_sys_openat2\n');
    await write(emu, 'events/kprobes/p1/enable', '1\n');
    cache.settle(true);
    expect(sink.gate).toBe(NativeGate.None);
    await write(emu, 'events/kprobes/p1/enable', '0\n');
    cache.settle(true);
    expect(sink.gate).toBe(NativeGate.Current);
    await write(emu, 'events/sched/sched_switch/trigger', '!hist:keys=next_pid\n');
    cache.settle(true);
    expect(sink.gate).toBe(NativeGate.All);
    // A task that exits leaves its CPU: its pid may come back as another process's.
    host.mirror.onExit(700, 0);
    expect(sink.current.get(sh.cpu)).toBe(0);
  });
});
