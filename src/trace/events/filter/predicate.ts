/** One comparison of an event filter, and how it tests a record. */
import { readInt } from '../field_layout.js';
import type { IntBits } from '../print_fmt/value.js';
import { matchString, type StringPattern } from './string_match.js';

type FilterOp = '~' | '!=' | '==' | '<=' | '<' | '>=' | '>' | '&';

/** In the kernel's order: longer operators first ("<=" before "<"). */
export const FILTER_OPS: readonly FilterOp[] = ['~', '!=', '==', '<=', '<', '>=', '>', '&'];

/** What a predicate may look at besides the record. */
export interface FilterInput {
  data: Buffer;
  /** The CPU the event happens on (CPU / cpu / common_cpu). */
  cpu: number;
  /** comm of the current task (COMM / comm). */
  comm: string;
  /** A NUL-terminated string from user memory of the current task (field.ustring). */
  readUserString?(addr: bigint): Buffer | undefined;
  /** A NUL-terminated string from kernel memory (char * fields). */
  readKernelString?(addr: bigint): Buffer | undefined;
}

type StringSource = 'static' | 'dyn' | 'reldyn' | 'pchar' | 'pchar_user' | 'comm';

export type Predicate =
  | { k: 'num'; op: FilterOp; offset: number; bits: IntBits; signed: boolean; val: bigint; not: boolean }
  | { k: 'cpu'; op: FilterOp; val: bigint }
  | { k: 'cpu_mask'; op: FilterOp; mask: ReadonlySet<number> }
  | { k: 'num_mask'; op: FilterOp; offset: number; bits: IntBits; mask: ReadonlySet<number> }
  | { k: 'str'; src: StringSource; offset: number; size: number; pattern: StringPattern }
  | { k: 'func'; op: FilterOp; offset: number; start: bigint; end: bigint }
  | { k: 'nop' };

function compare(op: FilterOp, a: bigint, b: bigint): boolean {
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    case '&':
      return (a & b) !== 0n;
    default:
      return false;
  }
}

function wrapTo(v: bigint, bits: IntBits, signed: boolean): bigint {
  return signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
}

function scalarInMask(op: FilterOp, cpu: number, mask: ReadonlySet<number>): boolean {
  // A mask of two or more CPUs never equals a single one.
  switch (op) {
    case '==':
      return false;
    case '!=':
      return true;
    case '&':
      return mask.has(cpu);
    default:
      return false;
  }
}

function stringOf(p: Extract<Predicate, { k: 'str' }>, inp: FilterInput): { str: Buffer; len: number } | undefined {
  const d = inp.data;
  switch (p.src) {
    case 'static':
      // char buf[] (size 0) runs to its NUL, as strcmp() reads it.
      return { str: p.size ? d.subarray(p.offset, p.offset + p.size) : d.subarray(p.offset), len: p.size };
    case 'dyn':
    case 'reldyn': {
      if (p.offset + 4 > d.length) return undefined;
      const item = d.readUInt32LE(p.offset);
      let loc = item & 0xffff;
      if (p.src === 'reldyn') loc += p.offset + 4;
      const len = item >>> 16;
      return { str: d.subarray(loc, loc + len), len };
    }
    case 'comm':
      return { str: Buffer.from(inp.comm.slice(0, 15), 'latin1'), len: 16 };
    case 'pchar':
    case 'pchar_user': {
      if (p.offset + 8 > d.length) return undefined;
      const addr = d.readBigUInt64LE(p.offset);
      const s = p.src === 'pchar_user' ? inp.readUserString?.(addr) : inp.readKernelString?.(addr);
      if (!s) return undefined;
      const z = s.indexOf(0);
      const str = z < 0 ? s : s.subarray(0, z);
      return { str, len: str.length + 1 };
    }
  }
}

export function testPredicate(p: Predicate, inp: FilterInput): boolean {
  switch (p.k) {
    case 'num': {
      const v = readInt(inp.data, p.offset, p.bits, p.signed);
      if (p.op === '==' || p.op === '!=') return (BigInt.asUintN(p.bits, v) === BigInt.asUintN(p.bits, p.val)) !== p.not;
      return compare(p.op, v, wrapTo(p.val, p.bits, p.signed));
    }
    case 'cpu': {
      const cpu = BigInt(inp.cpu);
      const val = BigInt.asIntN(32, p.val);
      if (p.op === '==') return cpu === val;
      if (p.op === '!=') return cpu !== val;
      return compare(p.op, cpu, val);
    }
    case 'cpu_mask':
      return scalarInMask(p.op, inp.cpu, p.mask);
    case 'num_mask': {
      const cpu = Number(readInt(inp.data, p.offset, p.bits, false));
      return scalarInMask(p.op, cpu, p.mask);
    }
    case 'str': {
      const s = stringOf(p, inp);
      if (!s) return false;
      return matchString(p.pattern, s.str, s.len) !== p.pattern.not;
    }
    case 'func': {
      if (p.offset + 8 > inp.data.length) return false;
      const a = inp.data.readBigUInt64LE(p.offset);
      const inside = a >= p.start && a < p.end;
      return p.op === '==' ? inside : !inside;
    }
    case 'nop':
      return false;
  }
}
