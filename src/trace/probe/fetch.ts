/**
 * Fetch programs and fetch types (trace_probe.h): what a probe argument reads
 * at run time (a short list of instructions: load, dereference, store,
 * modify, loop) and how the value is stored, printed and described in the
 * event's `format` file.
 */
import type { EventField } from '../event_type.js';
import { kstrtoul } from './kstr.js';

export type FetchOp =
  | 'NOP'
  // stage 1: load
  | 'REG' | 'STACK' | 'STACKP' | 'RETVAL' | 'IMM' | 'COMM' | 'CURRENT' | 'ARG' | 'FOFFS' | 'DATA' | 'EDATA'
  // stage 2: dereference (CPU_PTR: this_cpu_ptr())
  | 'DEREF' | 'UDEREF' | 'CPU_PTR'
  // stage 3: store
  | 'ST_RAW' | 'ST_MEM' | 'ST_UMEM' | 'ST_STRING' | 'ST_USTRING' | 'ST_SYMSTR' | 'ST_EDATA'
  // stage 4: modify
  | 'MOD_BF'
  // stage 5: loop
  | 'LP_ARRAY' | 'TP_ARG' | 'END'
  /** placeholder for @symbol until it is resolved at registration */
  | 'NOP_SYMBOL';

/** One fetch instruction (struct fetch_insn); which fields matter depends on `op`. */
export interface FetchInsn {
  op: FetchOp;
  /** REG: pt_regs offset; STACK: index; ARG: argument index (0-based); LP_ARRAY: count. */
  param?: number;
  /** IMM / FOFFS (u64), resolved @symbol address. */
  immediate?: bigint;
  /** DEREF/UDEREF/ST_*: offset; EDATA/ST_EDATA: entry-data offset. */
  offset?: number;
  /** ST_*: bytes stored. */
  size?: number;
  /** MOD_BF. */
  basesize?: number;
  lshift?: number;
  rshift?: number;
  /** NOP_SYMBOL: `sym[+-off]`; DATA: the immediate string. */
  data?: string;
  /** TP_ARG: the attached event's field. */
  field?: EventField;
  /** For documentation of BTF-derived steps: the C member path that produced a DEREF. */
  btfPath?: string;
}

/** fetch + deref*N + store + mod + end <= 16 (FETCH_INSN_MAX). */
export const FETCH_INSN_MAX = 16;

export interface FetchType {
  /** Type name as written after `:` (`u8`, `x64`, `string`, ...). */
  name: string;
  /** Bytes stored per element in the record. */
  size: number;
  signed: boolean;
  string: boolean;
  /** printf format of one value in the event's print fmt. */
  fmt: string;
  /** C type in the `format` file. */
  fmttype: string;
  /** How the trace output prints one value. */
  print: 'u' | 'd' | 'x' | 'char' | 'symbol' | 'string';
}

const basic = (name: string, size: number, signed: boolean, fmt: string, fmttype: string, print: FetchType['print']): FetchType => ({
  name, size, signed, string: false, fmt, fmttype, print,
});
const str = (name: string): FetchType => ({
  name, size: 4, signed: true, string: true, fmt: '\\"%s\\"', fmttype: '__data_loc char[]', print: 'string',
});

/** probe_fetch_types[] in table order. */
const FETCH_TYPES: readonly FetchType[] = [
  str('string'),
  str('ustring'),
  str('symstr'),
  basic('u8', 1, false, '%u', 'u8', 'u'),
  basic('u16', 2, false, '%u', 'u16', 'u'),
  basic('u32', 4, false, '%u', 'u32', 'u'),
  basic('u64', 8, false, '%Lu', 'u64', 'u'),
  basic('s8', 1, true, '%d', 's8', 'd'),
  basic('s16', 2, true, '%d', 's16', 'd'),
  basic('s32', 4, true, '%d', 's32', 'd'),
  basic('s64', 8, true, '%Ld', 's64', 'd'),
  basic('x8', 1, false, '0x%x', 'u8', 'x'),
  basic('x16', 2, false, '0x%x', 'u16', 'x'),
  basic('x32', 4, false, '0x%x', 'u32', 'x'),
  basic('x64', 8, false, '0x%Lx', 'u64', 'x'),
  basic('char', 1, false, "'%c'", 'u8', 'char'),
  basic('symbol', 8, false, '%pS', 'u64', 'symbol'),
];

const DEFAULT_FETCH_TYPE = 'x64';

/** find_fetch_type(): `b<w>@<o>/<c>` maps to u<c>; symbol/symstr are kernel-only. */
export function findFetchType(type: string | undefined, user: boolean): FetchType | undefined {
  if (type !== undefined && user && (type === 'symbol' || type === 'symstr')) return undefined;
  if (type === undefined) type = DEFAULT_FETCH_TYPE;
  if (type[0] === 'b') {
    const slash = type.indexOf('/');
    if (slash < 0) return undefined;
    const r = kstrtoul(type.slice(slash + 1));
    switch (r.ok ? r.value : -1n) {
      case 8n: return findFetchType('u8', user);
      case 16n: return findFetchType('u16', user);
      case 32n: return findFetchType('u32', user);
      case 64n: return findFetchType('u64', user);
      default: return undefined;
    }
  }
  return FETCH_TYPES.find((t) => t.name === type);
}
