/**
 * The event filter language: "field op value" predicates joined by && and ||,
 * with ! and parentheses, compiled into a branch program evaluated left to
 * right with short-circuits (as kernel/trace/trace_events_filter.c does, so
 * that accepted inputs, error messages and error positions agree).
 */
import { errno } from '../../../kernel/errno.js';
import type { KernelProfile } from '../../../kernel/profiles/profile.js';
import type { SymbolTable } from '../../../kernel/symbols.js';
import type { EventField } from '../../event_type.js';
import { COMMON_FIELDS, fieldLayout, type FieldLayout } from '../field_layout.js';
import { FILTER_OPS, type FilterInput, type Predicate, testPredicate } from './predicate.js';
import { parseGlobPattern } from './string_match.js';

/** err_text[] of the kernel, by the index error_log and the filter file use. */
export const FILTER_ERRORS = [
  'No error',
  'Invalid operator',
  "Too many '('",
  "Too few '('",
  'Missing matching quote',
  "Missing '{'",
  "Missing '}'",
  'Operand too long',
  'Expecting string field',
  'Expecting numeric field',
  'Illegal operation for field type',
  'Field not found',
  'Illegal integer value',
  "Couldn't find or set field in one of a subsystem's events",
  'Too many terms in predicate expression',
  'Meaningless filter expression',
  'Invalid cpulist',
  "Only 'ip' field is supported for function trace",
  'Invalid value (did you forget quotes)?',
  'Function not found',
  'Error',
  'No filter found',
] as const;

export const E = {
  INVALID_OP: 1,
  TOO_MANY_OPEN: 2,
  TOO_MANY_CLOSE: 3,
  MISSING_QUOTE: 4,
  MISSING_BRACE_OPEN: 5,
  MISSING_BRACE_CLOSE: 6,
  OPERAND_TOO_LONG: 7,
  EXPECT_STRING: 8,
  EXPECT_DIGIT: 9,
  ILLEGAL_FIELD_OP: 10,
  FIELD_NOT_FOUND: 11,
  ILLEGAL_INTVAL: 12,
  BAD_SUBSYS_FILTER: 13,
  TOO_MANY_PREDS: 14,
  INVALID_FILTER: 15,
  INVALID_CPULIST: 16,
  IP_FIELD_ONLY: 17,
  INVALID_VALUE: 18,
  NO_FUNCTION: 19,
  ERRNO: 20,
  NO_FILTER: 21,
} as const;

/** Where parsing stopped and why (filter_parse_error); `err` 0 with an errno means no text. */
export interface ParseError {
  err: number;
  pos: number;
}

/** A failed compile: the errno the write returns, and the error for the filter file and error_log. */
export class FilterCompileError extends Error {
  constructor(
    /** Negative errno as the kernel returns it (-1, -2, -3 from calc_stack leak through as EPERM/ENOENT/ESRCH). */
    readonly ret: number,
    readonly pe: ParseError,
  ) {
    super(FILTER_ERRORS[pe.err] ?? 'Error');
  }
}

export type FilterType = 'other' | 'static_string' | 'dyn_string' | 'rdyn_string' | 'ptr_string' | 'cpu' | 'comm' | 'cpumask' | 'stacktrace';

interface FilterField {
  name: string;
  offset: number;
  size: number;
  signed: boolean;
  type: FilterType;
}

/** The filter type of a field by its format type (what filters and hist triggers do with it). */
export function filterTypeOf(type: string): FilterType {
  if (type.includes('__data_loc')) {
    if (type.includes('char')) return 'dyn_string';
    if (type.includes('cpumask_t')) return 'cpumask';
  }
  if (type.includes('__rel_loc') && type.includes('char')) return 'rdyn_string';
  if (type.includes('[') && type.includes('char')) return 'static_string';
  if (type === 'char *' || type === 'const char *') return 'ptr_string';
  return 'other';
}

const GENERIC: FilterField[] = [
  { name: 'CPU', offset: 0, size: 4, signed: true, type: 'cpu' },
  { name: 'cpu', offset: 0, size: 4, signed: true, type: 'cpu' },
  { name: 'common_cpu', offset: 0, size: 4, signed: true, type: 'cpu' },
  { name: 'COMM', offset: 0, size: 8, signed: false, type: 'comm' },
  { name: 'comm', offset: 0, size: 8, signed: false, type: 'comm' },
  { name: 'stacktrace', offset: 0, size: 8, signed: false, type: 'stacktrace' },
  { name: 'STACKTRACE', offset: 0, size: 8, signed: false, type: 'stacktrace' },
];

