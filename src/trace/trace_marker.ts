/**
 * trace_marker and trace_marker_raw: user space text and binary records
 * (ftrace/print, ftrace/raw_data) written into a trace array's buffer, split
 * and limited as the series' profile says (markerCopy, copyTraceMarker).
 */
import type { ExecContext } from '../kernel/context.js';
import { fail } from '../kernel/errno.js';
import { PRINT_ENTRY_BUF } from './ftrace_entries.js';
import { markWriteIp } from './ksym.js';
import type { TraceArray } from './trace_array.js';

/** Largest write taken at once (TRACE_MARKER_MAX_SIZE). */
const TRACE_MARKER_MAX_SIZE = 4096;
/** Copied in the event, a marker keeps room for "<faulted>". */
const FAULTED_SIZE = 9;

function writeHeader(buf: Buffer, off: number, type: number, ctx: ExecContext): void {
  buf.writeUInt16LE(type, off);
  buf[off + 2] = ctx.flags & 0xff;
  buf[off + 3] = ctx.preemptCount & 0xff;
  buf.writeInt32LE(ctx.task.pid, off + 4);
}

/**
 * Writes a trace_marker record (write_marker_to_buffer()). Returns the bytes
 * taken, which may be fewer than given when the event would not fit a
 * sub-buffer: the writer then writes the rest as another event.
 */
function markerToBuffer(tr: TraceArray, text: Buffer, cnt: number, ip: bigint, ctx: ExecContext): number {
  const metaSize = PRINT_ENTRY_BUF + 2; // entry, ip, then '\n' and '\0'
  const inEvent = tr.profile.markerCopy === 'in-event';
  const maxSize = () => tr.buffer.maxEventSize();
  for (let tries = 0; tries < 2; tries++) {
    let size = cnt + metaSize;
    if (inEvent && cnt < FAULTED_SIZE) size += FAULTED_SIZE - cnt;
    const cpu = ctx.cpu;
    // A snapshot trigger swaps the buffers between reserve and commit: the entry stays where it was reserved.
    const buffer = tr.buffer;
    const r = tr.reserve(cpu, size);
    if (!r) {
      if (size > maxSize()) {
        cnt = maxSize() - metaSize;
        continue;
      }
      fail('EBADF');
    }
    const { buf, off } = r;
    writeHeader(buf, off, tr.tracing.ftraceTypes.print.id, ctx);
    buf.writeBigUInt64LE(ip, off + 8);
    const start = off + PRINT_ENTRY_BUF;
    text.copy(buf, start, 0, cnt);
    if (tr.markerHook) {
      buf[start + cnt] = 0;
      tr.markerHook(Buffer.from(buf.subarray(off, start + cnt + 1)), cpu);
    }
    if (cnt === 0 || buf[start + cnt - 1] !== 0x0a) {
      buf[start + cnt] = 0x0a;
      buf[start + cnt + 1] = 0;
    } else {
      buf[start + cnt] = 0;
    }
    tr.commit(cpu, ctx.task.pid, buffer);
    return cnt;
  }
  fail('EBADF');
}

/** tracing_mark_write(): `data` written to `tr`'s trace_marker by the task of `ctx`. */
export function writeTraceMarker(tr: TraceArray, data: Buffer, ctx: ExecContext): number {
  if (!tr.options.has('markers')) fail('EINVAL');
  const cnt = Math.min(data.length, TRACE_MARKER_MAX_SIZE);
  const ip = markWriteIp(tr.tracing.kernel);
  if (!tr.isTop || !tr.profile.copyTraceMarker) return markerToBuffer(tr, data, cnt, ip, ctx);
  // The top-level marker goes to every array with copy_trace_marker set.
  let written = -1;
  for (const t of tr.tracing.markerCopies) {
    written = markerToBuffer(t, data, cnt, ip, ctx);
  }
  if (written < 0) fail('ENODEV');
  return written;
}

/** tracing_mark_raw_write(): a 4-byte id then binary data, all or nothing. */
export function writeTraceMarkerRaw(tr: TraceArray, data: Buffer, ctx: ExecContext): number {
  if (!tr.options.has('markers')) fail('EINVAL');
  const cnt = data.length;
  if (cnt < 4) fail('EINVAL');
  const inEvent = tr.profile.markerCopy === 'in-event';
  if (!inEvent && cnt > TRACE_MARKER_MAX_SIZE) fail('EINVAL');
  const one = (t: TraceArray): number => {
    // The header and the bytes; copied in the event, a whole struct raw_data_entry more, "<faulted>" at least.
    let size = inEvent ? 12 + cnt : 8 + cnt;
    if (inEvent && cnt < FAULTED_SIZE + 4) size += FAULTED_SIZE + 4 - cnt;
    if (size > t.buffer.maxEventSize()) fail('EINVAL');
    const r = t.reserve(ctx.cpu, size);
    if (!r) fail('EBADF');
    writeHeader(r.buf, r.off, t.tracing.ftraceTypes.rawData.id, ctx);
    data.copy(r.buf, r.off + 8);
    t.commit(ctx.cpu, ctx.task.pid);
    return cnt;
  };
  if (!tr.isTop || !tr.profile.copyTraceMarker) return one(tr);
  let written = -1;
  for (const t of tr.tracing.markerCopies) written = one(t);
  if (written < 0) fail('ENODEV');
  return written;
}
