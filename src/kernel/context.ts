/** What a tracing hook needs to know of "now": the running task and its CPU state. */
import type { Task } from './task.js';

/** The common_flags bits of a trace entry. */
export const TRACE_FLAG_IRQS_OFF = 0x01;
/** Bit 0x02: IRQS_NOSUPPORT before the lazy preemption model, NEED_RESCHED_LAZY with it (profile.lazyResched). */
export const TRACE_FLAG_IRQS_NOSUPPORT = 0x02;
export const TRACE_FLAG_NEED_RESCHED_LAZY = 0x02;
export const TRACE_FLAG_NEED_RESCHED = 0x04;
export const TRACE_FLAG_HARDIRQ = 0x08;
export const TRACE_FLAG_SOFTIRQ = 0x10;
export const TRACE_FLAG_PREEMPT_RESCHED = 0x20;
export const TRACE_FLAG_NMI = 0x40;
export const TRACE_FLAG_BH_OFF = 0x80;

export interface ExecContext {
  task: Task;
  cpu: number;
  /** common_flags of an event recorded now (TRACE_FLAG_*). */
  flags: number;
  /** Preemption depth (low nibble) and migrate-disable depth (high nibble), as common_preempt_count. */
  preemptCount: number;
}
