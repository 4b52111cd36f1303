/**
 * Unsigned 64-bit little-endian values in Buffers, as records and stacks
 * hold them. Buffer's own readBigUInt64LE / writeBigUInt64LE split the value
 * into halves with BigInt arithmetic (~100-200 ns each), and a DataView over
 * a small record's buffer costs more to make than it saves; the value goes
 * through one 8-byte scratch word instead, copied byte by byte (the host is
 * little-endian, as every machine Node runs tracefs on). Same bounds and
 * range errors as Buffer's.
 */

const U64_MAX = (1n << 64n) - 1n;

const word = new BigUint64Array(1);
const bytes = new Uint8Array(word.buffer);
if (new Uint16Array(new Uint8Array([1, 0]).buffer)[0] !== 1) throw new Error('tracefs-emu needs a little-endian host');

function checkOffset(buf: Uint8Array, off: number): void {
  if (!(off >= 0 && off + 8 <= buf.length)) throw new RangeError(`offset ${off} out of range for 8 bytes of ${buf.length}`);
}

export function readU64LE(buf: Uint8Array, off: number): bigint {
  checkOffset(buf, off);
  for (let i = 0; i < 8; i++) bytes[i] = buf[off + i]!;
  return word[0]!;
}

export function writeU64LE(buf: Uint8Array, off: number, v: bigint): void {
  checkOffset(buf, off);
  if (v < 0n || v > U64_MAX) throw new RangeError(`value ${v} out of range for 64 unsigned bits`);
  word[0] = v;
  for (let i = 0; i < 8; i++) buf[off + i] = bytes[i]!;
}
