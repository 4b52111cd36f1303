/**
 * Kernel-side text records (__trace_array_puts()): an ftrace/print event
 * with the text and the address of the function that wrote it.
 */
import type { ExecContext } from '../kernel/context.js';
import { PRINT_ENTRY_BUF } from './ftrace_entries.js';
import { symbolAddress } from './ksym.js';
import type { TraceArray } from './trace_array.js';

/**
 * Writes `text` into `tr` as a print record from function `func` (by name:
 * its address, or 0 when unknown; or the caller's address). Returns the
 * bytes written, 0 when not recorded.
 */
export function traceArrayPuts(tr: TraceArray, func: string | bigint, text: string, ctx: ExecContext): number {
  if (!tr.options.has('trace_printk')) return 0;
  const bytes = Buffer.from(text, 'latin1');
  const size = bytes.length;
  const r = tr.reserve(ctx.cpu, PRINT_ENTRY_BUF + size + 2);
  if (!r) return 0;
  const { buf, off } = r;
  buf.writeUInt16LE(tr.tracing.ftraceTypes.print.id, off);
  buf[off + 2] = ctx.flags & 0xff;
  buf[off + 3] = ctx.preemptCount & 0xff;
  buf.writeInt32LE(ctx.task.pid, off + 4);
  buf.writeBigUInt64LE(typeof func === 'bigint' ? func : (symbolAddress(tr.tracing.kernel, func) ?? 0n), off + 8);
  const start = off + PRINT_ENTRY_BUF;
  bytes.copy(buf, start);
  if (size === 0 || bytes[size - 1] !== 0x0a) {
    buf[start + size] = 0x0a;
    buf[start + size + 1] = 0;
  } else {
    buf[start + size] = 0;
  }
  tr.commit(ctx.cpu, ctx.task.pid);
  return size;
}
