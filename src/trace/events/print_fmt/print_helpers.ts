/** The trace_print_*_seq() helpers behind __print_flags, __print_symbolic, __print_hex and friends. */
import { vsprintf } from './vsprintf.js';
import { type IntBits, int, toBig, type Val } from './value.js';

interface FlagName {
  mask: bigint;
  name: string;
}

/** __print_flags: names of the masks that are set, joined by `delim`, then the leftover bits in hex. */
export function printFlags(value: bigint, delim: string, names: readonly FlagName[], bits: IntBits = 64): string {
  let flags = BigInt.asUintN(bits, value);
  let out = '';
  let first = true;
  for (let i = 0; i < names.length && flags !== 0n; i++) {
    const mask = BigInt.asUintN(bits, names[i].mask);
    if ((flags & mask) !== mask) continue;
    flags &= ~mask;
    if (!first && delim) out += delim;
    else first = false;
    out += names[i].name;
  }
  if (flags !== 0n) {
    if (!first && delim) out += delim;
    out += `0x${flags.toString(16)}`;
  }
  return out;
}

/** __print_symbolic: the name of the value, or the value in hex. */
export function printSymbolic(value: bigint, names: readonly FlagName[], bits: IntBits = 64): string {
  const v = BigInt.asUintN(bits, value);
  for (const n of names) if (BigInt.asUintN(bits, n.mask) === v) return n.name;
  return `0x${v.toString(16)}`;
}

/** __print_hex / __print_hex_str: rows of 16 bytes, "%*ph" (spaced) or "%*phN" (joined). */
export function printHex(buf: Buffer, concatenate: boolean): string {
  let out = '';
  for (let i = 0; i < buf.length; i += 16) {
    if (!concatenate && i !== 0) out += ' ';
    const row = [...buf.subarray(i, i + 16)].map((b) => b.toString(16).padStart(2, '0'));
    out += row.join(concatenate ? '' : ' ');
  }
  return out;
}

/** __print_array: "{0x1,0x2}" with elements of 1, 2, 4 or 8 bytes. */
export function printArray(buf: Buffer, count: number, elSize: number): string {
  let out = '{';
  let prefix = '';
  let off = 0;
  const end = Math.min(buf.length, count * elSize);
  while (off < end) {
    let v: bigint;
    let size = elSize;
    switch (elSize) {
      case 1:
        v = BigInt(buf.readUInt8(off));
        break;
      case 2:
        v = off + 2 <= buf.length ? BigInt(buf.readUInt16LE(off)) : 0n;
        break;
      case 4:
        v = off + 4 <= buf.length ? BigInt(buf.readUInt32LE(off)) : 0n;
        break;
      case 8:
        v = off + 8 <= buf.length ? buf.readBigUInt64LE(off) : 0n;
        break;
      default:
        out += `${prefix}BAD SIZE:${elSize} 0x${buf.readUInt8(off).toString(16)}`;
        prefix = ',';
        size = 1;
        off += size;
        continue;
    }
    out += `${prefix}0x${v.toString(16)}`;
    prefix = ',';
    off += size;
  }
  return out + '}';
}

/** __print_hex_dump: a newline, then print_hex_dump()-style rows. */
export function printHexDump(prefix: string, prefixType: number, rowSize: number, groupSize: number, buf: Buffer, ascii: boolean): string {
  if (rowSize !== 16 && rowSize !== 32) rowSize = 16;
  if (![1, 2, 4, 8].includes(groupSize)) groupSize = 1;
  let out = '\n';
  for (let i = 0; i < buf.length; i += rowSize) {
    const row = buf.subarray(i, Math.min(i + rowSize, buf.length));
    const g = row.length % groupSize === 0 ? groupSize : 1;
    const groups: string[] = [];
    for (let k = 0; k < row.length; k += g) {
      let hex = '';
      for (let b = g - 1; b >= 0; b--) hex += row[k + b].toString(16).padStart(2, '0');
      groups.push(hex);
    }
    let line = groups.join(' ');
    if (ascii) {
      const width = (rowSize / g) * (2 * g + 1) - 1;
      line = line.padEnd(width + 2, ' ') + [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    }
    const pfx = prefixType === 2 ? vsprintf('%s%.8x: ', [{ k: 'str', s: prefix }, int(BigInt(i))]) : prefixType === 1 ? `${prefix}${i.toString(16).padStart(16, '0')}: ` : prefix;
    out += `${pfx}${line}\n`;
  }
  return out;
}

/** Entries `{ mask, "name" }` of a list argument. */
export function flagNames(lists: readonly Val[]): FlagName[] {
  const out: FlagName[] = [];
  for (const l of lists) {
    if (l.k !== 'list' || l.items.length < 2) continue;
    const name = l.items[1];
    out.push({ mask: toBig(l.items[0]), name: name.k === 'str' ? name.s : '' });
  }
  return out;
}
