/**
 * The binary layout of ring buffer sub-buffers and of the compressed event
 * headers inside them (events/header_page, events/header_event), as x86_64
 * kernels write them: what trace-cmd decodes from trace_pipe_raw.
 *
 * Sub-buffer: u64 time_stamp, local_t commit (8 bytes), then the data.
 * Event: u32 { type_len:5, time_delta:27 } then array[]:
 *   type_len 1..28  data of type_len * 4 bytes at array[0]
 *   type_len 0      array[0] = length (itself included), data at array[1]
 *   29 padding      time_delta 0: end of page; else array[0] = bytes skipped
 *   30 time extend  array[0] = delta >> 27 (8 bytes, precedes a data event)
 *   31 time stamp   absolute timestamp, same encoding
 */

export const PAGE_SIZE = 4096;
/** Sub-buffer header: time_stamp (8) + commit (8). */
export const BUF_PAGE_HDR_SIZE = 16;
export const RB_EVNT_HDR_SIZE = 4;
const RB_ALIGNMENT = 4;
export const RB_MAX_SMALL_DATA = 28 * RB_ALIGNMENT;
export const RB_EVNT_MIN_SIZE = 8;
export const RB_LEN_TIME_EXTEND = 8;

export const RINGBUF_TYPE_DATA_TYPE_LEN_MAX = 28;
export const RINGBUF_TYPE_PADDING = 29;
export const RINGBUF_TYPE_TIME_EXTEND = 30;
export const RINGBUF_TYPE_TIME_STAMP = 31;

const TS_SHIFT = 27;
/** 2^27: deltas this large need a time extend. */
export const TS_DELTA_LIMIT = 2 ** TS_SHIFT;

/** Flags in the commit field of a page handed to a reader. */
export const RB_MISSED_EVENTS = 2 ** 31;
export const RB_MISSED_STORED = 2 ** 30;

/** Bytes an event with `dataLen` bytes of payload takes (header and alignment included). */
export function eventLength(dataLen: number): number {
  let length = dataLen === 0 ? 1 : dataLen;
  if (length > RB_MAX_SMALL_DATA) length += 4;
  length += RB_EVNT_HDR_SIZE;
  length = (length + RB_ALIGNMENT - 1) & ~(RB_ALIGNMENT - 1);
  // A discarded event must be able to hold a time extend or padding.
  if (length === RB_LEN_TIME_EXTEND + RB_ALIGNMENT) length += RB_ALIGNMENT;
  return length;
}

export function timeDeltaOf(header: number): number {
  return Math.floor(header / 32);
}

export function makeHeader(typeLen: number, timeDelta: number): number {
  return timeDelta * 32 + typeLen;
}

/** Length in bytes of the event at `off` (a null padding has none: -1). */
export function eventLengthAt(buf: Buffer, off: number): number {
  const h = buf.readUInt32LE(off);
  const type = h & 31;
  if (type === RINGBUF_TYPE_PADDING) {
    if (h < 32) return -1;
    return buf.readUInt32LE(off + 4) + RB_EVNT_HDR_SIZE;
  }
  if (type === RINGBUF_TYPE_TIME_EXTEND || type === RINGBUF_TYPE_TIME_STAMP) return RB_LEN_TIME_EXTEND;
  if (type === 0) return buf.readUInt32LE(off + 4) + RB_EVNT_HDR_SIZE;
  return type * RB_ALIGNMENT + RB_EVNT_HDR_SIZE;
}

/** Offset and length of the payload of the data event at `off`. */
export function eventData(buf: Buffer, off: number): { start: number; len: number } {
  const type = buf.readUInt32LE(off) & 31;
  if (type === 0) return { start: off + 8, len: buf.readUInt32LE(off + 4) - 4 };
  return { start: off + 4, len: type * RB_ALIGNMENT };
}

/** The 59-bit value of a time extend or time stamp event. */
export function extendValueAt(buf: Buffer, off: number): number {
  const h = buf.readUInt32LE(off);
  return buf.readUInt32LE(off + 4) * TS_DELTA_LIMIT + timeDeltaOf(h);
}

export function writeExtend(buf: Buffer, off: number, type: number, value: number): void {
  const hi = Math.floor(value / TS_DELTA_LIMIT);
  buf.writeUInt32LE(makeHeader(type, value - hi * TS_DELTA_LIMIT), off);
  buf.writeUInt32LE(hi >>> 0, off + 4);
}

export function writeU64(buf: Buffer, off: number, v: number): void {
  const hi = Math.floor(v / 2 ** 32);
  buf.writeUInt32LE(v - hi * 2 ** 32, off);
  buf.writeUInt32LE(hi >>> 0, off + 4);
}

export function readU64(buf: Buffer, off: number): number {
  return buf.readUInt32LE(off + 4) * 2 ** 32 + buf.readUInt32LE(off);
}

/** events/header_page for a buffer with sub-buffers of `subbufSize` bytes. */
export function pageHeaderFormat(subbufSize = PAGE_SIZE): string {
  return (
    '\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n' +
    '\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n' +
    '\tfield: char overwrite;\toffset:8;\tsize:1;\tsigned:0;\n' +
    `\tfield: char data;\toffset:16;\tsize:${subbufSize - BUF_PAGE_HDR_SIZE};\tsigned:0;\n`
  );
}

/** events/header_event. */
export function entryHeaderFormat(): string {
  return (
    '# compressed entry header\n' +
    '\ttype_len    :    5 bits\n' +
    '\ttime_delta  :   27 bits\n' +
    '\tarray       :   32 bits\n' +
    '\n' +
    `\tpadding     : type == ${RINGBUF_TYPE_PADDING}\n` +
    `\ttime_extend : type == ${RINGBUF_TYPE_TIME_EXTEND}\n` +
    `\ttime_stamp : type == ${RINGBUF_TYPE_TIME_STAMP}\n` +
    `\tdata max type_len  == ${RINGBUF_TYPE_DATA_TYPE_LEN_MAX}\n`
  );
}
