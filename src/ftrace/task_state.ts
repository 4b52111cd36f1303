/**
 * The ftrace fields of a task (task_struct's trace_recursion, ret_stack,
 * curr_ret_stack, curr_ret_depth, trace_overrun, ftrace_timestamp,
 * ftrace_sleeptime), kept by the ftrace core beside the kernel's Task.
 */
import type { Task } from '../kernel/task.js';

export class FtraceTaskState {
  /** Recursion bits of the ftrace callbacks running now (trace_recursion). */
  recursion = 0;
  /** The fgraph shadow stack (SHADOW_STACK_SIZE bytes as longs), null until fgraph gives it one. */
  retStack: BigUint64Array | null = null;
  /** The same stack as 32-bit halves: its meta words (shadow_stack.ts). */
  retMeta: Uint32Array | null = null;
  /**
   * The return address and function of each frame as pushed, by the frame's
   * offset: the return path reads these rather than the longs, which would
   * make new BigInts on every return.
   */
  retVals: bigint[] = [];
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

/** The ftrace state of every task, made on first use. */
export class FtraceTasks {
  private readonly states = new WeakMap<Task, FtraceTaskState>();
  /** The last task asked for: hooks ask for the same task many times in a row. */
  private lastTask?: Task;
  private lastState?: FtraceTaskState;

  /** The ftrace state of a task (made on first use). */
  of(task: Task): FtraceTaskState {
    if (task === this.lastTask) return this.lastState!;
    let s = this.states.get(task);
    if (!s) this.states.set(task, (s = new FtraceTaskState()));
    this.lastTask = task;
    this.lastState = s;
    return s;
  }

  /** The state if the task has one yet. */
  peek(task: Task): FtraceTaskState | undefined {
    if (task === this.lastTask) return this.lastState;
    return this.states.get(task);
  }
}
