/**
 * Files the native session answers by itself (native/fuse/tracefs_fuse.c).
 * A file whose node can say what it shows while it stays as it is
 * (FileOps.snapshot) is cached once the kernel looked it up; then, while nothing
 * in the emulated kernel can see a request on the mount run, its read-only
 * opens, reads, fstat and release never reach JS — ftracetest reads every
 * event's trigger and filter file before each test, thousands of files
 * that almost always show their defaults. An entry goes as soon as its file
 * may show something else (checked before the native side may answer
 * again after anything that can change state), when its attributes change,
 * and when the kernel forgets its node id.
 */
import type { Kernel } from '../kernel/kernel.js';
import type { Cpu } from '../kernel/cpu.js';
import type { Task } from '../kernel/task.js';
import type { File, FileSnapshot, OpenHold } from '../tracefs/node.js';
import type { Stat } from '../tracefs/tracefs.js';

/** What the native side is told. */
export interface FileCacheSink {
  /** The file with node id `id` shows `text`, with attributes `attr`, until uncached; its opens count in `group` (0: none). */
  cacheFile(id: number, text: Buffer, attr: Stat, group: number): void;
  uncache(id: number): void;
  /** Files of `group` the native side holds open now. */
  openCount(group: number): number;
  /** Which opens of cached files the native side may answer now. */
  setGate(gate: NativeGate): void;
  /** The task running on emulated CPU `cpu` is process `pid` (0: none whose opens NativeGate.Current lets through). */
  setCurrent(cpu: number, pid: number): void;
}

/** Which read-only opens of cached files the native side answers. */
export const enum NativeGate {
  None = 0,
  /** Every one: nothing in the emulated kernel can see a request on the mount run. */
  All = 1,
  /**
   * Those of a watched process whose task runs on its CPU now: only the
   * scheduler can see requests (sched_switch with a hist trigger, say), and
   * such a task's call switches nothing. (Its process is watched: the host
   * scheduler's look at it tells that it is busy, as a call would.)
   */
  Current = 2,
}

/**
 * How often, at most, changes make every entry be checked: within a burst of
 * writes (remotes/reset.tc writes write_event 10,000 times, with thousands of
 * entries cached) the native side waits for the check that follows it.
 */
const CHECK_INTERVAL_MS = 5;

export class FileCache {
  private readonly cached = new Map<number, FileSnapshot>();
  /** Something may have changed what a cached file shows since the last check. */
  private dirty = false;
  private gate = NativeGate.None;
  /** The gate who can see the cached kinds' calls allows, and the generations it was found at. */
  private visibility = { hooks: -1, probes: -1, kinds: -1, gate: NativeGate.None };
  /** Work outside FUSE requests that may change state (control commands) under way. */
  private busy = 0;
  /** When the entries were last checked, and the check put off until the burst ends. */
  private checkedAt = -Infinity;
  private checkLater?: NodeJS.Timeout;
  /** What the last settle was told: no request waits in JS. */
  private idle = false;
  /** One file of each kind cached (by name: the kernel gives files their operations by name), for what may see them run. */
  private readonly kinds = new Map<string, { path: string; node: File }>();
  /** The group each hold's opens count in on the native side (never reused: a removed instance's stays behind). */
  private readonly groups = new WeakMap<OpenHold, number>();
  private nextGroup = 1;
  private to?: FileCacheSink;
  /** Stops telling the sink which tasks run (see `sink`). */
  private unfollow: (() => void)[] = [];

  constructor(
    private readonly kernel: Kernel,
    private readonly checkIntervalMs = CHECK_INTERVAL_MS,
  ) {}

  get sink(): FileCacheSink | undefined {
    return this.to;
  }

  /** Where cached files go; told from now on which task runs on each CPU (for NativeGate.Current). */
  set sink(to: FileCacheSink | undefined) {
    for (const stop of this.unfollow) stop();
    this.unfollow = [];
    this.to = to;
    if (!to) return;
    const tell = (c: Cpu): void => to.setCurrent(c.id, FileCache.currentPid(c.curr));
    for (const c of this.kernel.cpus) {
      tell(c);
      this.unfollow.push(c.onSwitch(tell));
    }
  }

