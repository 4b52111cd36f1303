/** Writing a fixed-layout record in place (trace_buffer_lock_reserve() + commit). */
import type { ExecContext } from '../../kernel/context.js';
import type { TraceArray } from '../trace_array.js';

/**
 * Reserves `len` bytes on the context's CPU, fills the common header and lets
 * `fill` write the fields (at `off`). False when nothing was recorded.
 */
export function writeRecord(tr: TraceArray, ctx: ExecContext, type: number, len: number, fill: (buf: Buffer, off: number) => void): boolean {
  const cpu = ctx.cpu;
  const r = tr.reserve(cpu, len);
  if (!r) return false;
  const { buf, off } = r;
  buf.writeUInt16LE(type, off);
  buf[off + 2] = ctx.flags & 0xff;
  buf[off + 3] = ctx.preemptCount & 0xff;
  buf.writeInt32LE(ctx.task.pid, off + 4);
  fill(buf, off);
  tr.commit(cpu, ctx.task.pid);
  return true;
}

/** tracing_gen_ctx_dec(): the context minus the preemption the caller itself added. */
export function ctxDec(ctx: ExecContext): ExecContext {
  const pc = ctx.preemptCount & 0xf;
  return pc ? { ...ctx, preemptCount: (ctx.preemptCount & ~0xf) | (pc - 1) } : ctx;
}
