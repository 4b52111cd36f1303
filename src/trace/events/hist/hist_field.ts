/**
 * A hist trigger's field (struct hist_field): a key, a value, a variable, an
 * expression, a constant or a reference to another trigger's variable — what
 * it reads from a record (or from the map element, the clock, the task), how
 * it is named in the `hist` and `trigger` files, and its modifiers.
 */
import type { ExecContext } from '../../../kernel/context.js';
import type { EventField } from '../../event_type.js';
import { COMMON_FIELDS } from '../field_layout.js';
import { type FilterType, filterTypeOf } from '../filter/filter_parser.js';
import type { HistData } from './hist_data.js';
import type { MapElt } from './tracing_map.js';

/** enum hist_field_flags. */
export const HF = {
  HITCOUNT: 1 << 0,
  KEY: 1 << 1,
  STRING: 1 << 2,
  HEX: 1 << 3,
  SYM: 1 << 4,
  SYM_OFFSET: 1 << 5,
  EXECNAME: 1 << 6,
  SYSCALL: 1 << 7,
  STACKTRACE: 1 << 8,
  LOG2: 1 << 9,
  TIMESTAMP: 1 << 10,
  TIMESTAMP_USECS: 1 << 11,
  VAR: 1 << 12,
  EXPR: 1 << 13,
  VAR_REF: 1 << 14,
  CPU: 1 << 15,
  ALIAS: 1 << 16,
  BUCKET: 1 << 17,
  CONST: 1 << 18,
  PERCENT: 1 << 19,
  GRAPH: 1 << 20,
  COMM: 1 << 21,
} as const;

/** MAX_FILTER_STR_VAL: a string key or variable's room. */
export const MAX_FILTER_STR_VAL = 256;
/** HIST_STACKTRACE_DEPTH. */
export const HIST_STACKTRACE_DEPTH = 31;
/** HIST_DIV_SHIFT: division by a constant as a multiplication and a shift. */
const HIST_DIV_SHIFT = 20n;

export type FieldOp = 'none' | 'plus' | 'minus' | 'uminus' | 'div' | 'mult';

/** What a field computes (enum hist_field_fn). */
type FieldFn =
  | 'nop'
  | 'var_ref'
  | 'counter'
  | 'const'
  | 'log2'
  | 'bucket'
  | 'timestamp'
  | 'cpu'
  | 'comm'
  | 'string'
  | 'dynstring'
  | 'reldynstring'
  | 'pstring'
  | 'num'
  | 'uminus'
  | 'minus'
  | 'plus'
  | 'div'
  | 'div_power2'
  | 'div_not_power2'
  | 'div_mult_shift'
  | 'mult'
  | 'execname'
  | 'stack';

/** An event field as hist triggers see it (struct ftrace_event_field). */
export interface HistEventField extends EventField {
  filterType: FilterType;
}

/** A value a field yields: a number, a string, or a stack (return addresses). */
export type HistVal = bigint | string | bigint[];

/** What one evaluation sees: the record, its element, its time, its task. */
export interface EvalCtx {
  rec: Buffer;
  ctx: ExecContext;
  /** The record's timestamp in its trace clock's units. */
  ts: bigint;
  elt?: MapElt;
  /** The values the trigger's variable references resolved to, by var_ref_idx. */
  varRefVals: HistVal[];
  /** The current kernel stack (common_stacktrace). */
  stack(): bigint[];
}

export class HistField {
  field?: HistEventField;
  flags = 0;
  buckets = 0n;
  type = '';
  operands: (HistField | undefined)[] = [];
  fn: FieldFn = 'nop';
  size = 0;
  /** A key's offset in the compound key. */
  offset = 0;
  isSigned = false;
  /** Variables: their name, index and trigger; references: the variable they read. */
  varName?: string;
  varIdx = 0;
  varHist?: HistData;
  operator: FieldOp = 'none';
  system?: string;
  eventName?: string;
  /** Expressions and references: how they are named. */
  name?: string;
  varRefIdx = 0;
  readOnce = false;
  varStrIdx = 0;
  constant = 0n;
  divMultiplier = 0n;

  constructor(readonly hist: HistData) {}

  has(flag: number): boolean {
    return (this.flags & flag) !== 0;
  }