  /** The pid NativeGate.Current lets open natively while `t` runs: a watched process's (0 for any other task). */
  private static currentPid(t: Task): number {
    return t.isIdle || t.kthread || t.exited || !t.callsReported ? 0 : t.pid;
  }

  /** The kernel looked `node` up, or JS opened it (id `id`): cache what it shows, if it can say. */
  known(id: number, node: File, stat: () => Stat): void {
    if (!this.sink || this.cached.has(id)) return;
    const snap = node.fops.snapshot?.();
    if (!snap) return;
    this.cached.set(id, snap);
    if (!this.kinds.has(node.name)) this.kinds.set(node.name, { path: node.path, node });
    this.sink.cacheFile(id, snap.text, stat(), snap.holds ? this.groupOf(snap.holds) : 0);
  }

  /** The native group of `hold`, which from then on counts the opens the native side answers for it. */
  private groupOf(hold: OpenHold): number {
    let g = this.groups.get(hold);
    if (g === undefined) {
      const group = (g = this.nextGroup++);
      this.groups.set(hold, group);
      const others = hold.lent;
      hold.lent = () => (others?.() ?? 0) + (this.sink?.openCount(group) ?? 0);
    }
    return g;
  }

  /** The file may show something else, or has other attributes, or its id is gone. */
  drop(id: number): void {
    if (this.cached.delete(id)) this.sink?.uncache(id);
  }

  /** State may have changed (a write, a release, a command...): checked before the native side answers again. */
  changed(): void {
    this.dirty = true;
  }

  /** Work that may change state begins outside a request: the native side stops answering until `done`. */
  hold(): () => void {
    this.busy++;
    this.changed();
    this.set(NativeGate.None);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.busy--;
    };
  }

  /**
   * After each request JS handled: the native side may answer while no
   * request waits in JS, no other work is under way, and nothing can see a
   * request on the mount run (process events may be on: what a cached file
   * shows never depends on them) — or only the scheduler can, and the
   * caller already runs on its CPU (NativeGate.Current).
   */
  settle(idle: boolean): void {
    this.idle = idle;
    const gate = this.gateNow(idle);
    if (gate !== NativeGate.None && this.dirty) {
      const wait = this.checkedAt + this.checkIntervalMs - performance.now();
      if (wait > 0) {
        this.set(NativeGate.None);
        this.checkLater ??= setTimeout(() => {
          this.checkLater = undefined;
          this.settle(this.idle);
        }, wait).unref();
        return;
      }
      this.dirty = false;
      this.checkedAt = performance.now();
      for (const [id, snap] of this.cached) if (!snap.valid()) this.drop(id);
    }
    this.set(gate);
  }

  private gateNow(idle: boolean): NativeGate {
    if (!idle || this.busy > 0) return NativeGate.None;
    // Asked after every request JS answers: known until a hook or a probe comes or goes, or a new kind of file is cached.
    const k = this.kernel;
    const v = this.visibility;
    if (v.hooks === k.hookGeneration && v.probes === k.tracepoints.generation && v.kinds === this.kinds.size) return v.gate;
    const seen = k.readsVisibility(this.kinds.values());
    const gate = seen === 'unseen' ? NativeGate.All : seen === 'scheduler' ? NativeGate.Current : NativeGate.None;
    this.visibility = { hooks: k.hookGeneration, probes: k.tracepoints.generation, kinds: this.kinds.size, gate };
    return gate;
  }

  /** Whether the kernel may keep a directory's listing from this opendir on: nothing can see a getdents64 run. */
  listingsCacheable(): boolean {
    return !!this.sink && !this.kernel.readdirsObserved();
  }

  private set(gate: NativeGate): void {
    if (gate === this.gate) return;
    this.gate = gate;
    this.to?.setGate(gate);
  }

  get size(): number {
    return this.cached.size;
  }
}
