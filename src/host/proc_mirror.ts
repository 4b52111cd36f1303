/**
 * Real processes mirrored as tasks, and their lives inferred: a process seen
 * for the first time was forked by its parent (mirrored too if needed) —
 * unless it is older than the emulator, when it simply exists; a changed
 * comm means it exec'd; a process gone from /proc (or whose pid now belongs
 * to a younger process) exited. Process events from the kernel's proc
 * connector (cn_proc.ts), when available, report the same lives as they
 * happen, for processes that never touch the mount too.
 */
import type { Kernel } from '../kernel/kernel.js';
import type { Task } from '../kernel/task.js';
import { isNativeHelper } from './native_helper.js';
import type { ProcInfo, ProcSource } from './proc_source.js';

/** What the mirror knows of a process besides its task. */
interface Mirrored {
  /** Its start time (clock ticks since the machine booted): tells a reused pid apart. */
  readonly startTime: number;
  /** The working directory last seen: a change means the process called chdir() meanwhile. */
  cwd?: string;
  /** An exec inferred from a changed comm that a later exec notification must not repeat. */
  execInferred: boolean;
  /**
   * Its execs as the proc connector reported them and as the watcher traced
   * them (an execve() that returned 0): whichever comes first runs the exec,
   * so calls traced after it follow it however late the other report is.
   */
  execs?: { reported: number; traced: number };
  /** Mirrored (its fork run) from a call it made before the proc connector's line for its fork was read. */
  bornUnseen?: boolean;
}

/** Who told of a fork: a watched process's tracer (the watcher's `N` line) or the proc connector. */
type ForkTeller = 'tracer' | 'connector';

/** task->prio from /proc/PID/stat's priority field (prio - 100). */
function prioOf(priority: number | undefined): number | undefined {
  return priority !== undefined && priority >= -100 && priority < 40 ? priority + 100 : undefined;
}

/** How far up the parent chain a new process's ancestors are mirrored. */
const MAX_ANCESTORS = 16;

/** How many exited processes are remembered for their late requests (see `dead`). */
const MAX_DEAD = 256;

/** How many forks told by one teller wait for the other's line (see `forkTold`). */
const MAX_FORKS_TOLD = 1024;

export class ProcessMirror {
  private initNamed = false;
  /** The process whose request or watched call is being mapped (its lives are the emulator's business). */
  private using?: number;
  /** Paths execve() was given, by caller, reported before the call ran (the watcher): the exec that follows ran that name. */
  private readonly execNames = new Map<number, string>();
  /** The call each traced thread is forking by (the watcher's `B` lines), until its fork is reported. */
  private readonly forkCalls = new Map<number, number>();
  /**
   * A watched process's fork is told twice, by its tracer and by the proc
   * connector, in either order (each writes the events FIFO on its own):
   * the child's pid, by who told of it first, until the other's line for it
   * is read. By then the child may have run, exec'd, exited and been reaped.
   */
  private readonly forkTold = new Map<number, ForkTeller>();
  /** The tasks this mirror made, and what it knows of their processes. */
  private readonly mirrored = new WeakMap<Task, Mirrored>();
  /**
   * Processes that exited, by pid, until the pid is reused: a request of
   * theirs served after their exit was read (sent while they were dying) is
   * theirs, never a new process's — a zombie is never switched in again.
   */
  private readonly dead = new Map<number, Task>();
  /**
   * Processes whose exit line was read but not handled yet, by pid (how many
   * such lines): they are gone, so the lines before it are handled without
   * reading /proc for them — what it would say is that they are gone, or,
   * once their pid is reused, another process's state.
   */
  private readonly exiting = new Map<number, number>();

  constructor(
    private readonly k: Kernel,
    private readonly src: ProcSource,
  ) {
    // A mirrored process runs where its host process may (/proc/PID/status Cpus_allowed_list).
    if (src.allowedCpus) k.sched.affinity = (t) => (this.mirrored.has(t) ? src.allowedCpus!(t.pid) : undefined);
  }

  /** The exits among the lines read next (each reaches onExit() in its turn). */
  exitsAhead(pids: Iterable<number>): void {
    for (const pid of pids) this.exiting.set(pid, (this.exiting.get(pid) ?? 0) + 1);
  }

