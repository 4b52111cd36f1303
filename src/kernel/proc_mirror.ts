/**
 * Real processes mirrored as tasks, and their lives inferred: a process seen
 * for the first time was forked by its parent (mirrored too if needed) —
 * unless it is older than the emulator, when it simply exists; a changed
 * comm means it exec'd; a process gone from /proc (or whose pid now belongs
 * to a younger process) exited. Process events from the kernel's proc
 * connector (cn_proc.ts), when available, report the same lives as they
 * happen, for processes that never touch the mount too.
 */
import type { ProcessPaths } from './process_paths.js';
import type { ProcSource } from './proc_source.js';
import { Task, type ProcInfo } from './task.js';
import type { TaskTable } from './tasks.js';

export interface MirrorHost {
  readonly tasks: TaskTable;
  readonly procs: ProcessPaths;
  readonly nrCpus: number;
  /** Lays out a task's user space (a new process, or a thread sharing its leader's). */
  attachMm(task: Task, leader?: Task): void;
}

/** How far up the parent chain a new process's ancestors are mirrored. */
const MAX_ANCESTORS = 16;

export class ProcessMirror {
  private initNamed = false;
  /** Paths execve() was given, by caller, reported before the call ran (the watcher): the exec that follows ran that name. */
  private readonly execNames = new Map<number, string>();

  constructor(
    private readonly h: MirrorHost,
    private readonly src: ProcSource | undefined,
  ) {}

  /**
   * The task of a calling process, its birth, exec or a predecessor's death
   * inferred on the way. `comm`: what the caller was called when it made the
   * call, and `ppid` its parent then, for a process gone from /proc before
   * its mirror was made.
   */
  taskOf(pid: number, comm = '<...>', ppid = 0): Task {
    const known = this.h.tasks.process(pid);
    if (known && known.origin === 'manual') return known;
    if (!this.src) return known ?? this.adopt({ pid, tgid: pid, comm, ppid: 1, cpu: 0, startTime: 0 }, false);
    const info = this.src.stat(pid);
    if (known && !known.exited && (!info || info.startTime === known.startTime)) {
      if (info) this.refresh(known, info);
      return known;
    }
    if (known) this.exited(known);
    if (info) return this.born(info);
    // Gone already, its fork not reported yet (the proc connector's line comes later): born of the parent the watcher saw.
    if (!known && ppid > 0 && comm !== '<...>') return this.born({ pid, tgid: pid, comm, ppid, cpu: this.h.tasks.get(ppid)?.cpu ?? 0, startTime: Number.MAX_SAFE_INTEGER });
    return this.adopt({ pid, tgid: pid, comm, ppid: 1, cpu: 0, startTime: 0 }, false);
  }

