/**
 * The trace event of a synthetic event (trace_events_synth.c): 8-byte field
 * slots (fixed strings take STR_VAR_LEN_MAX), and print_synth_event()'s
 * `name: field=value field=value` output. Records come from whoever fires
 * the event (hist triggers' onmatch/onmax actions, or the library).
 */
import type { ExecContext } from '../../kernel/context.js';
import type { Kernel } from '../../kernel/kernel.js';
import { TRACE_ENTRY_SIZE, writeCommonHeader, type EventField, type OutputContext, type TraceEventType, type TraceRecord } from '../event_type.js';
import { STR_VAR_LEN_MAX, type SynthEvent } from '../probe/synth.js';
import { sprintSymbol } from './probe_memory.js';

/** synth_field_fmt(). */
function fieldFmt(type: string): string {
  const t: Record<string, string> = {
    s64: '%lld', u64: '%llu', s32: '%d', u32: '%u', s16: '%d', u16: '%u', s8: '%d', u8: '%u', char: '%d',
    'unsigned char': '%u', int: '%d', 'unsigned int': '%u', long: '%ld', 'unsigned long': '%lu', bool: '%d',
    pid_t: '%d', gfp_t: '%x',
  };
  if (Object.hasOwn(t, type)) return t[type];
  if (type.includes('char[')) return '%s';
  return '%llu';
}

/** A value for a synthetic field: a number, a string for string fields, the entries of a stack for stack fields. */
export type SynthValue = bigint | number | string | readonly bigint[];

/** A stack field's data: the number of entries, then the entries (as a hist variable holds a stack). */
function stackBytes(entries: readonly bigint[]): Buffer {
  const n = Math.min(entries.length, 31);
  const b = Buffer.alloc((n + 1) * 8);
  b.writeBigUInt64LE(BigInt(n), 0);
  for (let i = 0; i < n; i++) b.writeBigUInt64LE(BigInt.asUintN(64, entries[i]!), (i + 1) * 8);
  return b;
}

export class SynthEventType implements TraceEventType {
  constructor(
    readonly id: number,
    readonly se: SynthEvent,
    private readonly kernel: Kernel,
  ) {}

  get system(): string {
    return this.se.system;
  }

  get name(): string {
    return this.se.name;
  }

  get fields(): readonly EventField[] {
    return this.se.formatFields();
  }

  get printFmt(): string {
    return this.se.printFmt();
  }

  /** trace_synth(): a record from one value per field, in order. */
  build(ctx: ExecContext, values: readonly SynthValue[]): Buffer {
    const fields = this.se.fields;
    const layout = this.se.formatFields();
    let fixed = TRACE_ENTRY_SIZE;
    for (const f of fields) fixed += f.string && !f.dynamic ? STR_VAR_LEN_MAX : 8;
    const dyn: Buffer[] = fields.map((f, i) => {
      const v = values[i];
      if (f.stack) return stackBytes(Array.isArray(v) ? v : []);
      return f.string && f.dynamic ? Buffer.from(String(v ?? '') + '\0', 'latin1') : Buffer.alloc(0);
    });
    const buf = Buffer.alloc(fixed + dyn.reduce((n, b) => n + b.length, 0));
    writeCommonHeader(buf, this.id, ctx);
    let off = fixed;
    fields.forEach((f, i) => {
      const at = layout[i].offset;
      const v = values[i];
      if ((f.string && f.dynamic) || f.stack) {
        buf.writeUInt16LE(off, at);
        buf.writeUInt16LE(dyn[i].length, at + 2);
        dyn[i].copy(buf, off);
        off += dyn[i].length;
      } else if (f.string) {
        Buffer.from(String(v ?? ''), 'latin1').copy(buf, at, 0, STR_VAR_LEN_MAX - 1);
      } else {
        const n = BigInt.asUintN(64, typeof v === 'string' || Array.isArray(v) ? 0n : BigInt((v as bigint | number | undefined) ?? 0));
        switch (f.size) {
          case 1:
            buf.writeUInt8(Number(n & 0xffn), at);
            break;
          case 2:
            buf.writeUInt16LE(Number(n & 0xffffn), at);
            break;
          case 4:
            buf.writeUInt32LE(Number(n & 0xffffffffn), at);
            break;
          default:
            buf.writeBigUInt64LE(n, at);
        }
      }
    });
    return buf;
  }

  output(rec: TraceRecord, ctx: OutputContext): string {
    const data = rec.data;
    const fields = this.se.fields;
    const layout = this.se.formatFields();
    let s = `${this.name}: `;
    const verbose = ctx.option('verbose');
    fields.forEach((f, i) => {
      const fmt = fieldFmt(f.type);
      const space = i === fields.length - 1 ? '' : ' ';
      const at = layout[i].offset;
      if (verbose) s += `${fmt} `;
      if (f.string) {
        let start = at;
        let end: number;
        if (f.dynamic) {
          start = data.readUInt16LE(at);
          end = start + data.readUInt16LE(at + 2);
        } else end = at + STR_VAR_LEN_MAX;
        const z = data.indexOf(0, start);
        s += `${f.name}=${data.subarray(start, z >= 0 && z < end ? z : end).toString('latin1')}${space}`;
      } else if (f.stack) {
        const off = data.readUInt16LE(at);
        const len = data.readUInt16LE(at + 2);
        s += `${f.name}=STACK:\n`;
        for (let j = 1; j < Math.floor(len / 8); j++) s += `=> ${sprintSymbol(this.kernel, data.readBigUInt64LE(off + j * 8))}\n`;
      } else {
        let v: bigint;
        switch (f.size) {
          case 1:
            v = BigInt(data.readUInt8(at));
            break;
          case 2:
            v = BigInt(data.readUInt16LE(at));
            break;
          case 4:
            v = BigInt(fmt === '%d' ? data.readInt32LE(at) : data.readUInt32LE(at));
            break;
          default:
            v = fmt === '%lld' || fmt === '%ld' || fmt === '%d' ? data.readBigInt64LE(at) : data.readBigUInt64LE(at);
        }
        s += `${f.name}=${fmt === '%x' ? v.toString(16) : v.toString()}${space}`;
      }
    });
    return s;
  }
}
