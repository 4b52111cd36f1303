/**
 * What the event layer asks of a trace array besides record(): its options,
 * whether it records now, its error_log, snapshots and stack traces — the
 * kernel functions trace_events*.c calls into trace.c for.
 */
import type { ExecContext } from '../../kernel/context.js';
import { fail } from '../../kernel/errno.js';
import type { TraceArray } from '../trace_array.js';

export function hasOption(tr: TraceArray, name: string): boolean {
  return tr.options.has(name);
}

/** Whether a record written now on `cpu` would reach the buffer (ring_buffer_lock_reserve succeeds). */
export function recordingOn(tr: TraceArray, cpu: number): boolean {
  return tr.recording(cpu);
}

/** tracing_log_err(). */
export function logError(tr: TraceArray, loc: string, cmd: string, pos: number, msg: string): void {
  tr.tracing.errorLog.log(tr, loc, cmd, pos, msg);
}

/** tracing_update_buffers(): enabling events grows the buffers to their working size. */
export function updateBuffers(tr: TraceArray): void {
  tr.updateBuffers();
}

/** tracing_snapshot_instance() from a trigger. */
export function takeSnapshot(tr: TraceArray, ctx: ExecContext | undefined): void {
  if (ctx) tr.snapshotFromKernel(ctx);
  else tr.swapSnapshot();
}

/** tracing_arm_snapshot(): the spare buffer is allocated; a tracer that owns it refuses (EBUSY). */
export function armSnapshot(tr: TraceArray): void {
  if (tr.tracer.usesSnapshot) fail('EBUSY');
  tr.allocSnapshot();
}

/** tracing_disarm_snapshot(): the spare buffer stays allocated, as on the kernel. */
export function disarmSnapshot(_tr: TraceArray): void {}

/** __trace_stack(): a kernel_stack record of the current call stack. */
export function recordStack(tr: TraceArray, ctx: ExecContext): void {
  tr.recordStack(ctx, 0);
}

/** The sub-buffer size the header_page file describes. */
export function subbufSize(tr: TraceArray): number {
  return tr.buffer.subbufSize;
}