  /** One exit line of `pid` handled (or dropped): lines after it are of whatever has the pid now. */
  private exitHandled(pid: number): void {
    const n = this.exiting.get(pid);
    if (n === undefined) return;
    if (n > 1) this.exiting.set(pid, n - 1);
    else this.exiting.delete(pid);
  }

  /** All lines read were handled: no exit is ahead any more (one whose line failed to handle included). */
  linesHandled(): void {
    this.exiting.clear();
  }

  private stat(pid: number): ProcInfo | undefined {
    return this.exiting.has(pid) ? undefined : this.src.stat(pid);
  }

  private exe(pid: number): string | undefined {
    return this.exiting.has(pid) ? undefined : this.src.exe(pid);
  }

  private comm(pid: number, startTime: number): string | undefined {
    return this.exiting.has(pid) ? undefined : this.src.comm(pid, startTime);
  }

  private cwd(pid: number): string | undefined {
    return this.exiting.has(pid) ? undefined : this.src.cwd(pid);
  }

  /**
   * The task of a calling process, its birth, exec or a predecessor's death
   * inferred on the way. `comm`: what the caller was called when it made the
   * call, and `ppid` its parent then, for a process gone from /proc before
   * its mirror was made. `using`: the process is using the emulator (a
   * request on the mount, a watched call): its lives run their call trees.
   */
  taskOf(pid: number, comm = '<...>', ppid = 0, using = false): Task {
    this.using = using ? pid : undefined;
    const t = this.find(pid, comm, ppid);
    this.using = undefined;
    if (using) this.k.procs.quiet(t, false);
    return t;
  }

  private find(pid: number, comm: string, ppid: number): Task {
    const known = this.k.tasks.process(pid);
    const m = known && this.mirrored.get(known);
    // A task someone else made (a test): not a mirror.
    if (known && !m) return known;
    if (known && m && !known.exited) {
      // The common case, a known process calling again: its comm tells whether it exec'd meanwhile — the
      // watcher's (read while the call waited: right even for a process gone since), else its /proc comm.
      const now = comm !== '<...>' ? comm : this.comm(pid, m.startTime);
      if (now === known.comm) {
        this.follow(known, m);
        return known;
      }
      if (comm !== '<...>') {
        this.execInferred(known, m, comm);
        return known;
      }
    }
    const info = this.stat(pid);
    if (known && m && !known.exited && (!info || info.startTime === m.startTime)) {
      if (info) this.refresh(known, m, info);
      return known;
    }
    if (known) this.exited(known);
    const dead = this.dead.get(pid);
    if (dead && (!info || info.startTime === this.mirrored.get(dead)?.startTime)) return dead;
    if (info) return this.born(info);
    // Gone already, its fork not reported yet (the proc connector's line comes later): born of the parent the watcher saw.
    if (!known && ppid > 0 && comm !== '<...>') return this.born({ pid, tgid: pid, comm, ppid, cpu: this.k.tasks.get(ppid)?.cpu ?? 0, startTime: Number.MAX_SAFE_INTEGER });
    return this.adopt({ pid, tgid: pid, comm, ppid: 1, cpu: 0, startTime: 0 }, false);
  }

  /**
   * A process that calls while it runs nowhere in the emulator runs where
   * the host runs it now, or where the scheduler would place it among the
   * CPUs its affinity allows (Sched.selectCpu): busy processes are not made
   * to take turns on one emulated CPU at every call (each turn a context
   * switch the trace would show, and a tool reading its own trace would
   * read its own turns forever). Read only when a switch is due anyway and
   * someone can see it.
   */
  private follow(t: Task, m: Mirrored): void {
    const k = this.k;
    if (this.using !== t.pid || !k.observed()) return;
    for (const c of k.cpus) if (c.curr === t) return;
    const info = this.stat(t.pid);
    if (!info || info.startTime !== m.startTime) return;
    k.sched.migrate(t, info.cpu);
    let allowed: readonly number[] | undefined;
    k.sched.selectCpu(t, (cpu) => (allowed ??= k.sched.affinity(t) ?? []).includes(cpu));
  }

