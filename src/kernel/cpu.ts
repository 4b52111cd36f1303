/**
 * Per-CPU state: which task runs, what the CPU is doing (hardirq, softirq),
 * whether a reschedule is pending; and from it the context a tracing hook
 * records (common_flags, common_preempt_count).
 */
import {
  type ExecContext,
  TRACE_FLAG_BH_OFF,
  TRACE_FLAG_HARDIRQ,
  TRACE_FLAG_IRQS_OFF,
  TRACE_FLAG_NEED_RESCHED,
  TRACE_FLAG_NMI,
  TRACE_FLAG_PREEMPT_RESCHED,
  TRACE_FLAG_SOFTIRQ,
} from './context.js';
import type { Task } from './task.js';

/** preempt_count() layout (include/linux/preempt.h). */
const PREEMPT_MASK = 0xff;
export const SOFTIRQ_OFFSET = 0x100;
export const SOFTIRQ_DISABLE_OFFSET = 0x200;
export const SOFTIRQ_MASK = 0xff00;
export const HARDIRQ_OFFSET = 0x10000;
export const HARDIRQ_MASK = 0xf0000;
export const NMI_MASK = 0xf00000;

export class Cpu {
  /** In cpu_online_mask (a tracer may take CPUs down: mmiotrace). */
  online = true;
  private running: Task;
  /** Told each time the task running here changes (the FUSE sessions' native answers follow it). */
  private readonly switchListeners: ((cpu: Cpu) => void)[] = [];
  /** TIF_NEED_RESCHED of the running task. */
  needResched = false;
  /** Tasks woken onto this CPU, waiting for it. */
  readonly runqueue: Task[] = [];
  /** When (ns) the current task was switched in. */
  currSince = 0;
  /** Emulated time (ns) up to which the background activity has run here. */
  activityNs = 0;
  /** Address of this CPU's struct rq (runqueues + per-CPU offset). */
  rq = 0n;

  constructor(
    readonly id: number,
    readonly idle: Task,
  ) {
    this.running = idle;
  }

  /** The task running here now. */
  get curr(): Task {
    return this.running;
  }

  set curr(t: Task) {
    this.running = t;
    for (const l of this.switchListeners) l(this);
  }

  /** Calls `listener` each time the task running here changes, until the returned function is called. */
  onSwitch(listener: (cpu: Cpu) => void): () => void {
    this.switchListeners.push(listener);
    return () => {
      const i = this.switchListeners.indexOf(listener);
      if (i >= 0) this.switchListeners.splice(i, 1);
    };
  }
}

/** The common_flags and preempt count a record made now in `task` on `cpu` carries. */
export function execContext(task: Task, cpu: Cpu | undefined): ExecContext {
  const pc = task.preemptCount;
  let flags = 0;
  if (task.irqsOff > 0) flags |= TRACE_FLAG_IRQS_OFF;
  if (pc & NMI_MASK) flags |= TRACE_FLAG_NMI;
  if (pc & HARDIRQ_MASK) flags |= TRACE_FLAG_HARDIRQ;
  if (pc & SOFTIRQ_OFFSET) flags |= TRACE_FLAG_SOFTIRQ;
  if ((pc & SOFTIRQ_MASK) >> 9) flags |= TRACE_FLAG_BH_OFF;
  // x86 folds PREEMPT_NEED_RESCHED into the preempt count: both show when the running task must reschedule.
  if (cpu && cpu.needResched && cpu.curr === task) flags |= TRACE_FLAG_NEED_RESCHED | TRACE_FLAG_PREEMPT_RESCHED;
  const preempt = Math.min(pc & PREEMPT_MASK, 0xf) | (Math.min(task.migrateDisable, 0xf) << 4);
  return { task, cpu: cpu?.id ?? task.cpu, flags, preemptCount: preempt };
}
