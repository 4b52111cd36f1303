/**
 * Sleeps and wakeups of the watched host processes (the ones `tracefs-emu
 * exec` runs): a process that blocks outside the mount — ping waiting for
 * its next second, sleep, a pipe reader — makes no call the emulator hears
 * of, yet a real kernel wakes it and switches it in when its wait ends. Its
 * count of context switches (/proc/PID/schedstat) tells when it ran: if the
 * count moved while its emulated task slept, the task is woken
 * (sched_waking, sched_wakeup, from what runs on its CPU) and switched in.
 * One that runs in the emulator, made no call for a while (activity.ts's
 * rule) and sleeps on the host is switched out then, with its host state,
 * so that its next wakeup is seen.
 */
import { USER_IDLE_NS } from '../kernel/activity.js';
import type { Kernel } from '../kernel/kernel.js';
import type { Task } from '../kernel/task.js';
import type { ProcessMirror } from './proc_mirror.js';

/** How often the watched processes are looked at (ms): about a scheduler tick (HZ=250); finer would cost more than it shows. */
const PERIOD_MS = 5;

export class HostSched {
  private readonly switches = new WeakMap<Task, number>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly k: Kernel,
    private readonly mirror: ProcessMirror,
    /** The context switches of a process so far; undefined when it is gone. */
    private readonly read: (pid: number) => number | undefined,
    /** Its state letter (/proc/PID/stat: R, S, D...); undefined when it is gone. */
    private readonly state: (pid: number) => string | undefined,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.poll(), PERIOD_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look at every watched process. */
  poll(): void {
    const k = this.k;
    for (const t of k.tasks.all()) {
      if (t.exited || !this.mirror.watched(t)) continue;
      const n = this.read(t.pid);
      if (n === undefined) continue;
      const last = this.switches.get(t);
      this.switches.set(t, n);
      if (last === undefined) continue;
      if (n !== last) {
        // Running here and busy there (its calls on the mount may be answered natively, out of the kernel's sight).
        if (k.sched.cpuOf(t).curr === t) {
          t.lastSyscallNs = k.clock.now();
          continue;
        }
        // It ran since: woken from its wait (or left waiting on a runqueue), it runs now, and counts as busy as a process making a call.
        t.lastSyscallNs = k.clock.now();
        if (k.observed()) {
          // Its priority may have changed while it slept unseen (chrt, renice): the wakeup's events and tracers show it.
          this.mirror.refreshSched(t);
          k.sched.ensureRunning(t);
        } else k.sched.wake(t);
      } else this.maybeAsleep(t);
    }
  }

  /**
   * A task the emulator runs, or has runnable, whose process waits on the
   * host (and made no call lately) goes to sleep now: switched out, or taken
   * off the runqueue it waited on while others ran.
   */
  private maybeAsleep(t: Task): void {
    const k = this.k;
    if (k.sched.sleeping(t) || k.clock.now() - t.lastSyscallNs <= USER_IDLE_NS) return;
    const st = this.state(t.pid);
    if (st !== 'S' && st !== 'D') return;
    k.sched.blocked(t, st);
  }
}
