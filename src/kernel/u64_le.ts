/**
 * Unsigned 64-bit little-endian values in Buffers, as records and stacks
 * hold them. Buffer's own readBigUInt64LE / writeBigUInt64LE split the value
 * into halves with BigInt arithmetic (~100-200 ns each); a DataView reads and
 * writes it whole (~20 ns). Same bounds and range errors as Buffer's.
 */

const U64_MAX = (1n << 64n) - 1n;

/** The view of the last buffer used (records and pages are read and written in runs), else each buffer's own. */
let lastBuffer: ArrayBufferLike | undefined;
let lastView: DataView | undefined;
const views = new WeakMap<ArrayBufferLike, DataView>();

function viewOf(buf: Uint8Array): DataView {
  const ab = buf.buffer;
  if (ab === lastBuffer && lastView) return lastView;
  let v = views.get(ab);
  if (!v) views.set(ab, (v = new DataView(ab)));
  lastBuffer = ab;
  lastView = v;
  return v;
}

function checkOffset(buf: Uint8Array, off: number): void {
  if (!(off >= 0 && off + 8 <= buf.length)) throw new RangeError(`offset ${off} out of range for 8 bytes of ${buf.length}`);
}

export function readU64LE(buf: Uint8Array, off: number): bigint {
  checkOffset(buf, off);
  return viewOf(buf).getBigUint64(buf.byteOffset + off, true);
}

export function writeU64LE(buf: Uint8Array, off: number, v: bigint): void {
  checkOffset(buf, off);
  if (v < 0n || v > U64_MAX) throw new RangeError(`value ${v} out of range for 64 unsigned bits`);
  viewOf(buf).setBigUint64(buf.byteOffset + off, v, true);
}