  /**
   * The directory the process moved to since its last call on the mount, if
   * it moved: its chdir() happened in between (FUSE sees no request for it).
   */
  cwdChange(t: Task): string | undefined {
    // A watched process's chdir() was reported when it made it (and reading its cwd on every call costs).
    if (!this.src || t.kthread || t.origin === 'manual' || t.syscallsWatched) return undefined;
    const cwd = this.src.cwd(t.pid);
    if (cwd === undefined) return undefined;
    const before = t.cwd;
    t.cwd = cwd;
    return before !== undefined && before !== cwd ? cwd : undefined;
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

  /** A comm that changed since last seen: the process exec'd. */
  private refresh(t: Task, info: ProcInfo): void {
    t.cpu = info.cpu % this.h.nrCpus;
    if (info.comm !== t.comm) {
      t.execInferred = true;
      this.h.procs.exec(t, this.execPath(t.pid, this.src?.exe(t.pid) ?? `/usr/bin/${info.comm}`), info.comm);
    }
  }

  /** A process seen for the first time. */
  private born(info: ProcInfo): Task {
    if (info.startTime < (this.src?.bootTicks ?? 0)) return this.adopt(info, false);
    const parent = this.ensure(info.ppid, 0);
    const child = this.adopt({ ...info, comm: parent?.comm ?? info.comm }, true, parent);
    if (parent) this.h.procs.fork(parent, child);
    if (child.comm !== info.comm) {
      child.execInferred = true;
      this.h.procs.exec(child, this.execPath(info.pid, this.src?.exe(info.pid) ?? `/usr/bin/${info.comm}`), info.comm);
    }
    return child;
  }

  /** An ancestor mirrored as it is now, without inferring its own birth. */
  private ensure(pid: number, depth: number): Task | undefined {
    if (pid <= 0) return undefined;
    const known = this.h.tasks.get(pid);
    if (known && !known.exited) {
      // The built-in init stands for the machine's pid 1: it goes by its name.
      if (pid === 1 && known.origin === 'kernel' && !this.initNamed) {
        this.initNamed = true;
        const info = this.src?.stat(1);
        if (info) known.comm = info.comm;
      }
      return known;
    }
    const info = this.src?.stat(pid);
    if (!info) return this.h.tasks.get(1);
    if (depth < MAX_ANCESTORS) this.ensure(info.ppid, depth + 1);
    return this.adopt(info, false);
  }

  /** Adds a mirror of a process (leaves its birth to the caller). */
  private adopt(info: ProcInfo, fresh: boolean, parent?: Task): Task {
    const t = new Task(info.pid, info.tgid, info.comm, info.ppid);
    t.cpu = info.cpu % this.h.nrCpus;
    t.startTime = info.startTime;
    t.origin = 'proc';
    if (info.priority !== undefined && info.priority >= -100 && info.priority < 40) t.prio = info.priority + 100;
    t.state = fresh ? 'R' : 'S';
    const leader = info.tgid !== info.pid ? this.h.tasks.process(info.tgid) : undefined;
    // A watched process's children are watched too (the seccomp filter is inherited).
    if (fresh && parent) t.syscallsWatched = parent.syscallsWatched;
    this.h.tasks.add(t);
    this.h.attachMm(t, leader ?? (fresh && parent && info.tgid === parent.tgid ? parent : undefined));
    return t;
  }

  /** A mirrored process found gone: it exited, and its parent reaped it. */
  private exited(t: Task): void {
    if (t.exited) {
      this.h.tasks.delete(t.pid);
      return;
    }
    this.h.procs.exit(t);
    this.h.procs.reap(t.pid === t.tgid ? this.h.tasks.get(t.ppid) : undefined, t);
  }

  /** Checks every mirrored process still exists (called periodically). */
  checkExits(): void {
    if (!this.src) return;
    for (const t of [...this.h.tasks.all()]) {
      if (t.origin !== 'proc') continue;
      const info = this.src.stat(t.pid);
      if (!info || info.startTime !== t.startTime) this.exited(t);
    }
  }

  // --- process events, as the proc connector reports them

  onFork(ppid: number, pid: number, tgid: number, cpu?: number): void {
    const known = this.h.tasks.process(pid);
    if (known && !known.exited) return;
    if (known) this.exited(known);
    const parent = this.ensure(ppid, 0) ?? this.h.tasks.get(1);
    const info: ProcInfo = this.src?.stat(pid) ?? { pid, tgid, comm: parent?.comm ?? '<...>', ppid, cpu: cpu ?? parent?.cpu ?? 0, startTime: 0 };
    const child = this.adopt({ ...info, pid, tgid, ppid: tgid === pid ? ppid : (parent?.ppid ?? ppid), comm: parent?.comm ?? info.comm, cpu: cpu ?? info.cpu }, true, parent);
    if (parent) this.h.procs.fork(parent, child);
  }

  onExec(pid: number, reported: string, exe?: string): void {
    const t = this.h.tasks.process(pid) ?? this.taskOf(pid);
    const filename = this.execPath(pid, exe ?? this.src?.exe(pid) ?? '');
    // A process gone before its comm could be read: the kernel named it after the file it ran.
    const comm = reported || (filename.split('/').pop() ?? '') || t.comm;
    if (t.execInferred && t.comm === comm) {
      t.execInferred = false;
      return;
    }
    t.execInferred = false;
    this.h.procs.exec(t, filename || `/usr/bin/${comm}`, comm);
  }

  onComm(pid: number, comm: string): void {
    const t = this.h.tasks.process(pid);
    if (t) t.comm = comm;
  }

  onExit(pid: number, code: number): void {
    // an execve() seen that did not happen after all
    this.execNames.delete(pid);
    const t = this.h.tasks.process(pid);
    if (!t || t.exited || t.origin === 'manual') return;
    this.h.procs.exit(t, code);
    this.h.procs.reap(t.pid === t.tgid ? this.h.tasks.get(t.ppid) : undefined, t);
  }
}
