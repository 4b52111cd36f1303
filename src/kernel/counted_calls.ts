/**
 * Calls that hooks only count. A hook such as the function profiler's
 * keeps, per function, how often it was called and for how long; nothing
 * else of a call reaches it. A subtree whose hooked functions have no other
 * hook need not run call by call: what each of its functions would add is
 * known from the call tree (subtree.ts), and ftrace applies it at once.
 * Durations are nominal (UNSEEN_CALL_NS per call, a function's including
 * what it calls): no clock runs inside a subtree that is not run.
 */
import type { Task } from './task.js';

/** What one unseen call is taken to last, in ns. */
export const UNSEEN_CALL_NS = 100;

/** One run of a subtree, by function: how many calls, and their summed durations (and squares), children included. */
export interface CountedCalls {
  /** The functions' __fentry__ sites (what their hooks are given as ip). */
  readonly ips: readonly bigint[];
  readonly ids: readonly number[];
  readonly counts: readonly number[];
  readonly incl: readonly number[];
  readonly incl2: readonly number[];
}

export interface CountingHooks {
  /** Whether every hook a call of function `id` reaches only counts it. */
  countsOnly(id: number): boolean;
  /**
   * Applies `times` runs of `calls` made by `task`, nesting at most `depth`
   * calls deep. False when the hooks cannot take them at once now (the
   * calls must run one by one).
   */
  count(task: Task, calls: CountedCalls, depth: number, times: number): boolean;
}
