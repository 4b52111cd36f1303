/**
 * Real processes mirrored as tasks, and their lives inferred: a process seen
 * for the first time was forked by its parent (mirrored too if needed) —
 * unless it is older than the emulator, when it simply exists; a changed
 * comm means it exec'd; a process gone from /proc (or whose pid now belongs
 * to a younger process) exited. Process events from the kernel's proc
 * connector (cn_proc.ts), when available, report the same lives as they
 * happen, for processes that never touch the mount too.
 */
import { USER_IDLE_NS } from '../kernel/activity.js';
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
  /** When (kernel clock) its fork or last exec ran here: the watcher counts its sleep from there. */
  seenNs: number;
}

/** Who told of a fork or an exit: a watched process's tracer (the watcher's `N` and `D` lines) or the proc connector. */
type Teller = 'tracer' | 'connector';

/**
 * Whose lives the proc connector's lines make the mirror follow: every
 * process of the machine (as its kernel sees them), or only those the
 * emulator knows — run by `tracefs-emu exec` (and their children), or that
 * made a request on the mount — as if they had the machine to themselves
 * (the selftests' VM: two series run side by side see none of each other's).
 */
export const PROCESS_SCOPES = ['all', 'exec'] as const;
export type ProcessScope = (typeof PROCESS_SCOPES)[number];

export function isProcessScope(s: string): s is ProcessScope {
  return (PROCESS_SCOPES as readonly string[]).includes(s);
}

/** task->prio from /proc/PID/stat's priority field (prio - 100). */
function prioOf(priority: number | undefined): number | undefined {
  return priority !== undefined && priority >= -100 && priority < 40 ? priority + 100 : undefined;
}

/** How far up the parent chain a new process's ancestors are mirrored. */
const MAX_ANCESTORS = 16;

/** How many exited processes are remembered for their late requests (see `dead`). */
const MAX_DEAD = 256;

/** How many forks or exits told by one teller wait for the other's line (see `told`). */
const MAX_TOLD = 1024;

export class ProcessMirror {
  private initNamed = false;
  /** The process whose request or watched call is being mapped (its lives are the emulator's business). */
  private using?: number;
  /** Paths execve() was given, by caller, reported before the call ran (the watcher): the exec that follows ran that name. */
  private readonly execNames = new Map<number, string>();
  /** The call each traced thread is forking by (the watcher's `B` lines), until its fork is reported. */
  private readonly forkCalls = new Map<number, number>();
  /**
   * A watched process's fork and exit are told twice, by its tracer and by
   * the proc connector, in either order (each writes the events FIFO on its
   * own): the pid, by who told of it first, until the other's line for it
   * is read. By then a forked child may have run, exec'd, exited and been
   * reaped, and an exited one's pid be given to another process.
   */
  private readonly told = { fork: new Map<number, Teller>(), exit: new Map<number, Teller>() };
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
    private readonly scope: ProcessScope = 'all',
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

