/**
 * What the event layer needs from a trace array beyond record(): its options,
 * whether it records now, its error_log, snapshots and stack traces. These
 * belong to the ring buffer / core side; until every one of them exists on
 * TraceArray, this is the single place that bridges to them.
 */
import type { ExecContext } from '../../kernel/context.js';
import type { TraceArray } from '../trace_array.js';

interface CoreSide {
  options?: Set<string>;
  recording?(cpu: number): boolean;
  /** tracing_snapshot_instance() */
  snapshot?(): void;
  takeSnapshot?(): void;
  /** tracing_arm_snapshot(): 0 or a negative errno. */
  armSnapshot?(): void;
  disarmSnapshot?(): void;
  /** __trace_stack(): a kernel_stack record of the current call stack. */
  recordStack?(ctx: ExecContext, skip: number): void;
}

interface TracingSide {
  errorLog?: { log(tr: TraceArray, loc: string, cmd: string, pos: number, msg: string): void };
}

/** Options that are on by default on the kernel (used when the array keeps no option set). */
const DEFAULT_ON = new Set(['hash-ptr', 'record-cmd', 'overwrite', 'context-info', 'print-parent', 'markers', 'irq-info', 'function-trace', 'trace_printk', 'annotate']);

export function hasOption(tr: TraceArray, name: string): boolean {
  const o = (tr as unknown as CoreSide).options;
  return o ? o.has(name) : DEFAULT_ON.has(name);
}

/** Whether a record written now on `cpu` would reach the buffer (ring_buffer_lock_reserve succeeds). */
export function recordingOn(tr: TraceArray, cpu: number): boolean {
  const c = tr as unknown as CoreSide;
  return c.recording ? c.recording(cpu) : tr.tracingOn;
}

/** tracing_log_err(). */
export function logError(tr: TraceArray, loc: string, cmd: string, pos: number, msg: string): void {
  (tr.tracing as unknown as TracingSide).errorLog?.log(tr, loc, cmd, pos, msg);
}

export function takeSnapshot(tr: TraceArray): void {
  const c = tr as unknown as CoreSide;
  if (c.takeSnapshot) c.takeSnapshot();
  else c.snapshot?.();
}

export function armSnapshot(tr: TraceArray): void {
  (tr as unknown as CoreSide).armSnapshot?.();
}

export function disarmSnapshot(tr: TraceArray): void {
  (tr as unknown as CoreSide).disarmSnapshot?.();
}

export function recordStack(tr: TraceArray, ctx: ExecContext): void {
  (tr as unknown as CoreSide).recordStack?.(ctx, 0);
}
