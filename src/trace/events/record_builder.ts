/**
 * Builds an event record from tracepoint arguments keyed by field name: the
 * assign step of TRACE_EVENT (TP_fast_assign), done generically from the
 * event's format. Dynamic fields (__string, __dynamic_array) are appended
 * after the fixed part, each located by its u32 (len << 16 | offset).
 */
import type { ExecContext } from '../../kernel/context.js';
import type { EventField } from '../event_type.js';
import { writeCommonHeader } from '../event_type.js';
import { fieldLayout, type FieldLayout } from './field_layout.js';
import { writeU64LE } from '../../kernel/u64_le.js';

/** Where `const char *` arguments given as strings get an address (the kernel's rodata). */
export interface KernelStrings {
  addressOf(s: string): bigint;
}

type Value = unknown;

function toBig(v: Value, strings?: KernelStrings): bigint {
  switch (typeof v) {
    case 'bigint':
      return v;
    case 'number':
      return Number.isFinite(v) ? BigInt(Math.trunc(v)) : 0n;
    case 'boolean':
      return v ? 1n : 0n;
    case 'string':
      return strings ? strings.addressOf(v) : 0n;
    default:
      return 0n;
  }
}

function writeInt(buf: Buffer, off: number, size: number, v: bigint): void {
  if (off + size > buf.length) return;
  switch (size) {
    case 1:
      buf.writeUInt8(Number(BigInt.asUintN(8, v)), off);
      break;
    case 2:
      buf.writeUInt16LE(Number(BigInt.asUintN(16, v)), off);
      break;
    case 4:
      buf.writeUInt32LE(Number(BigInt.asUintN(32, v)), off);
      break;
    case 8:
      writeU64LE(buf, off, BigInt.asUintN(64, v));
      break;
  }
}

/** Bytes of a dynamic field's value: strings get their NUL, arrays their element width. */
function dynamicBytes(f: FieldLayout, v: Value): Buffer {
  if (v === undefined || v === null) return f.isString ? Buffer.from([0]) : Buffer.alloc(0);
  if (typeof v === 'string') return f.isString ? Buffer.from(v + '\0', 'latin1') : Buffer.from(v, 'latin1');
  if (v instanceof Uint8Array) return Buffer.from(v);
  if (Array.isArray(v)) {
    const size = f.elemBits / 8;
    const b = Buffer.alloc(v.length * size);
    v.forEach((x, i) => writeInt(b, i * size, size, toBig(x)));
    return b;
  }
  return Buffer.alloc(0);
}

export class RecordBuilder {
  private readonly fixed: FieldLayout[] = [];
  private readonly dynamic: FieldLayout[] = [];
  /** Size of the fixed part: the dynamic data starts here. */
  readonly fixedSize: number;

  constructor(
    private readonly typeId: number,
    fields: readonly EventField[],
    private readonly strings?: KernelStrings,
  ) {
    let end = 8;
    for (const f of fields) {
      const l = fieldLayout(f);
      if (l.kind === 'data_loc' || l.kind === 'rel_loc') this.dynamic.push(l);
      else this.fixed.push(l);
      end = Math.max(end, f.offset + f.size);
    }
    this.fixedSize = end;
  }

  build(ctx: ExecContext, args: Readonly<Record<string, unknown>>): Buffer {
    const dyn = this.dynamic.map((f) => dynamicBytes(f, args[f.name]));
    const total = this.fixedSize + dyn.reduce((n, b) => n + b.length, 0);
    const buf = Buffer.alloc(total);
    writeCommonHeader(buf, this.typeId, ctx);
    for (const f of this.fixed) {
      const v = args[f.name];
      if (v === undefined) continue;
      if (f.kind === 'int') writeInt(buf, f.offset, f.size, toBig(v, this.strings));
      else if (f.kind === 'array') {
        if (typeof v === 'string') buf.write(v.slice(0, f.isString ? f.size - 1 : f.size), f.offset, 'latin1');
        else if (v instanceof Uint8Array) Buffer.from(v).copy(buf, f.offset, 0, Math.min(v.length, f.size));
        else if (Array.isArray(v)) {
          const size = f.elemBits / 8;
          v.slice(0, Math.floor(f.size / size)).forEach((x, i) => writeInt(buf, f.offset + i * size, size, toBig(x, this.strings)));
        }
      } else if (v instanceof Uint8Array) Buffer.from(v).copy(buf, f.offset, 0, Math.min(v.length, f.size));
    }
    let off = this.fixedSize;
    this.dynamic.forEach((f, i) => {
      const len = dyn[i].length;
      const loc = f.kind === 'rel_loc' ? off - (f.offset + 4) : off;
      buf.writeUInt32LE(((len & 0xffff) << 16) | (loc & 0xffff), f.offset);
      dyn[i].copy(buf, off);
      off += len;
    });
    return buf;
  }
}

/** Strings given for `const char *` fields: interned at stable fake rodata addresses. */
export class KernelStringTable implements KernelStrings {
  private readonly byString = new Map<string, bigint>();
  private readonly byAddr = new Map<bigint, string>();
  private next: bigint;

  constructor(base = 0xffffffff82a00000n) {
    this.next = base;
  }

  addressOf(s: string): bigint {
    let a = this.byString.get(s);
    if (a === undefined) {
      a = this.next;
      this.next += BigInt(s.length + 1 + 7) & ~7n;
      this.byString.set(s, a);
      this.byAddr.set(a, s);
    }
    return a;
  }

  stringAt(addr: bigint): string | undefined {
    return this.byAddr.get(addr);
  }
}