  private stat(pid: number, tgid?: number): ProcInfo | undefined {
    return this.exiting.has(pid) ? undefined : this.src.stat(pid, tgid);
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
  private execPath(pid: number, fallback: () => string): string {
    const name = this.execNames.get(pid);
    this.execNames.delete(pid);
    return name ?? fallback();
  }

  /**
   * The task's scheduling class as the process has it now (sched_setscheduler()
   * and nice are system calls the emulator does not see): read again where it
   * may have changed — an exec (chrt execs its command), a wake-up.
   */
  refreshSched(t: Task): void {
    if (this.mirrored.has(t)) this.schedFrom(t, this.stat(t.pid));
  }

  /** Its priority (as /proc shows it: prio - 100) and policy, as the watcher read them. */
  schedSaid(t: Task, priority: number, policy: number): void {
    if (this.mirrored.has(t)) this.schedFrom(t, { priority, policy });
  }

  private schedFrom(t: Task, info: Pick<ProcInfo, 'priority' | 'policy'> | undefined): void {
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
    this.execs(t, this.execPath(t.pid, () => this.exe(t.pid) ?? `/usr/bin/${comm}`), comm);
  }

  /**
   * The task runs `filename` now, on the CPU the process is on: a program
   * that chose its CPU before exec'ing the next (taskset) has it moved there.
   */
  private execs(t: Task, filename: string, comm: string): void {
    const m = this.mirrored.get(t);
    const info = m ? this.stat(t.pid) : undefined;
    this.schedFrom(t, info);
    this.hostAsleepFirst(t);
    this.k.procs.exec(t, filename, comm);
    if (m) m.seenNs = this.k.clock.now();
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
      this.schedFrom(child, info);
      this.k.procs.exec(child, this.execPath(info.pid, () => this.exe(info.pid) ?? `/usr/bin/${info.comm}`), info.comm);
      this.mirrored.get(child)!.seenNs = this.k.clock.now();
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
    // A new child schedules as its parent did (sched_fork()): what /proc says now may already be what it set
    // since (chrt, before it execs its command); it is read again at its exec and its wake-ups.
    const inherits = fresh && parent !== undefined && !parent.isIdle;
    const prio = inherits ? parent.prio : prioOf(priority);
    const leader = tgid !== pid ? this.k.tasks.process(tgid) : undefined;
    const t = this.k.procs.adopt({ pid, tgid, comm, ppid, cpu, prio, state: fresh ? 'R' : 'S' }, leader ?? (fresh && parent && tgid === parent.tgid ? parent : undefined));
    t.policy = inherits ? parent.policy : (info.policy ?? 0);
    // A watched process's children are watched too (the seccomp filter is inherited).
    const watched = fresh && parent ? this.watched(parent) : false;
    this.mirrored.set(t, { startTime: info.startTime, execInferred: false, execs: watched ? { reported: 0, traced: 0 } : undefined, seenNs: this.k.clock.now() });
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
    this.hostAsleepFirst(t);
    this.k.procs.exit(t, code);
    this.k.procs.reap(t.pid === t.tgid ? this.k.tasks.get(t.ppid) : undefined, t);
  }

  /**
   * Before `t` runs for something the host did (its exec, its exit): the
   * process the emulator runs on its CPU, if the host has it asleep (a shell
   * in wait4 for `t`), sleeps first, as it did there: it is not preempted,
   * it waits, and `t` is switched in from the idle task.
   */
  private hostAsleepFirst(t: Task): void {
    const k = this.k;
    if (!k.observed()) return;
    const curr = k.sched.cpuOf(t).curr;
    if (curr === t || curr.isIdle || curr.kthread || curr.exited || !this.watched(curr)) return;
    const state = this.stat(curr.pid)?.state;
    if (state === 'S' || state === 'D') k.sched.blocked(curr, state);
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
    if (this.scope === 'exec' && !this.watchedPid(ppid)) return;
    this.forked(ppid, pid, tgid, cpu, 'connector');
  }

  /**
   * A watched process forked, seen by its tracer while the parent waits: the
   * fork runs now, before anything the parent does next, unless the proc
   * connector's line for it was read first; an exec the parent made just
   * before, before it (`execFirst`).
   */
  forkTraced(ppid: number, pid: number, comm?: string): void {
    this.execFirst(ppid, comm);
    this.forked(ppid, pid, pid, undefined, 'tracer');
  }

  /**
   * A watched process stopped by its tracer, running `comm`: an execve() it
   * was reported making that has not run yet, which `comm` confirms (its
   * old name would mean the call failed — or a rename by prctl, which is no
   * exec), ran before the stop (its proc connector line may come later).
   */
  private execFirst(pid: number, comm: string | undefined): void {
    if (comm === undefined || !this.execNames.has(pid)) return;
    const t = this.k.tasks.process(pid);
    if (t && !t.exited && this.mirrored.has(t) && t.comm !== comm) this.execTraced(t, comm);
  }

  private forked(ppid: number, pid: number, tgid: number, cpu: number | undefined, teller: Teller): void {
    if (this.otherTold(this.told.fork, pid, teller)) return;
    const known = this.k.tasks.process(pid);
    if (known && !known.exited && !this.staleAtFork(known, pid)) {
      // Mirrored already from a call it made: that ran its fork.
      this.tell(this.told.fork, pid, teller, tgid === pid && this.watched(known));
      return;
    }
    if (known) this.exited(known);
    const parent = this.ensure(ppid, 0) ?? this.k.tasks.get(1);
    // The host's kernel threads (kthreadd's children) are its own: the emulated kernel has its kthreads.
    if (parent?.kthread) return;
    this.tell(this.told.fork, pid, teller, tgid === pid && parent !== undefined && this.watched(parent));
    // (Its thread group is the teller's word: /proc/PID/status need not be read for it.)
    const info: ProcInfo = this.stat(pid, tgid) ?? { pid, tgid, comm: parent?.comm ?? '<...>', ppid, cpu: cpu ?? parent?.cpu ?? 0, startTime: 0 };
    const child = this.adopt({ ...info, pid, tgid, ppid: tgid === pid ? ppid : (parent?.ppid ?? ppid), comm: parent?.comm ?? info.comm, cpu: cpu ?? info.cpu }, true, parent);
    if (parent) this.k.procs.fork(parent, child, this.forkCall(ppid));
  }

  /** Whether `pid`'s fork or exit (`about`) was run already, when the other teller's line for it was read (that line is forgotten). */
  private otherTold(about: Map<number, Teller>, pid: number, teller: Teller): boolean {
    const first = about.get(pid);
    if (first === undefined || first === teller) return false;
    about.delete(pid);
    return true;
  }

  /**
   * Remembers who told of a fork or an exit the other teller will tell of
   * too (`both`: a watched process's; the tracer tells of those only).
   */
  private tell(about: Map<number, Teller>, pid: number, teller: Teller, both: boolean): void {
    if (teller === 'connector' && !both) return;
    about.delete(pid);
    about.set(pid, teller);
    if (about.size > MAX_TOLD) about.delete(about.keys().next().value!);
  }

  /** Whether `pid` is a process the mirror follows as watched (its calls reported). */
  private watchedPid(pid: number): boolean {
    const t = this.k.tasks.process(pid);
    return t !== undefined && !t.exited && this.watched(t);
  }

  /** Whether the proc connector's line about `pid` is followed: any process's, or (scope exec) one the mirror knows. */
  private follows(pid: number): boolean {
    if (this.scope === 'all') return true;
    const t = this.k.tasks.process(pid);
    return t !== undefined && this.mirrored.has(t);
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
    this.execs(t, this.execPath(t.pid, () => this.exe(t.pid) ?? `/usr/bin/${comm}`), comm);
  }

  onExec(pid: number, reported: string, exe?: string): void {
    if (!this.follows(pid)) return;
    // (Read once, when the helper could not: the process may be gone by now.)
    exe ??= this.exe(pid);
    // The emulator's own helper starting (the watcher `exec` runs a command through): no exec of the machine's.
    if (isNativeHelper(exe ?? '')) return;
    const t = this.k.tasks.process(pid) ?? this.taskOf(pid);
    // Said after its exit (its tracer's line for that came first): a zombie runs nothing.
    if (t.exited) return;
    const m = this.mirrored.get(t);
    if (m?.execs && ++m.execs.reported <= m.execs.traced) {
      // The watcher's traced execve() ran it already.
      this.execNames.delete(pid);
      return;
    }
    const filename = this.execPath(pid, () => exe ?? '');
    // A process gone before its comm could be read: the kernel named it after the file it ran.
    const comm = reported || (filename.split('/').pop() ?? '') || t.comm;
    const inferred = m?.execInferred ?? false;
    if (m) m.execInferred = false;
    if (inferred && t.comm === comm) return;
    this.execs(t, filename || `/usr/bin/${comm}`, comm);
  }

  onComm(pid: number, comm: string): void {
    if (!this.follows(pid)) return;
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
    this.died(pid, code, 'connector');
  }

  /**
   * A watched thread stops to exit, seen by its tracer before its parent
   * can reap it: the exit runs now, before anything the parent does once
   * its wait returns, unless the proc connector's line for it was read
   * first; an exec it made just before, before it (`execFirst`).
   */
  exitTraced(pid: number, code: number, comm?: string, sleptNs?: number): void {
    this.execFirst(pid, comm);
    this.died(pid, code, 'tracer', sleptNs);
  }

  private died(pid: number, code: number, teller: Teller, sleptNs?: number): void {
    this.exitHandled(pid);
    if (this.otherTold(this.told.exit, pid, teller)) return;
    // an execve() seen that did not happen after all
    this.execNames.delete(pid);
    const t = this.k.tasks.process(pid);
    const m = t && this.mirrored.get(t);
    if (!t || t.exited || !m) return;
    this.tell(this.told.exit, pid, teller, this.watched(t));
    if (sleptNs !== undefined) this.sleptUnseen(t, m, sleptNs);
    this.exited(t, code);
  }

  /**
   * A process that slept on the host since its fork or last exec ran here,
   * and made no call since (`sleep 0.1`), yet still runs in the emulator:
   * nothing looked at it while it slept (the host's scheduler is looked at
   * every few ms, and a busy daemon looks later). It sleeps now, so that its
   * exit wakes it and switches it in, as the end of its sleep did.
   */
  private sleptUnseen(t: Task, m: Mirrored, sleptNs: number): void {
    const k = this.k;
    if (sleptNs <= USER_IDLE_NS || !k.observed() || k.sched.sleeping(t) || t.lastSyscallNs > m.seenNs) return;
    k.sched.blocked(t, 'S');
  }
}
