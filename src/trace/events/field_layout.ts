/**
 * How an event field sits in a record: what the printer, the filter and the
 * record builder need to read or write it, derived from its format line.
 */
import type { EventField } from '../event_type.js';
import { type IntBits, scalarType } from './print_fmt/value.js';

type FieldKind =
  /** An integer or pointer of 1, 2, 4 or 8 bytes. */
  | 'int'
  /** A fixed array (char comm[16], unsigned long args[6]). */
  | 'array'
  /** `__data_loc T[]`: a u32 (len << 16 | offset from the record start) pointing at the data. */
  | 'data_loc'
  /** `__rel_loc T[]`: like data_loc, the offset counted from the end of the field. */
  | 'rel_loc'
  /** Anything else (a struct by value): raw bytes. */
  | 'bytes';

export interface FieldLayout extends EventField {
  kind: FieldKind;
  /** Element (or scalar) width and sign. */
  elemBits: IntBits;
  elemSigned: boolean;
  /** Char arrays and strings: compared and printed as text. */
  isString: boolean;
  /** A pointer type (for %p, .function and the like). */
  isPointer: boolean;
}

/** Splits a format declaration "char prev_comm[16]" into its type "char[16]" and name "prev_comm". */
export function splitDecl(decl: string): { type: string; name: string } {
  const m = /^(.*?)\s*([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?$/.exec(decl);
  if (!m) return { type: decl, name: decl };
  const [, base, name, arr] = m;
  if (base.startsWith('__data_loc') || base.startsWith('__rel_loc')) return { type: arr ? base + arr : base, name };
  return { type: arr ? base + arr : base, name };
}

/** The declaration a format file shows for a field (the kernel's rule for array types). */
export function fieldDecl(f: Pick<EventField, 'type' | 'name'>): string {
  const br = f.type.indexOf('[');
  if (br < 0 || f.type.startsWith('__data_loc') || f.type.startsWith('__rel_loc')) return `${f.type} ${f.name}`;
  return `${f.type.slice(0, br)} ${f.name}${f.type.slice(br)}`;
}

function bitsOf(size: number): IntBits | undefined {
  return size === 1 ? 8 : size === 2 ? 16 : size === 4 ? 32 : size === 8 ? 64 : undefined;
}

export function fieldLayout(f: EventField): FieldLayout {
  const t = f.type.replace(/\s+/g, ' ').trim();
  const isPointer = /\*/.test(t.replace(/\[.*$/, ''));
  const loc = /^__(data|rel)_loc\s+(.*?)\s*\[\s*\]$/.exec(t);
  if (loc) {
    const elem = scalarType(loc[2]) ?? { bits: 8 as IntBits, signed: false };
    return {
      ...f,
      kind: loc[1] === 'data' ? 'data_loc' : 'rel_loc',
      elemBits: elem.bits,
      elemSigned: elem.signed,
      isString: /^(unsigned )?char$/.test(loc[2].replace(/\bconst\b/g, '').trim()),
      isPointer: false,
    };
  }
  const arr = /^(.*?)\s*\[\s*(\d*)\s*\]$/.exec(t);
  if (arr) {
    const base = arr[1];
    const n = arr[2] ? Number(arr[2]) : 0;
    const st = scalarType(base, /\*/.test(base) ? 1 : 0);
    const elemBits = st?.bits ?? bitsOf(n > 0 ? f.size / n : 1) ?? 8;
    return {
      ...f,
      kind: 'array',
      elemBits,
      elemSigned: st?.signed ?? false,
      isString: /^(unsigned |signed )?char$/.test(base.replace(/\bconst\b/g, '').trim()),
      isPointer: false,
    };
  }
  const bits = bitsOf(f.size);
  if (bits === undefined) return { ...f, kind: 'bytes', elemBits: 8, elemSigned: false, isString: false, isPointer };
  return { ...f, kind: 'int', elemBits: bits, elemSigned: f.signed, isString: false, isPointer };
}

/** The four common fields every record starts with (struct trace_entry). */
export const COMMON_FIELDS: readonly EventField[] = [
  { type: 'unsigned short', name: 'common_type', offset: 0, size: 2, signed: false },
  { type: 'unsigned char', name: 'common_flags', offset: 2, size: 1, signed: false },
  { type: 'unsigned char', name: 'common_preempt_count', offset: 3, size: 1, signed: false },
  { type: 'int', name: 'common_pid', offset: 4, size: 4, signed: true },
];

/** Reads an integer field (any of 1/2/4/8 bytes) as its C value. */
export function readInt(data: Buffer, off: number, bits: IntBits, signed: boolean): bigint {
  if (off + bits / 8 > data.length) return 0n;
  switch (bits) {
    case 8:
      return BigInt(signed ? data.readInt8(off) : data.readUInt8(off));
    case 16:
      return BigInt(signed ? data.readInt16LE(off) : data.readUInt16LE(off));
    case 32:
      return BigInt(signed ? data.readInt32LE(off) : data.readUInt32LE(off));
    default:
      return signed ? data.readBigInt64LE(off) : data.readBigUInt64LE(off);
  }
}

/** The bytes a data_loc / rel_loc field points at. */
export function dynamicBytes(data: Buffer, f: FieldLayout): Buffer {
  if (f.offset + 4 > data.length) return Buffer.alloc(0);
  const loc = data.readUInt32LE(f.offset);
  let off = loc & 0xffff;
  const len = loc >>> 16;
  if (f.kind === 'rel_loc') off += f.offset + 4;
  return data.subarray(Math.min(off, data.length), Math.min(off + len, data.length));
}