/** What parsing needs to know besides the text: the fields, and the symbols for `.function`. */
export interface FilterContext {
  fields: readonly EventField[];
  symbols?: SymbolTable;
  /** The series' profile: whether a filter may end after an operator. */
  profile: KernelProfile;
  /** ftrace/function: only `ip` with an unquoted string (perf's convention). */
  isFunctionEvent?: boolean;
  nrCpus?: number;
}

/** The compiled filter: the program the kernel would run. */
export interface FilterProgram {
  entries: Array<{ pred: Predicate; target: number; whenToBranch: boolean }>;
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\v' || c === '\f';
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isAlnum = (c: string | undefined) => c !== undefined && /[A-Za-z0-9]/.test(c);

/** calc_stack(): counts predicates and paren depth, and finds unbalanced parens and quotes first. */
function calcStack(str: string): { parens: number; preds: number } | { code: -1 | -2 | -3; pos: number } {
  let isPred = false;
  let preds = 0;
  let open = 1;
  let maxOpen = 1;
  let quote = '';
  let lastQuote = 0;
  let i = 0;
  for (; i < str.length; i++) {
    const c = str[i];
    if (isSpace(c)) continue;
    if (quote) {
      if (c === quote) quote = '';
      continue;
    }
    switch (c) {
      case "'":
      case '"':
        quote = c;
        lastQuote = i;
        break;
      case '|':
      case '&':
        if (str[i + 1] !== c) break;
        isPred = false;
        continue;
      case '(':
        isPred = false;
        open++;
        if (open > maxOpen) maxOpen = open;
        continue;
      case ')':
        isPred = false;
        if (open === 1) return { code: -1, pos: i };
        open--;
        continue;
    }
    if (!isPred) {
      preds++;
      isPred = true;
    }
  }
  if (quote) return { code: -3, pos: lastQuote };
  if (open !== 1) {
    let level = open;
    for (i--; i; i--) {
      const c = str[i];
      if (quote) {
        if (c === quote) quote = '';
        continue;
      }
      if (c === '(') {
        if (level === open) return { code: -2, pos: i };
        level--;
      } else if (c === ')') level++;
      else if (c === "'" || c === '"') quote = c;
    }
    return { code: -2, pos: 0 };
  }
  return { parens: maxOpen, preds };
}

/** kstrtoull / kstrtoll with base 0. */
function parseInteger(s: string, signed: boolean): bigint | undefined {
  let t = s;
  let neg = false;
  if (t.startsWith('+')) t = t.slice(1);
  else if (signed && t.startsWith('-')) {
    neg = true;
    t = t.slice(1);
  }
  let v: bigint;
  if (/^0[xX][0-9a-fA-F]+$/.test(t)) v = BigInt(t);
  else if (/^0[0-7]*$/.test(t)) v = t.length > 1 ? BigInt('0o' + t.slice(1)) : 0n;
  else if (/^[1-9][0-9]*$/.test(t)) v = BigInt(t);
  else return undefined;
  if (signed) {
    if (neg ? v > 1n << 63n : v >= 1n << 63n) return undefined;
    return neg ? -v : v;
  }
  return v < 1n << 64n ? v : undefined;
}

/** cpulist_parse(): "0-3,5" or "0-7:2/4" into CPU numbers; undefined when malformed or past the last possible CPU. */
export function parseCpuList(s: string, nrCpus: number): Set<number> | undefined {
  const out = new Set<number>();
  for (const part of s.split(',')) {
    const m = /^\s*(\d+)(?:-(\d+)(?::(\d+)\/(\d+))?)?\s*$/.exec(part);
    if (!m) return undefined;
    const a = Number(m[1]);
    const b = m[2] !== undefined ? Number(m[2]) : a;
    if (b < a || b >= Math.max(nrCpus, 1)) return undefined;
    const used = m[3] !== undefined ? Number(m[3]) : 1;
    const group = m[4] !== undefined ? Number(m[4]) : 1;
    for (let c = a; c <= b; c++) if ((c - a) % group < used) out.add(c);
  }
  return out;
}

class PredicateParser {
  private readonly fields: Map<string, FilterField>;
  private readonly layouts: Map<string, FieldLayout>;

