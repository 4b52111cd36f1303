/**
 * Recursion protection of ftrace callbacks (trace_recursion.h): a callback
 * takes a per-task, per-context bit before running and gives up when that
 * bit is already taken; taking it also disables preemption, which is what
 * the preempt-depth column of events recorded from hooks shows.
 */
import { HARDIRQ_MASK, NMI_MASK, SOFTIRQ_MASK } from '../kernel/cpu.js';
import type { Task } from '../kernel/task.js';
import type { FtraceTasks } from './task_state.js';

/** Bit groups: the function callbacks themselves, and the list / assist functions. */
const TRACE_FTRACE_START = 0;
export const TRACE_LIST_START = 4;

/** interrupt_context_level(): 0 normal, 1 softirq, 2 hardirq, 3 NMI. */
function contextLevel(task: Task): number {
  const pc = task.preemptCount;
  if (pc & NMI_MASK) return 3;
  if (pc & HARDIRQ_MASK) return 2;
  if (pc & SOFTIRQ_MASK) return 1;
  return 0;
}

/**
 * trace_test_and_set_recursion(): the bit taken (>= 0), or -1 when the same
 * kind of callback is already running in this context of the task.
 */
export function traceTestAndSetRecursion(tasks: FtraceTasks, task: Task, start: number): number {
  const st = tasks.of(task);
  const bit = start + contextLevel(task);
  if (st.recursion & (1 << bit)) return -1;
  st.recursion |= 1 << bit;
  task.preemptCount++;
  return bit;
}

/** trace_clear_recursion(). */
export function traceClearRecursion(tasks: FtraceTasks, task: Task, bit: number): void {
  task.preemptCount--;
  tasks.of(task).recursion &= ~(1 << bit);
}

/** ftrace_test_recursion_trylock(): for ftrace callbacks; -1 on recursion. */
export function ftraceTestRecursionTrylock(tasks: FtraceTasks, task: Task): number {
  return traceTestAndSetRecursion(tasks, task, TRACE_FTRACE_START);
}

/** ftrace_test_recursion_unlock(). */
export function ftraceTestRecursionUnlock(tasks: FtraceTasks, task: Task, bit: number): void {
  traceClearRecursion(tasks, task, bit);
}

/** Whether an ftrace callback, or a list function calling them, runs now in this context of the task (a call made now would not reach them). */
export function ftraceCallbackRunning(tasks: FtraceTasks, task: Task): boolean {
  const level = contextLevel(task);
  return (tasks.of(task).recursion & ((1 << (TRACE_FTRACE_START + level)) | (1 << (TRACE_LIST_START + level)))) !== 0;
}