  /**
   * The directory the process moved to since its last call on the mount, if
   * it moved: its chdir() happened in between (FUSE sees no request for it).
   */
  cwdChange(t: Task): string | undefined {
    const m = this.mirrored.get(t);
    // A watched process's chdir() was reported when it made it (and reading its cwd on every call costs).
    if (!m || t.kthread || t.callsReported) return undefined;
    const cwd = this.cwd(t.pid);
    if (cwd === undefined) return undefined;
    const before = m.cwd;
    m.cwd = cwd;
    return before !== undefined && before !== cwd ? cwd : undefined;
  }

  /** The process of `t` reports its system calls outside the mount (the watcher runs it), and so will its children. */
  watch(t: Task): void {
    const m = this.mirrored.get(t);
    if (m) {
      t.callsReported = true;
      m.execs ??= { reported: 0, traced: 0 };
    }
    this.k.procs.quiet(t, false);
  }

  /** Whether `t` mirrors a process whose system calls are reported (see watch()). */
  watched(t: Task): boolean {
    return this.mirrored.has(t) && t.callsReported;
  }

  /** A watched execve() about to run (and most likely succeed): the exec reported or inferred next is of this path. */
  execCalled(pid: number, path: string): void {
    this.execNames.set(pid, path);
  }

  /** The filename of an exec of `pid`: the path execve() was given when it was seen, else what /proc or the connector said. */
  private execPath(pid: number, fallback: string): string {
    const name = this.execNames.get(pid);
    this.execNames.delete(pid);
    return name ?? fallback;
  }

  /**
   * The task's scheduling class as the process has it now (sched_setscheduler()
   * and nice are system calls the emulator does not see): read again where it
   * may have changed — an exec (chrt execs its command), a wake-up.
   */
  refreshSched(t: Task): void {
    if (this.mirrored.has(t)) this.schedFrom(t, this.stat(t.pid));
  }

  private schedFrom(t: Task, info: ProcInfo | undefined): void {
    if (!info) return;
    const prio = prioOf(info.priority);
    if (prio !== undefined) t.prio = prio;
    t.policy = info.policy ?? 0;
  }

  /** A comm that changed since last seen: the process exec'd. */
  private refresh(t: Task, m: Mirrored, info: ProcInfo): void {
    this.k.sched.migrate(t, info.cpu);
    if (info.comm !== t.comm) this.execInferred(t, m, info.comm);
  }

  /** The process is called `comm` now: it exec'd (the exec notification, if one comes, is not repeated). */
  private execInferred(t: Task, m: Mirrored, comm: string): void {
    m.execInferred = true;
    this.execs(t, this.execPath(t.pid, this.exe(t.pid) ?? `/usr/bin/${comm}`), comm);
  }

  /**
   * The task runs `filename` now, on the CPU the process is on: a program
   * that chose its CPU before exec'ing the next (taskset) has it moved there.
   */
  private execs(t: Task, filename: string, comm: string): void {
    const m = this.mirrored.get(t);
    const info = m ? this.stat(t.pid) : undefined;
    this.schedFrom(t, info);
    this.k.procs.exec(t, filename, comm);
    if (info && info.startTime === m?.startTime) this.k.sched.migrate(t, info.cpu);
  }

  /** A process seen for the first time. */
  private born(info: ProcInfo): Task {
    if (info.startTime < this.src.bootTicks) return this.adopt(info, false);
    const parent = this.ensure(info.ppid, 0);
    const child = this.adopt({ ...info, comm: parent?.comm ?? info.comm }, true, parent);
    this.mirrored.get(child)!.bornUnseen = true;
    if (parent) this.k.procs.fork(parent, child, this.forkCall(info.ppid));
    if (child.comm !== info.comm) {
      this.mirrored.get(child)!.execInferred = true;
      this.k.procs.exec(child, this.execPath(info.pid, this.exe(info.pid) ?? `/usr/bin/${info.comm}`), info.comm);
    }
    return child;
  }

  /** An ancestor mirrored as it is now, without inferring its own birth. */
  private ensure(pid: number, depth: number): Task | undefined {
    if (pid <= 0) return undefined;
    const known = this.k.tasks.get(pid);
    if (known && !known.exited) {
      // The built-in init stands for the machine's pid 1: it goes by its name.
      if (pid === 1 && known.origin === 'kernel' && !this.initNamed) {
        this.initNamed = true;
        const info = this.stat(1);
        if (info) known.comm = info.comm;
      }
      return known;
    }
    const info = this.stat(pid);
    if (!info) return this.k.tasks.get(1);
    if (depth < MAX_ANCESTORS) this.ensure(info.ppid, depth + 1);
    return this.adopt(info, false);
  }