  constructor(private readonly fc: FilterContext) {
    this.fields = new Map();
    this.layouts = new Map();
    // Lookup order: the event's own fields, then the generic ones, then the common ones.
    for (const f of [...COMMON_FIELDS].reverse()) this.add(f);
    for (const g of GENERIC) this.fields.set(g.name, g);
    for (const f of [...fc.fields].reverse()) this.add(f);
  }

  private add(f: EventField): void {
    this.fields.set(f.name, { name: f.name, offset: f.offset, size: f.size, signed: f.signed, type: filterTypeOf(f.type) });
    this.layouts.set(f.name, fieldLayout(f));
  }

  /** parse_pred(): one predicate starting at str[start]; returns its length. `pos` is str's offset in the whole filter. */
  parse(str: string, pos: number, pe: ParseError): { len: number; pred: Predicate } | number {
    let i = 0;
    while (isSpace(str[i])) i++;
    let s = i;
    while (isAlnum(str[i]) || str[i] === '_') i++;
    if (i === s) return -1;
    const field = this.fields.get(str.slice(s, i));
    const fail = (err: number, at: number, ret = -errno.EINVAL): number => {
      pe.err = err;
      pe.pos = pos + at;
      return ret;
    };
    if (!field) return fail(E.FIELD_NOT_FOUND, i);
    let ustring = false;
    let isFunction = false;
    if (str.startsWith('.ustring', i)) {
      ustring = true;
      i += 8;
    }
    if (str.startsWith('.function', i)) {
      isFunction = true;
      i += 9;
    }
    while (isSpace(str[i])) i++;
    const op = FILTER_OPS.find((o) => str.startsWith(o, i));
    if (!op) return fail(E.INVALID_OP, i);
    i += op.length;
    while (isSpace(str[i])) i++;
    s = i;

    if (isFunction) {
      if (field.size !== 8) return fail(E.ILLEGAL_FIELD_OP, i);
      if (op !== '==' && op !== '!=') return fail(E.INVALID_OP, i);
      let ip: bigint | undefined;
      if (isDigit(str[i])) {
        while (isAlnum(str[i])) i++;
        if (i - s >= 24) return fail(E.OPERAND_TOO_LONG, i);
        ip = parseInteger(str.slice(s, i), false);
        if (ip === undefined) return fail(E.INVALID_VALUE, i);
      } else {
        while (i < str.length && !isSpace(str[i])) i++;
        const name = str.slice(s, i);
        ip = this.fc.symbols?.byName(name)[0]?.addr;
        if (ip === undefined) return fail(E.NO_FUNCTION, i);
      }
      const look = this.fc.symbols?.lookup(ip);
      if (!look) return fail(E.NO_FUNCTION, i);
      const start = look.sym.addr;
      return { len: i, pred: { k: 'func', op, offset: field.offset, start, end: start + BigInt(look.sym.size) } };
    }

    if (this.fc.isFunctionEvent) {
      if (field.name !== 'ip') return fail(E.IP_FIELD_ONLY, i);
      const q = str[i] === "'" || str[i] === '"' ? str[i] : '';
      for (i++; i < str.length; i++) {
        if (q && str[i] === q) break;
        if (!q && (str[i] === ')' || str[i] === '&' || str[i] === '|')) break;
      }
      if (q) s++;
      if (i - s >= 256) return fail(E.OPERAND_TOO_LONG, i);
      return { len: i, pred: { k: 'nop' } };
    }

    if (str.startsWith('CPUS', i)) {
      if (field.type !== 'cpumask' && field.type !== 'cpu' && field.type !== 'other') return fail(E.ILLEGAL_FIELD_OP, i);
      if (op !== '==' && op !== '!=' && op !== '&') return fail(E.ILLEGAL_FIELD_OP, i);
      i += 4;
      if (str[i++] !== '{') return fail(E.MISSING_BRACE_OPEN, i);
      const maskStart = i;
      while (i < str.length && str[i] !== '}') i++;
      if (str[i] !== '}') return fail(E.MISSING_BRACE_CLOSE, i);
      if (maskStart === i) return fail(E.INVALID_CPULIST, i);
      const mask = parseCpuList(str.slice(maskStart, i), this.fc.nrCpus ?? 1);
      if (!mask) return fail(E.INVALID_CPULIST, i);
      i++;
      const single = mask.size === 1 ? [...mask][0] : undefined;
      const bits = field.size === 8 ? 64 : field.size === 4 ? 32 : field.size === 2 ? 16 : 8;
      if (field.type === 'cpu') {
        if (single !== undefined) return { len: i, pred: { k: 'cpu', op: op === '&' ? '==' : op, val: BigInt(single) } };
        return { len: i, pred: { k: 'cpu_mask', op, mask } };
      }
      if (field.type === 'cpumask') return { len: i, pred: { k: 'nop' } };
      if (single !== undefined) {
        const o = op === '&' ? '==' : op;
        return { len: i, pred: { k: 'num', op: o, offset: field.offset, bits, signed: false, val: BigInt(single), not: o === '!=' } };
      }
      return { len: i, pred: { k: 'num_mask', op, offset: field.offset, bits, mask } };
    }

    if (str[i] === "'" || str[i] === '"') {
      const q = str[i];
      if (op !== '!=' && op !== '~' && op !== '==') return fail(E.ILLEGAL_FIELD_OP, i);
      const isString = ['dyn_string', 'rdyn_string', 'static_string', 'ptr_string', 'comm'].includes(field.type);
      if (!isString) return fail(E.EXPECT_DIGIT, i);
      for (i++; i < str.length; i++) if (str[i] === q) break;
      if (i >= str.length) return fail(E.MISSING_QUOTE, i);
      s++;
      if (i - s >= 256) return fail(E.OPERAND_TOO_LONG, i);
      const text = str.slice(s, i);
      const pattern = op === '~' ? parseGlobPattern(text) : { kind: 'full' as const, pattern: Buffer.from(text, 'latin1'), not: op === '!=' };
      const src =
        field.type === 'comm'
          ? 'comm'
          : field.type === 'static_string'
            ? 'static'
            : field.type === 'dyn_string'
              ? 'dyn'
              : field.type === 'rdyn_string'
                ? 'reldyn'
                : ustring
                  ? 'pchar_user'
                  : 'pchar';
      i++;
      return { len: i, pred: { k: 'str', src, offset: field.offset, size: field.size, pattern } };
    }

    if (isDigit(str[i]) || str[i] === '-') {
      const isString = ['dyn_string', 'rdyn_string', 'static_string', 'ptr_string', 'comm'].includes(field.type);
      if (isString) return fail(E.EXPECT_STRING, i);
      if (op === '~') return fail(E.ILLEGAL_FIELD_OP, i);
      if (str[i] === '-') i++;
      while (isAlnum(str[i])) i++;
      if (i - s >= 24) return fail(E.OPERAND_TOO_LONG, i);
      const val = parseInteger(str.slice(s, i), field.signed);
      if (val === undefined) return fail(E.ILLEGAL_INTVAL, s);
      if (field.type === 'cpu') return { len: i, pred: { k: 'cpu', op, val } };
      const bits = field.size === 8 ? 64 : field.size === 4 ? 32 : field.size === 2 ? 16 : 8;
      return { len: i, pred: { k: 'num', op, offset: field.offset, bits, signed: field.signed, val, not: op === '!=' } };
    }
    return fail(E.INVALID_VALUE, i);
  }
}

/** predicate_parse(): the first pass builds the branch program, then targets are folded. */
function buildProgram(str: string, nrParens: number, nrPreds: number, pp: PredicateParser, profile: KernelProfile, pe: ParseError): FilterProgram | number {
  const INVERT = 1;
  const AND = 2;
  const OR = 4;
  const prog: Array<{ pred: Predicate; target: number; whenToBranch: boolean }> = [];
  const inverts: boolean[] = [];
  const stack: number[] = [0];
  let invert = false;
  let ptr = 0;
  let N = 0;
  let ended = false;
  const setErr = (err: number, pos: number) => {
    pe.err = err;
    pe.pos = pos;
  };
  const update = (n: number, inv: boolean) => {
    const t = prog[n].target;
    const s = prog[t].target;
    prog[t].whenToBranch = inv;
    prog[t].target = n;
    prog[n].target = s;
  };
  outer: while (ptr < str.length) {
    let next = ptr++;
    const c = str[next];
    if (isSpace(c)) continue;
    if (c === '(') {
      if (stack.length - 1 >= nrParens - 1) return -errno.EINVAL;
      stack.push(invert ? INVERT : 0);
      continue;
    }
    if (c === '!' && str[next + 1] !== '=' && str[next + 1] !== '~') {
      invert = !invert;
      continue;
    }
    if (N >= nrPreds) {
      setErr(E.TOO_MANY_PREDS, next);
      return -1;
    }
    inverts[N] = invert;
    // The position the kernel reports counts from one past the predicate start.
    const r = pp.parse(str.slice(next), next + 1, pe);
    if (typeof r === 'number') return r;
    prog[N] = { pred: r.pred, target: N - 1, whenToBranch: false };
    ptr = next + r.len;
    N++;
    for (;;) {
      next = ptr++;
      const d = str[next];
      if (isSpace(d)) continue;
      let op = '';
      if (d === undefined || d === ')') op = d ?? '';
      else if ((d === '&' || d === '|') && str[next + 1] === d) {
        ptr++;
        op = d;
      } else {
        setErr(E.TOO_MANY_PREDS, next);
        return -1;
      }
      const top = stack[stack.length - 1];
      invert = (top & INVERT) !== 0;
      if (top & AND) {
        update(N - 1, invert);
        stack[stack.length - 1] &= ~AND;
      }
      if (op === '&') {
        stack[stack.length - 1] |= AND;
        break;
      }
      if (stack[stack.length - 1] & OR) {
        update(N - 1, !invert);
        stack[stack.length - 1] &= ~OR;
      }
      if (op === '|') {
        stack[stack.length - 1] |= OR;
        break;
      }
      if (op === '') {
        ended = true;
        break outer;
      }
      if (stack.length === 1) {
        setErr(E.TOO_MANY_CLOSE, ptr);
        return -1;
      }
      stack.pop();
    }
  }
  // An input that ends after an operator ("a == 1 &&") is refused, or let through.
  if (!ended && N && profile.filterRejectsTrailingOp) {
    setErr(E.INVALID_FILTER, ptr);
    return -errno.EINVAL;
  }
  if (stack.length !== 1) {
    setErr(E.TOO_MANY_OPEN, ptr);
    return -1;
  }
  if (!N) {
    setErr(E.NO_FILTER, ptr);
    return -errno.EINVAL;
  }
  prog[N - 1].target = N;
  prog[N - 1].whenToBranch = false;
  // Labels past the last predicate: N is TRUE, N + 1 is FALSE.
  const wtb = (i: number) => (i < N ? prog[i].whenToBranch : false);
  const tgt = (i: number) => (i < N ? prog[i].target : i === N ? 1 : 0);
  for (let i = N - 1; i--; ) {
    const t = prog[i].target;
    if (prog[i].whenToBranch === wtb(t)) prog[i].target = tgt(t);
  }
  for (let i = 0; i < N; i++) {
    prog[i].whenToBranch = inverts[i] !== prog[i].whenToBranch;
    if (prog[i].target <= i) return -errno.EINVAL;
  }
  return { entries: prog };
}

/** Compiles a filter for one event; throws FilterCompileError like process_preds() fails. */
export function compileFilter(str: string, fc: FilterContext): FilterProgram {
  const pe: ParseError = { err: 0, pos: 0 };
  const st = calcStack(str);
  if ('code' in st) {
    pe.err = st.code === -3 ? E.MISSING_QUOTE : st.code === -2 ? E.TOO_MANY_OPEN : E.TOO_MANY_CLOSE;
    pe.pos = st.pos;
    throw new FilterCompileError(st.code, pe);
  }
  if (!st.preds) throw new FilterCompileError(-errno.EINVAL, pe);
  const prog = buildProgram(str, st.parens, st.preds, new PredicateParser(fc), fc.profile, pe);
  if (typeof prog === 'number') throw new FilterCompileError(prog, pe);
  return prog;
}

/** filter_match_preds(): walks the program; true keeps the record. */
export function runFilter(prog: FilterProgram, inp: FilterInput): boolean {
  const e = prog.entries;
  const N = e.length;
  let i = 0;
  while (i < N) {
    if (testPredicate(e[i].pred, inp) === e[i].whenToBranch) i = e[i].target;
    i++;
  }
  return i === N;
}
