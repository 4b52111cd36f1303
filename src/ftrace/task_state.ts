/**
 * The ftrace fields of a task (task_struct's trace_recursion, ret_stack,
 * curr_ret_stack, curr_ret_depth, trace_overrun, ftrace_timestamp,
 * ftrace_sleeptime), kept beside the kernel's Task.
 */
import type { Task } from '../kernel/task.js';

export class FtraceTaskState {
  /** Recursion bits of the ftrace callbacks running now (trace_recursion). */
  recursion = 0;
  /** The fgraph shadow stack (SHADOW_STACK_SIZE bytes as longs), null until fgraph gives it one. */
  retStack: BigUint64Array | null = null;
  /** Words in use on the shadow stack. */
  currRetStack = 0;
  /** Depth of the innermost traced call, -1 when none. */
  currRetDepth = -1;
  /** Calls not traced because the shadow stack was full. */
  traceOverrun = 0;
  /** Trace-clock time the task was last switched out (sleep-time accounting). */
  ftraceTimestamp = 0;
  /** Time spent switched out while traced. */
  ftraceSleeptime = 0;
}

const states = new WeakMap<Task, FtraceTaskState>();
let lastTask: Task | undefined;
let lastState: FtraceTaskState | undefined;

/** The ftrace state of a task (made on first use). */
export function ftraceTask(task: Task): FtraceTaskState {
  if (task === lastTask) return lastState!;
  let s = states.get(task);
  if (!s) states.set(task, (s = new FtraceTaskState()));
  lastTask = task;
  lastState = s;
  return s;
}

/** The state if the task has one yet. */
export function peekFtraceTask(task: Task): FtraceTaskState | undefined {
  return states.get(task);
}
