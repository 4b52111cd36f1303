/**
 * Synthetic events (trace_events_synth.c): a SynthEvent is the dynamic event
 * and its trace event type at once — its fields (8-byte slots, fixed strings
 * take STR_VAR_LEN_MAX), format, print fmt and listing, the records whoever
 * fires it builds (hist triggers' onmatch/onmax actions, or the library), and
 * print_synth_event()'s `name: field=value field=value` output.
 * The parser half is trace_events_synth_parse.ts.
 */
import type { ExecContext } from '../../kernel/context.js';
import { TRACE_ENTRY_SIZE, writeCommonHeader, type EventField, type OutputContext, type TraceEventType, type TraceRecord } from '../event_type.js';
import type { EventFile } from '../events/event_file.js';
import type { KRet } from '../probe/parse_context.js';
import type { EventView } from '../probe/probe_env.js';
import { arrayWithoutLength } from '../probe/trace_probe.js';
import { sprintSymbol } from './probe_memory.js';
import type { DynEvent, DynEventRegistry } from './trace_dynevent.js';

export const SYNTH_SYSTEM = 'synthetic';
/** MAX_FILTER_STR_VAL: bytes a fixed-size string field takes in a record. */
export const STR_VAR_LEN_MAX = 256;

export interface SynthField {
  /** Type as the format file shows it (`u64`, `char[16]`, `__data_loc char[]`). */
  type: string;
  name: string;
  size: number;
  signed: boolean;
  string: boolean;
  stack: boolean;
  dynamic: boolean;
}

/** synth_field_fmt(): the printf format of a field, in the print fmt and the verbose output. */
function fieldFmt(type: string): string {
  const t: Record<string, string> = {
    s64: '%lld', u64: '%llu', s32: '%d', u32: '%u', s16: '%d', u16: '%u', s8: '%d', u8: '%u', char: '%d',
    'unsigned char': '%u', int: '%d', 'unsigned int': '%u', long: '%ld', 'unsigned long': '%lu', bool: '%d',
    pid_t: '%d', gfp_t: '%x',
  };
  if (Object.hasOwn(t, type)) return t[type];
  if (type.includes('char[') || type.includes('long[')) return '%s';
  return '%llu';
}

/** A value for a synthetic field: a number, a string for string fields, the entries of a stack for stack fields. */
type SynthValue = bigint | number | string | readonly bigint[];

/** A stack field's data: the number of entries, then the entries (as a hist variable holds a stack). */
function stackBytes(entries: readonly bigint[]): Buffer {
  const n = Math.min(entries.length, 31);
  const b = Buffer.alloc((n + 1) * 8);
  b.writeBigUInt64LE(BigInt(n), 0);
  for (let i = 0; i < n; i++) b.writeBigUInt64LE(BigInt.asUintN(64, entries[i]!), (i + 1) * 8);
  return b;
}

export class SynthEvent implements DynEvent, TraceEventType {
  readonly type = 'synth';
  readonly system = SYNTH_SYSTEM;
  /** common_type: given when the event joins the events layer. */
  id = 0;
  /** Set by the events layer when enabled in an instance. */
  enabled = false;
  /** References from hist triggers and open files (synth_event->ref, dyn refcount). */
  refs = 0;
  /** The record layout (synth_event_define_fields). */
  readonly fields: readonly EventField[];

  constructor(
    private readonly reg: DynEventRegistry,
    readonly name: string,
    readonly synthFields: readonly SynthField[],
    /** Between `name=fmt` pairs of the print fmt: 6.12 had `, `. */
    private readonly fmtSeparator = ' ',
  ) {
    let offset = TRACE_ENTRY_SIZE;
    this.fields = synthFields.map((f) => {
      const field: EventField = { type: arrayWithoutLength(f.type), name: f.name, offset, size: f.size, signed: f.signed };
      offset += f.string && !f.dynamic ? STR_VAR_LEN_MAX : 8;
      return field;
    });
  }

  get printFmt(): string {
    const parts = this.synthFields.map((f) => `${f.name}=${fieldFmt(f.type)}`);
    let s = `"${parts.join(this.fmtSeparator)}"`;
    for (const f of this.synthFields) {
      if (f.string && f.dynamic) s += `, __get_str(${f.name})`;
      else if (f.stack) s += `, __get_stacktrace(${f.name})`;
      else s += `, REC->${f.name}`;
    }
    return s;
  }

  view(): EventView {
    return { system: this.system, name: this.name, fields: this.fields, kind: 'synthetic' };
  }

  // ------------------------------------------------------------ dynamic_events

  /** __synth_event_show(): `s:synthetic/name\ttype name; type name`. */
  show(): string {
    return `s:${SYNTH_SYSTEM}/${this.name}\t${this.synthFields.map((f) => `${f.type.replace(/^__data_loc /, '')} ${f.name}`).join('; ')}`;
  }

  match(system: string | undefined, event: string): boolean {
    return this.name === event && (system === undefined || system === SYNTH_SYSTEM);
  }

  isBusy(): boolean {
    return this.refs > 0;
  }

  free(): KRet {
    if (this.reg.isBusy(this)) return 'EBUSY';
    this.reg.unregisterEvent(this);
    this.reg.remove(this);
    return 0;
  }

  // ------------------------------------------------------------ the events layer

  enable(): void {
    this.enabled = true;
  }

  disable(): void {
    this.enabled = false;
  }

  fileEnabled(_file: EventFile, _on: boolean): void {}

  /** trace_synth(): a record from one value per field, in order. */
  build(ctx: ExecContext, values: readonly SynthValue[]): Buffer {
    const fields = this.synthFields;
    const layout = this.fields;
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

  /** print_synth_event(). */
  output(rec: TraceRecord, ctx: OutputContext): string {
    const data = rec.data;
    const fields = this.synthFields;
    const layout = this.fields;
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
        const kernel = this.reg.live().kernel;
        for (let j = 1; j < Math.floor(len / 8); j++) s += `=> ${sprintSymbol(kernel, data.readBigUInt64LE(off + j * 8))}\n`;
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
