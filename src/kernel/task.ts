/** Tasks of the emulated kernel: kernel threads and user processes. */
import type { Call } from './executor.js';
import type { AddressSpace } from './memory.js';
import type { UserMm } from './user_mm.js';

export type TaskState = 'R' | 'S' | 'D' | 'T' | 't' | 'X' | 'Z' | 'P' | 'I';

/** sched_switch's prev_state as __trace_sched_switch_state() reports a task state (TASK_REPORT bits). */
export const TASK_STATE_BITS: Record<TaskState, number> = {
  R: 0x0,
  S: 0x1,
  D: 0x2,
  T: 0x4,
  t: 0x8,
  X: 0x10,
  Z: 0x20,
  P: 0x40,
  I: 0x80,
};

/** prev_state of a preempted task ("R+"): TASK_REPORT_MAX. */
export const TASK_REPORT_MAX = 0x100;

/** Where a task came from: built in at boot (idle tasks, kernel threads, init; laid out once, never freed), or a process added since. */
type TaskOrigin = 'kernel' | 'process';

export class Task {
  /** Which CPU the task last ran on. */
  cpu = 0;
  state: TaskState = 'R';
  /** Kernel stack pointer between calls (top of its kernel stack when idle). */
  sp = 0n;
  /** The emulated calls this task is inside, outermost first. */
  readonly frames: Call[] = [];
  /** preempt_count(): preemption depth in the low byte, softirq/hardirq/NMI counts above. */
  preemptCount = 0;
  /** Nesting of interrupts-disabled sections (local_irq_save / spin_lock_irqsave / hardirq). */
  irqsOff = 0;
  /** migrate_disable() depth. */
  migrateDisable = 0;
  /** Effective priority as the scheduler sees it (task->prio: 120 for nice 0, 99 - rt_priority for real-time tasks). */
  prio = 120;
  /** Scheduling policy (task->policy: SCHED_NORMAL 0, SCHED_FIFO 1, SCHED_RR 2, SCHED_DEADLINE 6). */
  policy = 0;
  /** Address of this task's task_struct in kernel memory (0 until laid out). */
  addr = 0n;
  /** Lowest address of its kernel stack (THREAD_SIZE below the top). */
  stackBase = 0n;
  /** User address space (shared by the threads of a process); kernel threads have none. */
  mm?: AddressSpace;
  /** Where things are in that user space (buffers passed to system calls). */
  user?: UserMm;
  /** Executable path, as sched_process_exec shows it. */
  exe?: string;
  /** How the task came to be known. */
  origin: TaskOrigin = 'process';
  /** Run time accounted so far (ns), and when it last went on a CPU. */
  sumExecNs = 0;
  lastRanNs = 0;
  /** Simulated virtual runtime for the fair class. */
  vruntime = 0n;
  /** Kernel clock time of its last system call (ns): a process that made none for a while sleeps. */
  lastSyscallNs = 0;
  /**
   * Its tracer reports each of its system calls whenever anyone could see
   * them (a process under `exec`): a poll of a file on the mount, asked
   * from inside its poll, select or epoll call, is not a call of its own.
   */
  callsReported = false;
  /** Set once do_exit has run. */
  exited = false;

  private comm_: string;
  /** Called when the comm changes (the kernel keeps task_struct.comm in memory in step). */
  onComm?: (comm: string) => void;

  constructor(
    readonly pid: number,
    public tgid: number,
    comm: string,
    public ppid: number,
    /** Kernel threads (swapper/N, kworker/...) have no user space. */
    readonly kthread = false,
  ) {
    this.comm_ = comm;
  }

  /** task->comm (at most 15 characters). */
  get comm(): string {
    return this.comm_;
  }

  set comm(v: string) {
    const c = v.slice(0, 15);
    if (c === this.comm_) return;
    this.comm_ = c;
    this.onComm?.(c);
  }

  /** The idle task of a CPU (pid 0). */
  get isIdle(): boolean {
    return this.pid === 0;
  }
}
