/**
 * timerlat's user-space workload (`rtla timerlat -u`, NO_OSNOISE_WORKLOAD):
 * a thread pinned to one CPU opens osnoise/per_cpu/cpuN/timerlat_fd and
 * reads it in a loop (trace_osnoise.c's timerlat_fd_open/read/release).
 * Each read sleeps until the next period; the timer's IRQ and the thread's
 * wakeup are recorded as for the kernel's own threads (workload.ts), and
 * the next read records how late user space came back (context user-ret).
 * The sleep is a real one of the period's length: the daemon goes on
 * meanwhile.
 */
import { fail } from '../../kernel/errno.js';
import type { Interruption } from '../../kernel/syscall.js';
import type { Task } from '../../kernel/task.js';
import type { Osnoise } from './osnoise.js';
import { THREAD_URET } from './workload.js';

/** One CPU's user thread (osn_var->pid and its timerlat_variables). */
export interface TimerlatUserThread {
  readonly task: Task;
  readonly cpu: number;
  /** Activations so far (tlat->count). */
  count: number;
  /** The period being waited for, ns of the kernel clock (tlat->abs_period). */
  absPeriod: number;
  /** The thread was woken by the timer and is back in user space (tlat->tracing_thread). */
  tracingThread: boolean;
  /** Its wakeup's latency, ns: what user-ret adds to. */
  wokenLatency: number;
  /** It read another CPU's file: the machinery stopped (tlat->uthread_migrate). */
  migrated: boolean;
}

const EMPTY = Buffer.alloc(0);

export class TimerlatUser {
  /** By CPU. */
  private readonly threads = new Map<number, TimerlatUserThread>();

  constructor(private readonly os: Osnoise) {}

  /**
   * timerlat_fd_open() of CPU `fileCpu`'s file by `task`. EINVAL unless
   * timerlat runs without its own workload; EBUSY when the CPU it runs on
   * has its thread; EPERM unless it is pinned to the file's CPU.
   */
  open(task: Task, fileCpu: number): TimerlatUserThread {
    const os = this.os;
    if (!os.timerlatMode || os.instances.size === 0 || os.option('OSNOISE_WORKLOAD')) fail('EINVAL');
    const { cpu, pinned } = this.where(task, task.cpu);
    if (this.threads.has(cpu)) fail('EBUSY');
    if (!pinned || cpu !== fileCpu) fail('EPERM');
    this.runOn(task, cpu);
    const t: TimerlatUserThread = { task, cpu, count: 0, absPeriod: 0, tracingThread: false, wokenLatency: 0, migrated: false };
    this.threads.set(cpu, t);
    return t;
  }

  /**
   * A call of the pinned thread runs on its CPU (sched_setaffinity moved it
   * there), wherever the emulator last placed its task: its samples are that
   * CPU's.
   */
  private runOn(task: Task, cpu: number): void {
    task.cpu = cpu;
    this.os.tracing.kernel.sched.ensureRunning(task);
  }

  /** The CPU a task runs on: the one its affinity allows if only one, else `last` (where it was seen) if allowed. */
  private where(task: Task, last: number): { cpu: number; pinned: boolean } {
    const k = this.os.tracing.kernel;
    const allowed = k.sched.affinity(task);
    const cpus = allowed ? [...new Set(allowed.map((c) => c % k.nrCpus))] : [];
    if (cpus.length === 1) return { cpu: cpus[0]!, pinned: true };
    return { cpu: !allowed || cpus.includes(last) ? last : (cpus[0] ?? last), pinned: false };
  }

  /**
   * timerlat_fd_read() of CPU `fileCpu`'s file: records the return to user
   * space of the last wakeup, then waits for the next period and records
   * its IRQ and wakeup. A signal ends the wait early (and the read returns
   * 0, as the kernel's does).
   */
  read(t: TimerlatUserThread, fileCpu: number, abort: Interruption): Buffer | Promise<Buffer> {
    const os = this.os;
    const k = os.tracing.kernel;
    // Where it runs now: its affinity may have changed since the open.
    if (fileCpu !== this.where(t.task, t.cpu).cpu) {
      // The thread runs elsewhere: that CPU's machinery stops, and tracing with it.
      const other = this.threads.get(fileCpu);
      if (other) other.migrated = true;
      os.tainted = true;
      os.stopTracing(fileCpu);
      fail('EINVAL');
    }
    if (t.migrated) fail('EINVAL');
    this.runOn(t.task, t.cpu);
    const now = k.clock.now();
    if (t.tracingThread) {
      const latency = t.wokenLatency + os.workload.userReturnNs();
      os.workload.timerlatSample(k.context(t.task), t.count, THREAD_URET, latency);
      t.tracingThread = false;
      if (os.stopTracingTotalUs && latency / 1000 >= os.stopTracingTotalUs) os.stopTracing(t.cpu);
    } else t.absPeriod = now;
    if (abort.aborted) return EMPTY;
    // wait_next_period(): the next period still ahead.
    const period = Math.max(os.timerlatPeriodUs, 1) * 1000;
    let next = t.absPeriod + period;
    while (next < now) next += period;
    t.absPeriod = next;
    return new Promise<Buffer>((done) => {
      const timer = setTimeout(
        () => {
          abort.removeEventListener('abort', interrupted);
          if (this.threads.get(t.cpu) !== t || t.migrated) return done(EMPTY);
          t.count++;
          // Pinned: it wakes where its timer fires, whatever CPU the mirror last saw it on.
          t.task.cpu = t.cpu;
          t.wokenLatency = os.workload.timerlatWakeup(t.cpu, t.task, t.count);
          t.tracingThread = true;
          done(EMPTY);
        },
        Math.max(0, (next - k.clock.now()) / 1e6),
      );
      const interrupted = (): void => {
        clearTimeout(timer);
        done(EMPTY);
      };
      abort.addEventListener('abort', interrupted);
    });
  }

  /** timerlat_fd_release(): the CPU is free for another thread. */
  release(t: TimerlatUserThread): void {
    if (this.threads.get(t.cpu) === t) this.threads.delete(t.cpu);
  }
}