  /** hist_fn_call(). */
  value(e: EvalCtx): HistVal {
    const f = this.field;
    const num = (h: HistField | undefined): bigint => toU64(h!.value(e));
    switch (this.fn) {
      case 'var_ref':
        return e.varRefVals[this.varRefIdx] ?? 0n;
      case 'counter':
        return 1n;
      case 'const':
        return this.constant;
      case 'log2':
        return orderBase2(num(this.operands[0]));
      case 'bucket': {
        const v = num(this.operands[0]);
        return this.buckets ? (v / this.buckets) * this.buckets : v;
      }
      case 'timestamp':
        return e.ts;
      case 'cpu':
        return BigInt(e.ctx.cpu);
      case 'comm':
        return e.ctx.task.pid === 0 ? '<idle>' : e.ctx.task.comm;
      case 'string':
        return cstr(e.rec, f!.offset, f!.offset + f!.size);
      case 'dynstring':
      case 'reldynstring': {
        if (f!.offset + 4 > e.rec.length) return '';
        const item = e.rec.readUInt32LE(f!.offset);
        let loc = item & 0xffff;
        if (this.fn === 'reldynstring') loc += f!.offset + 4;
        return cstr(e.rec, loc, loc + (item >>> 16));
      }
      case 'pstring':
        return readNum(e.rec, f!.offset, 8, false);
      case 'num':
        return readNum(e.rec, f!.offset, f!.size, f!.signed);
      case 'uminus':
        return BigInt.asUintN(64, -BigInt.asIntN(64, num(this.operands[0])));
      case 'minus':
        return BigInt.asUintN(64, num(this.operands[0]) - num(this.operands[1]));
      case 'plus':
        return BigInt.asUintN(64, num(this.operands[0]) + num(this.operands[1]));
      case 'mult':
        return BigInt.asUintN(64, num(this.operands[0]) * num(this.operands[1]));
      case 'div': {
        const a = num(this.operands[0]);
        const b = num(this.operands[1]);
        return b === 0n ? BigInt.asUintN(64, -1n) : a / b;
      }
      case 'div_power2':
      case 'div_not_power2':
        return num(this.operands[0]) / this.operands[1]!.constant;
      case 'div_mult_shift': {
        const a = num(this.operands[0]);
        if (a < 1n << HIST_DIV_SHIFT) return BigInt.asUintN(64, a * this.operands[1]!.divMultiplier + ((1n << HIST_DIV_SHIFT) - 1n)) >> HIST_DIV_SHIFT;
        return a / this.operands[1]!.constant;
      }
      case 'execname':
        return e.elt?.comm ?? '(no comm)';
      case 'stack':
        return f ? stackField(e.rec, f.offset) : e.stack();
      default:
        return 0n;
    }
  }
}

/** A value as the u64 the kernel would hold (strings and stacks are pointers there: 0 here). */
export function toU64(v: HistVal): bigint {
  return typeof v === 'bigint' ? v : 0n;
}

/** order_base_2(): the exponent of the smallest power of two >= v (0 and 1 give 0). */
export function orderBase2(v: bigint): bigint {
  if (v <= 1n) return 0n;
  return BigInt((v - 1n).toString(2).length);
}

function cstr(rec: Buffer, start: number, end: number): string {
  const s = Math.min(start, rec.length);
  const e = Math.min(end, rec.length);
  const z = rec.indexOf(0, s);
  return rec.toString('latin1', s, z >= 0 && z < e ? z : e);
}

/** A field's integer as the u64 hist_field_<type>() makes of it (signed ones sign-extended). */
function readNum(rec: Buffer, off: number, size: number, signed: boolean): bigint {
  if (off + size > rec.length) return 0n;
  let v: bigint;
  switch (size) {
    case 1:
      v = BigInt(signed ? rec.readInt8(off) : rec.readUInt8(off));
      break;
    case 2:
      v = BigInt(signed ? rec.readInt16LE(off) : rec.readUInt16LE(off));
      break;
    case 4:
      v = BigInt(signed ? rec.readInt32LE(off) : rec.readUInt32LE(off));
      break;
    default:
      v = rec.readBigUInt64LE(off);
  }
  return BigInt.asUintN(64, v);
}

/** A stacktrace field of a record (__data_loc: a count, then the entries). */
function stackField(rec: Buffer, off: number): bigint[] {
  if (off + 4 > rec.length) return [];
  const item = rec.readUInt32LE(off);
  const loc = item & 0xffff;
  const len = item >>> 16;
  const out: bigint[] = [];
  for (let p = loc; p + 8 <= Math.min(loc + len, rec.length); p += 8) out.push(rec.readBigUInt64LE(p));
  return out;
}

/** is_string_field(). */
export function isStringField(f: HistEventField): boolean {
  return f.filterType === 'static_string' || f.filterType === 'dyn_string' || f.filterType === 'rdyn_string' || f.filterType === 'ptr_string';
}