  /** Adds a mirror of a process (leaves its birth to the caller). */
  private adopt(info: ProcInfo, fresh: boolean, parent?: Task): Task {
    const { pid, tgid, comm, ppid, cpu, priority } = info;
    this.dead.delete(pid);
    const prio = prioOf(priority);
    const leader = tgid !== pid ? this.k.tasks.process(tgid) : undefined;
    const t = this.k.procs.adopt({ pid, tgid, comm, ppid, cpu, prio, state: fresh ? 'R' : 'S' }, leader ?? (fresh && parent && tgid === parent.tgid ? parent : undefined));
    t.policy = info.policy ?? 0;
    // A watched process's children are watched too (the seccomp filter is inherited).
    const watched = fresh && parent ? this.watched(parent) : false;
    this.mirrored.set(t, { startTime: info.startTime, execInferred: false, execs: watched ? { reported: 0, traced: 0 } : undefined });
    t.callsReported = watched;
    // The machine's other processes are followed, their lives' events fired, but their call trees are not run:
    // under a tracer on every function each would cost thousands of calls, and the machine spawns them faster.
    if (!watched && this.using !== pid) this.k.procs.quiet(t);
    return t;
  }

  /**
   * Whether a live task known by the pid a fork just gave out is another
   * process than the one forked: one whose exit went unreported (the proc
   * connector drops events when its socket overflows) and whose pid was
   * reused since. Otherwise it is the new process itself, mirrored from a
   * call it made before this fork line was read.
   */
  private staleAtFork(known: Task, pid: number): boolean {
    const m = this.mirrored.get(known);
    if (!m) return false;
    const info = this.stat(pid);
    const same = info ? info.startTime === m.startTime : m.bornUnseen === true;
    if (same) m.bornUnseen = false;
    return !same;
  }

  /** A mirrored process found gone: it exited, and its parent reaped it. */
  private exited(t: Task, code = 0): void {
    this.remember(t);
    if (t.exited) {
      this.k.tasks.delete(t.pid);
      return;
    }
    this.k.procs.exit(t, code);
    this.k.procs.reap(t.pid === t.tgid ? this.k.tasks.get(t.ppid) : undefined, t);
  }

  private remember(t: Task): void {
    this.dead.delete(t.pid);
    this.dead.set(t.pid, t);
    if (this.dead.size > MAX_DEAD) this.dead.delete(this.dead.keys().next().value!);
  }

  /** Checks every mirrored process still exists (called periodically). */
  checkExits(): void {
    for (const t of [...this.k.tasks.all()]) {
      const m = this.mirrored.get(t);
      if (!m) continue;
      const info = this.stat(t.pid);
      if (!info || info.startTime !== m.startTime) this.exited(t);
    }
  }

  // --- process events, as the proc connector reports them

  /** A watched thread entered a call that forks (clone, clone3, fork, vfork): its next fork is made by it. */
  forkCalled(pid: number, nr: number): void {
    this.forkCalls.set(pid, nr);
  }

  /** The call a parent's fork is made by (clone when no `B` line named one), forgotten once used. */
  private forkCall(ppid: number): number | undefined {
    const nr = this.forkCalls.get(ppid);
    this.forkCalls.delete(ppid);
    return nr;
  }

  onFork(ppid: number, pid: number, tgid: number, cpu?: number): void {
    this.forked(ppid, pid, tgid, cpu, 'connector');
  }

  /**
   * A watched process forked, seen by its tracer while the parent waits: the
   * fork runs now, before anything the parent does next, unless the proc
   * connector's line for it was read first.
   */
  forkTraced(ppid: number, pid: number): void {
    this.forked(ppid, pid, pid, undefined, 'tracer');
  }

