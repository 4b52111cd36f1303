/**
 * The host driver: what ties the emulated kernel to the machine it runs on.
 * It mirrors the machine's processes as tasks (/proc, the proc connector),
 * replays the system calls that watched processes make outside the mount
 * (the events FIFO), follows their sleeps, and tells the kernel which task
 * a request on the mount runs in. Only the daemon makes one: the library's
 * default (pidTasks) reads nothing of the machine.
 */
import type { Caller } from '../kernel/caller.js';
import type { Kernel } from '../kernel/kernel.js';
import type { Task } from '../kernel/task.js';
import { type HostEvents, startHostEvents } from './events.js';
import { ObserveLevel } from './observe_switch.js';
import { ProcessMirror, type ProcessScope } from './proc_mirror.js';
import { HostProcSource, type ProcSource } from './proc_source.js';
import { HostSched } from './sched.js';
import { HostSyscalls } from './syscalls.js';
import { TracedCalls } from './traced_calls.js';

export interface HostOptions {
  /** Where processes are read from: the machine's /proc (default), or a scripted source (tests). */
  proc?: ProcSource;
  /** Follow every process's fork/exec/exit through the kernel's proc connector (root only). */
  procEvents?: boolean;
  /** Whose lives the proc connector's events are followed for (default: every process's). */
  processes?: ProcessScope;
  /**
   * A FIFO to make at this path, where `tracefs-emu exec`'s watcher reports
   * the system calls its processes make outside the mount (syscalls.ts);
   * read with the process events, in the order they were written.
   */
  eventsFifo?: string;
}

/** How often mirrored processes are checked for exits nothing reported (ms). */
const EXIT_CHECK_MS = 1000;

export class HostDriver {
  readonly source: ProcSource;
  readonly mirror: ProcessMirror;
  /** System calls watched processes make on the machine's other files. */
  readonly syscalls: HostSyscalls;
  /** Every other call of theirs, while the kernel can see system calls. */
  readonly traced: TracedCalls;
  /** The sleeps and wakeups of watched processes (undefined without a /proc that counts switches). */
  readonly sched?: HostSched;
  private events?: HostEvents;
  private exitTimer?: NodeJS.Timeout;

  constructor(
    readonly kernel: Kernel,
    private readonly opts: HostOptions = {},
  ) {
    const src = (this.source = opts.proc ?? new HostProcSource());
    this.mirror = new ProcessMirror(kernel, src, opts.processes);
    this.syscalls = new HostSyscalls(kernel, this.mirror, src);
    this.traced = new TracedCalls(kernel, this.mirror, this.syscalls);
    if (src.switches) this.sched = new HostSched(kernel, this.mirror, (pid) => src.switches!(pid), (pid) => src.stat(pid)?.state);
  }

  /**
   * The task of the process behind a request, before the kernel runs it:
   * what the machine reported first (a fork, an exit), the process's own
   * birth or exec inferred on the way, and a chdir() it made since its last
   * call on the mount (FUSE sees no request for it).
   */
  readonly taskOf = (caller: Caller): Task => {
    // (What the request arms or disarms, the watchers learn before it is answered: `returning`.)
    this.drain();
    const task = this.mirror.taskOf(caller.pid, undefined, undefined, true);
    const moved = this.mirror.cwdChange(task);
    if (moved !== undefined) this.kernel.syscall(task, { name: 'chdir', path: moved }, () => 0);
    return task;
  };

  /** Starts following the machine: exit checks, process events and watched system calls, watched processes' sleeps. */
  start(): void {
    if (!this.exitTimer) {
      this.exitTimer = setInterval(() => this.mirror.checkExits(), EXIT_CHECK_MS);
      this.exitTimer.unref();
    }
    const { procEvents = false, eventsFifo } = this.opts;
    if ((procEvents || eventsFifo) && !this.events) this.events = startHostEvents({ mirror: this.mirror, syscalls: this.syscalls, traced: this.traced, observed: this.observeLevel }, { procEvents, fifo: eventsFifo });
    // Watched processes exist only where they can report: their sleeps and wakeups are followed there.
    if (eventsFifo) this.sched?.start();
  }

  /**
   * What the machine reported so far: process events and watched calls
   * read, calls replayed, and answers that could not wait for the watchers
   * any longer (the daemon's `load`).
   */
  get reported(): { lines: number; syscalls: number; ackTimeouts: number } {
    return { lines: this.events?.lines ?? 0, syscalls: this.syscalls.reported + this.traced.reported, ackTimeouts: this.events?.ackTimeouts ?? 0 };
  }

  /**
   * What the answer to a request waits for: when the request armed
   * something that sees processes run or their system calls, the watchers'
   * acknowledgement that their processes' next calls are seen
   * (observe_switch.ts).
   */
  readonly returning = (caller: Caller): Promise<void> | undefined => this.events?.observe(this.observeLevel(), caller.pid);

  /**
   * What the kernel can see of watched processes' calls outside the mount:
   * every call, with its real result (their events, or what the trees of
   * calls traced or reported run), only the task running for them (the
   * scheduler's events: opens are reported), or nothing. A probe on a
   * function no such call reaches leaves them unreported.
   */
  private readonly observeLevel = (): ObserveLevel => {
    const k = this.kernel;
    if (k.syscallEventsOn() || this.traced.treesSeen() || this.syscalls.treesSeen()) return ObserveLevel.Syscalls;
    return k.schedulingObserved() ? ObserveLevel.Processes : ObserveLevel.Nothing;
  };

  /** Where watched processes report their system calls (undefined when nobody can). */
  get fifo(): string | undefined {
    return this.events?.fifo;
  }

  /** Process events and system calls the machine reported and the kernel has not seen yet: handled now, in their order. */
  drain(): void {
    this.events?.drain();
  }

  stop(): void {
    if (this.exitTimer) clearInterval(this.exitTimer);
    this.exitTimer = undefined;
    this.events?.stop();
    this.events = undefined;
    this.sched?.stop();
  }
}