/** trace_find_event_field(): the event's own fields, then the generic ones (CPU, COMM, STACKTRACE), then the common ones. */
export function findEventField(fields: readonly EventField[], name: string): HistEventField | undefined {
  const own = fields.find((f) => f.name === name);
  if (own) return { ...own, filterType: stackOrFilterType(own) };
  const generic: Record<string, FilterType> = { CPU: 'cpu', cpu: 'cpu', COMM: 'comm', comm: 'comm', STACKTRACE: 'stacktrace', stacktrace: 'stacktrace' };
  if (Object.hasOwn(generic, name)) return { type: name === 'CPU' || name === 'cpu' ? 'int' : 'char *', name, offset: 0, size: 0, signed: name === 'CPU' || name === 'cpu', filterType: generic[name]! };
  const common = COMMON_FIELDS.find((f) => f.name === name);
  return common ? { ...common, filterType: 'other' } : undefined;
}

/** A synthetic event's `unsigned long[]` field holds a stacktrace. */
function stackOrFilterType(f: EventField): FilterType {
  if (/^unsigned long\s*\[\s*\]$/.test(f.type) || /^__data_loc unsigned long\s*\[\s*\]$/.test(f.type)) return 'stacktrace';
  return filterTypeOf(f.type);
}

/** get_hist_field_flags(): the modifier a field shows. */
function fieldFlagsStr(h: HistField): string | undefined {
  const f = h.flags;
  if (f & HF.HEX) return 'hex';
  if (f & HF.SYM) return 'sym';
  if (f & HF.SYM_OFFSET) return 'sym-offset';
  if (f & HF.EXECNAME) return 'execname';
  if (f & HF.SYSCALL) return 'syscall';
  if (f & HF.LOG2) return 'log2';
  if (f & HF.BUCKET) return 'buckets';
  if (f & HF.TIMESTAMP_USECS) return 'usecs';
  if (f & HF.PERCENT) return 'percent';
  if (f & HF.GRAPH) return 'graph';
  if (f & HF.STACKTRACE) return 'stacktrace';
  return undefined;
}

/** hist_field_name(): what a field is called in listings and sort keys. */
export function histFieldName(h: HistField | undefined, level = 0): string {
  if (!h || level > 1) return '';
  if (h.field) return h.field.name;
  if (h.has(HF.LOG2) || h.has(HF.ALIAS) || h.has(HF.BUCKET)) return histFieldName(h.operands[0], level + 1);
  if (h.has(HF.CPU)) return 'common_cpu';
  if (h.has(HF.COMM)) return 'common_comm';
  if (h.has(HF.EXPR) || h.has(HF.VAR_REF)) {
    if (h.system) return h.has(HF.VAR_REF) ? `${h.system}.${h.eventName}.$${h.name}` : `${h.system}.${h.eventName}.${h.name}`;
    return h.name ?? '';
  }
  if (h.has(HF.TIMESTAMP)) return 'common_timestamp';
  if (h.has(HF.STACKTRACE)) return 'common_stacktrace';
  if (h.has(HF.HITCOUNT)) return 'hitcount';
  return '';
}

/** expr_field_str(). */
function exprFieldStr(h: HistField): string {
  let s = '';
  if (h.has(HF.VAR_REF)) {
    if (!h.system) s += '$';
  } else if (h.has(HF.CONST)) s += h.constant.toString();
  s += histFieldName(h, 0);
  if (h.flags && !h.has(HF.VAR_REF)) {
    const m = fieldFlagsStr(h);
    if (m) s += `.${m}`;
  }
  return s;
}

/** expr_str(): how an expression is written back (one level of operands). */
export function exprStr(h: HistField, level = 0): string | undefined {
  if (level > 1) return undefined;
  if (!h.operands[0]) return exprFieldStr(h);
  if (h.operator === 'uminus') {
    const sub = exprStr(h.operands[0], level + 1);
    return sub === undefined ? undefined : `-(${sub})`;
  }
  const op = { minus: '-', plus: '+', div: '/', mult: '*' }[h.operator as 'minus' | 'plus' | 'div' | 'mult'];
  if (!op) return undefined;
  return `${exprFieldStr(h.operands[0])}${op}${exprFieldStr(h.operands[1]!)}`;
}

/** hist_field_print(): a field as the `trigger` file writes it. */
export function histFieldPrint(h: HistField): string {
  const name = histFieldName(h, 0);
  let s = h.varName !== undefined ? `${h.varName}=` : '';
  if (h.has(HF.CPU)) s += 'common_cpu';
  if (h.has(HF.COMM)) s += 'common_comm';
  else if (h.has(HF.CONST)) s += h.constant.toString();
  else if (name) {
    if ((h.has(HF.VAR_REF) || h.has(HF.ALIAS)) && !h.system) s += '$';
    s += name;
  } else if (h.has(HF.TIMESTAMP)) s += 'common_timestamp';
  if (h.flags && !h.has(HF.VAR_REF) && !h.has(HF.EXPR) && !h.has(HF.STACKTRACE)) {
    const m = fieldFlagsStr(h);
    if (m) s += `.${m}`;
  }
  if (h.buckets) s += `=${h.buckets}`;
  return s;
}