  private forked(ppid: number, pid: number, tgid: number, cpu: number | undefined, teller: ForkTeller): void {
    if (this.otherToldFork(pid, teller)) return;
    const known = this.k.tasks.process(pid);
    if (known && !known.exited && !this.staleAtFork(known, pid)) {
      // Mirrored already from a call it made: that ran its fork.
      this.toldFork(pid, tgid, teller, this.watched(known));
      return;
    }
    if (known) this.exited(known);
    const parent = this.ensure(ppid, 0) ?? this.k.tasks.get(1);
    // The host's kernel threads (kthreadd's children) are its own: the emulated kernel has its kthreads.
    if (parent?.kthread) return;
    this.toldFork(pid, tgid, teller, parent !== undefined && this.watched(parent));
    const info: ProcInfo = this.stat(pid) ?? { pid, tgid, comm: parent?.comm ?? '<...>', ppid, cpu: cpu ?? parent?.cpu ?? 0, startTime: 0 };
    const child = this.adopt({ ...info, pid, tgid, ppid: tgid === pid ? ppid : (parent?.ppid ?? ppid), comm: parent?.comm ?? info.comm, cpu: cpu ?? info.cpu }, true, parent);
    if (parent) this.k.procs.fork(parent, child, this.forkCall(ppid));
  }

  /** Whether the fork of `pid` was run already, when the other teller's line for it was read (that line is forgotten). */
  private otherToldFork(pid: number, teller: ForkTeller): boolean {
    const first = this.forkTold.get(pid);
    if (first === undefined || first === teller) return false;
    this.forkTold.delete(pid);
    return true;
  }

  /** Remembers who told of a fork the other teller will tell of too: a new process (not a thread) of a watched one. */
  private toldFork(pid: number, tgid: number, teller: ForkTeller, watched: boolean): void {
    if (teller === 'connector' && (tgid !== pid || !watched)) return;
    this.forkTold.delete(pid);
    this.forkTold.set(pid, teller);
    if (this.forkTold.size > MAX_FORKS_TOLD) this.forkTold.delete(this.forkTold.keys().next().value!);
  }

  /** A traced call of a watched process: the execs before it all happened, however they were reported. */
  traced(t: Task): void {
    const e = this.mirrored.get(t)?.execs;
    if (e && e.traced < e.reported) e.traced = e.reported;
  }

  /** A watched process's execve() returned 0: it runs `comm` now, unless the proc connector reported that exec first. */
  execTraced(t: Task, comm: string): void {
    const m = this.mirrored.get(t);
    if (!m) return;
    const e = (m.execs ??= { reported: 0, traced: 0 });
    if (++e.traced <= e.reported || m.execInferred) return;
    // This exec runs now: the execve() the watcher reported before it names it.
    this.execs(t, this.execPath(t.pid, this.exe(t.pid) ?? `/usr/bin/${comm}`), comm);
  }

  onExec(pid: number, reported: string, exe?: string): void {
    // The emulator's own helper starting (the watcher `exec` runs a command through): no exec of the machine's.
    if (isNativeHelper(exe ?? this.exe(pid) ?? '')) return;
    const t = this.k.tasks.process(pid) ?? this.taskOf(pid);
    const m = this.mirrored.get(t);
    if (m?.execs && ++m.execs.reported <= m.execs.traced) {
      // The watcher's traced execve() ran it already.
      this.execNames.delete(pid);
      return;
    }
    const filename = this.execPath(pid, exe ?? this.exe(pid) ?? '');
    // A process gone before its comm could be read: the kernel named it after the file it ran.
    const comm = reported || (filename.split('/').pop() ?? '') || t.comm;
    const inferred = m?.execInferred ?? false;
    if (m) m.execInferred = false;
    if (inferred && t.comm === comm) return;
    this.execs(t, filename || `/usr/bin/${comm}`, comm);
  }

  onComm(pid: number, comm: string): void {
    const t = this.k.tasks.process(pid);
    if (t) t.comm = comm;
  }

  /**
   * A watched parent's wait4() returned `pid`: that child exited and was
   * reaped before the call returned, whether or not the proc connector has
   * said so yet (its exit line may come after the parent's next calls).
   */
  waited(pid: number): void {
    const t = this.k.tasks.process(pid);
    if (!t || t.exited || !this.mirrored.has(t)) return;
    this.exited(t);
  }

  onExit(pid: number, code: number): void {
    this.exitHandled(pid);
    // an execve() seen that did not happen after all
    this.execNames.delete(pid);
    const t = this.k.tasks.process(pid);
    if (!t || t.exited || !this.mirrored.has(t)) return;
    this.exited(t, code);
  }
}
