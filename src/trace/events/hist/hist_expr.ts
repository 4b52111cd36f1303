/**
 * Parsing a hist field's text (parse_expr and friends): an event field with
 * its modifier, a constant, a reference to a variable (`$v`, `sys.event.$v`),
 * or an expression of them with + - * / (the operator found last binds
 * loosest; at most three subexpressions; unary minus only as `-(...)`).
 */
import { kstrtoul } from '../../probe/kstr.js';
import { HF, type FieldOp, HistField, exprStr, findEventField, histFieldName, isStringField, MAX_FILTER_STR_VAL, type HistEventField } from './hist_field.js';
import type { HistData } from './hist_data.js';

/** Thrown (with the errno) once an error is logged, or for a plain EINVAL. */
export class HistParseError extends Error {
  constructor(readonly errno: 'EINVAL' | 'ENOMEM' | 'EDOM' | 'E2BIG' | 'ENOENT' | 'EEXIST' | 'EBUSY' = 'EINVAL') {
    super(errno);
  }
}

const fail = (errno: HistParseError['errno'] = 'EINVAL'): never => {
  throw new HistParseError(errno);
};

/** contains_operator(): the loosest operator of `str` and where it is. */
function containsOperator(str: string): { op: FieldOp; at: number } {
  const minus = str.lastIndexOf('-');
  let op: FieldOp = 'none';
  let at = -1;
  if (minus >= 0) {
    if (minus === 0) return { op: 'uminus', at: 0 };
    op = 'minus';
    at = minus;
  }
  const plus = str.lastIndexOf('+');
  if (plus >= 0 || minus >= 0) {
    if (plus > minus) return { op: 'plus', at: plus };
    return { op, at };
  }
  const div = str.lastIndexOf('/');
  if (div >= 0) {
    op = 'div';
    at = div;
  }
  const mult = str.lastIndexOf('*');
  if (mult > div) return { op: 'mult', at: mult };
  return { op, at };
}

/** The fields that are no event field: their function, size and type. */
const SPECIAL_FIELDS: readonly (readonly [number, HistField['fn'], number, string])[] = [
  [HF.HITCOUNT, 'counter', 8, 'u64'],
  [HF.CONST, 'const', 8, 'u64'],
  [HF.TIMESTAMP, 'timestamp', 8, 'u64'],
  [HF.CPU, 'cpu', 4, 'unsigned int'],
  [HF.COMM, 'comm', MAX_FILTER_STR_VAL, 'char[]'],
];

/** create_hist_field(): a field of the given flags (a field of the event, or a special one). */
export function createHistField(hd: HistData, field: HistEventField | undefined, flags: number, varName?: string): HistField {
  const h = new HistField(hd);
  h.field = field;
  h.varName = varName;
  if (flags & (HF.EXPR | HF.ALIAS)) {
    h.flags = flags;
    return h;
  }
  const special = () => {
    [, h.fn, h.size, h.type] = SPECIAL_FIELDS.find(([flag]) => flags & flag)!;
  };
  if (flags & HF.VAR_REF) {
    h.fn = 'var_ref';
  } else if (flags & (HF.HITCOUNT | HF.CONST)) {
    special();
  } else if (flags & HF.STACKTRACE) {
    h.fn = field ? 'stack' : 'nop';
    h.size = 31 * 8;
    h.type = 'unsigned long[]';
  } else if (flags & (HF.LOG2 | HF.BUCKET)) {
    h.fn = flags & HF.LOG2 ? 'log2' : 'bucket';
    const op = createHistField(hd, field, flags & ~(HF.LOG2 | HF.BUCKET));
    h.operands[0] = op;
    h.size = op.size;
    h.type = op.type;
    h.field = field;
  } else if (flags & (HF.TIMESTAMP | HF.CPU | HF.COMM)) {
    special();
  } else if (field) {
    if (isStringField(field) && field.filterType !== 'ptr_string') {
      flags |= HF.STRING;
      h.size = MAX_FILTER_STR_VAL;
      h.type = field.type;
      if (field.filterType === 'static_string') {
        h.fn = 'string';
        h.size = field.size;
      } else h.fn = field.filterType === 'dyn_string' ? 'dynstring' : 'reldynstring';
    } else if (field.filterType === 'stacktrace') {
      flags |= HF.STACKTRACE;
      h.size = MAX_FILTER_STR_VAL;
      h.type = field.type;
      h.fn = 'stack';
    } else {
      h.size = field.size;
      h.isSigned = field.signed;
      h.type = field.type;
      if (![1, 2, 4, 8].includes(field.size)) fail('EINVAL');
      h.fn = 'num';
    }
  }
  h.flags = flags;
  return h;
}

/** parse_field(): an event field with its modifier. */
function parseField(hd: HistData, str: string, flags: { v: number }): { field?: HistEventField; buckets: bigint } {
  const { env } = hd;
  const dot = str.indexOf('.');
  const name = dot < 0 ? str : str.slice(0, dot);
  const modifier = dot < 0 ? undefined : str.slice(dot + 1);
  let buckets = 0n;
  let stackModifier = false;
  const badModifier = (): never => {
    env.errors.err(hd.tr, 'BAD_FIELD_MODIFIER', env.errors.pos(modifier));
    return fail();
  };
  if (modifier !== undefined) {
    if (modifier === 'hex') flags.v |= HF.HEX;
    else if (modifier === 'sym') flags.v |= HF.SYM;
    else if (modifier === 'symXoffset') flags.v |= HF.SYM_OFFSET;
    else if (modifier === 'execname' && name === 'common_pid') flags.v |= HF.EXECNAME;
    else if (modifier === 'syscall') flags.v |= HF.SYSCALL;
    else if (modifier === 'stacktrace') {
      flags.v |= HF.STACKTRACE;
      stackModifier = true;
    } else if (modifier === 'log2') flags.v |= HF.LOG2;
    else if (modifier === 'usecs') flags.v |= HF.TIMESTAMP_USECS;
    else if (modifier.startsWith('bucket')) {
      let m = modifier.slice(6);
      if (m.startsWith('s')) m = m.slice(1);
      if (!m.startsWith('=')) badModifier();
      const n = kstrtoul(m.slice(1));
      buckets = n.ok ? n.value : 0n;
      if (!buckets) badModifier();
      flags.v |= HF.BUCKET;
    } else if (modifier.startsWith('percent')) {
      if (flags.v & (HF.VAR | HF.KEY)) badModifier();
      flags.v |= HF.PERCENT;
    } else if (modifier.startsWith('graph')) {
      if (flags.v & (HF.VAR | HF.KEY)) badModifier();
      flags.v |= HF.GRAPH;
    } else badModifier();
  }
  let field: HistEventField | undefined;
  if (name === 'common_timestamp') {
    flags.v |= HF.TIMESTAMP;
    hd.enableTimestamps = true;
    if (flags.v & HF.TIMESTAMP_USECS) hd.attrs.tsInUsecs = true;
  } else if (name === 'common_stacktrace') flags.v |= HF.STACKTRACE;
  else if (name === 'common_cpu') flags.v |= HF.CPU;
  else if (name === 'common_comm') flags.v |= HF.COMM | HF.STRING;
  else if (name === 'hitcount') flags.v |= HF.HITCOUNT;
  else {
    field = findEventField(hd.file.type.fields, name);
    if (!field || !field.size) {
      // the generic fields: cpu and comm keep their name, stacktrace is the current stack
      if (field?.filterType === 'cpu') flags.v |= HF.CPU;
      else if (field?.filterType === 'stacktrace') {
        flags.v |= HF.STACKTRACE;
        field = undefined;
      } else if (field?.filterType === 'comm') flags.v |= HF.COMM | HF.STRING;
      else {
        env.errors.err(hd.tr, 'FIELD_NOT_FOUND', env.errors.pos(name));
        fail();
      }
    }
  }
  if (stackModifier && (!field || field.filterType !== 'stacktrace')) {
    env.errors.err(hd.tr, 'BAD_FIELD_MODIFIER', env.errors.pos(str));
    fail();
  }
  return { field, buckets };
}

/** parse_const(). */
function parseConst(hd: HistData, str: string, varName: string | undefined, flags: { v: number }): HistField {
  const v = kstrtoul(str);
  if (!v.ok) {
    hd.env.errors.err(hd.tr, 'EXPECT_NUMBER', hd.env.errors.pos(str));
    return fail();
  }
  flags.v |= HF.CONST;
  const h = createHistField(hd, undefined, flags.v, varName);
  h.constant = v.value;
  return h;
}

/** create_alias(): a variable that is another variable's value. */
function createAlias(hd: HistData, ref: HistField, varName: string): HistField {
  const alias = createHistField(hd, undefined, HF.ALIAS | HF.VAR, varName);
  alias.fn = ref.fn;
  alias.operands[0] = ref;
  initVarRef(alias, ref, ref.system, ref.eventName);
  alias.varRefIdx = ref.varRefIdx;
  return alias;
}

/** init_var_ref(). */
function initVarRef(ref: HistField, v: HistField, system: string | undefined, eventName: string | undefined): void {
  ref.varIdx = v.varIdx;
  ref.varHist = v.varHist;
  ref.size = v.size;
  ref.isSigned = v.isSigned;
  ref.flags |= v.flags & (HF.TIMESTAMP | HF.TIMESTAMP_USECS | HF.STACKTRACE);
  ref.system = system;
  ref.eventName = eventName;
  ref.name = v.varName ?? v.name;
  ref.type = v.type;
}

/** create_var_ref(): a reference to `v` attached to `hd` (an existing one reused). */
export function createVarRef(hd: HistData, v: HistField, system?: string, eventName?: string): HistField | undefined {
  const existing = hd.varRefs.find((r) => r.varIdx === v.varIdx && r.varHist === v.varHist);
  if (existing) return existing;
  if (hd.varRefs.length >= 16) return undefined;
  const ref = createHistField(v.hist, undefined, HF.VAR_REF);
  initVarRef(ref, v, system, eventName);
  ref.varRefIdx = hd.varRefs.length;
  hd.varRefs.push(ref);
  return ref;
}

/** is_var_ref(). */
function isVarRef(s: string | undefined): boolean {
  return !!s && s.length >= 2 && s[0] === '$';
}

/** local_field_var_ref(): `$v` of this very trigger whose definition is a plain field: that field. */
function localFieldVarRef(hd: HistData, system: string | undefined, event: string | undefined, varName: string): string | undefined {
  if (system && event) {
    if (system !== hd.file.type.system || event !== hd.file.type.name) return undefined;
  }
  if (!!system !== !!event) return undefined;
  if (!isVarRef(varName)) return undefined;
  const name = varName.slice(1);
  for (const d of hd.attrs.varDefs) {
    if (d.name !== name) continue;
    if (containsOperator(d.expr).op !== 'none' || isVarRef(d.expr)) continue;
    return d.expr;
  }
  return undefined;
}

/** parse_var_ref(). */
function parseVarRef(hd: HistData, system: string | undefined, event: string | undefined, varName: string): HistField | undefined {
  if (!isVarRef(varName)) return undefined;
  const name = varName.slice(1);
  const v = hd.findEventVar(system, event, name);
  const ref = v ? createVarRef(hd, v, system, event) : undefined;
  if (!ref) hd.env.errors.err(hd.tr, 'VAR_NOT_FOUND', hd.env.errors.pos(name));
  return ref;
}

/** parse_atom(): a constant, a variable reference, or an event field. */
export function parseAtom(hd: HistData, str: string, flags: { v: number }, varName?: string): HistField {
  if (/^[0-9]/.test(str)) return parseConst(hd, str, varName, flags);
  let refSystem: string | undefined;
  let refEvent: string | undefined;
  let refVar = str;
  const d1 = str.indexOf('.');
  if (d1 >= 0 && str.indexOf('.', d1 + 1) >= 0) {
    const parts = str.split('.');
    refSystem = parts[0];
    refEvent = parts[1];
    refVar = parts.slice(2).join('.');
  }
  const local = localFieldVarRef(hd, refSystem, refEvent, refVar);
  if (local === undefined) {
    const ref = parseVarRef(hd, refSystem, refEvent, refVar);
    if (ref) return varName !== undefined ? createAlias(hd, ref, varName) : ref;
  } else str = local;
  const { field, buckets } = parseField(hd, str, flags);
  const h = createHistField(hd, field, flags.v, varName);
  h.buckets = buckets;
  return h;
}

/** parse_unary(): `-(expr)`. */
function parseUnary(hd: HistData, str: string, flags: number, varName: string | undefined, n: { v: number }): HistField {
  const { errors } = hd.env;
  if (++n.v > 3) {
    errors.err(hd.tr, 'TOO_MANY_SUBEXPR', errors.pos(str));
    fail();
  }
  let s = str.slice(1);
  if (!s.includes('(')) fail();
  s = s.slice(1);
  const close = s.lastIndexOf(')');
  if (close < 0) fail();
  if (close !== s.length - 1) {
    errors.err(hd.tr, 'UNARY_MINUS_SUBEXPR', errors.pos(s));
    fail();
  }
  s = s.slice(0, close);
  const expr = createHistField(hd, undefined, flags | HF.EXPR, varName);
  const op = parseExpr(hd, s, 0, undefined, n);
  if (op.has(HF.STRING)) {
    errors.err(hd.tr, 'INVALID_STR_OPERAND', errors.pos(s));
    fail();
  }
  expr.flags |= op.flags & (HF.TIMESTAMP | HF.TIMESTAMP_USECS);
  expr.fn = 'uminus';
  expr.operands[0] = op;
  expr.size = op.size;
  expr.isSigned = op.isSigned;
  expr.operator = 'uminus';
  expr.name = exprStr(expr, 0);
  expr.type = op.type;
  return expr;
}

/** check_expr_operands(): both sides in the same timestamp unit (through the variables they refer to). */
function checkExprOperands(hd: HistData, a: HistField, b: HistField): { var1?: HistField; var2?: HistField } {
  const out: { var1?: HistField; var2?: HistField } = {};
  let fa = a.flags;
  let fb = b.flags;
  if (a.has(HF.VAR_REF) || a.has(HF.ALIAS)) {
    const v = a.varHist?.findVarField(a.name ?? '');
    if (!v) fail();
    fa = v!.flags;
    out.var1 = v;
  }
  if (b.has(HF.VAR_REF) || b.has(HF.ALIAS)) {
    const v = b.varHist?.findVarField(b.name ?? '');
    if (!v) fail();
    fb = v!.flags;
    out.var2 = v;
  }
  if ((fa & HF.TIMESTAMP_USECS) !== (fb & HF.TIMESTAMP_USECS)) {
    hd.env.errors.err(hd.tr, 'TIMESTAMP_MISMATCH', 0);
    fail();
  }
  return out;
}

/** parse_expr(). */
export function parseExpr(hd: HistData, str: string, flags: number, varName: string | undefined, n: { v: number }): HistField {
  const { errors } = hd.env;
  if (n.v > 3) {
    errors.err(hd.tr, 'TOO_MANY_SUBEXPR', errors.pos(str));
    fail();
  }
  const { op, at } = containsOperator(str);
  if (op === 'none') return parseAtom(hd, str, { v: flags }, varName);
  if (op === 'uminus') return parseUnary(hd, str, flags, varName, n);
  n.v++;
  const s1 = str.slice(0, at);
  const s2 = str.slice(at + 1);
  if (!s1 || !s2) fail();
  const op1 = parseExpr(hd, s1, 0, undefined, n);
  if (op1.has(HF.STRING)) {
    errors.err(hd.tr, 'INVALID_STR_OPERAND', errors.pos(s1));
    fail();
  }
  const op2 = parseExpr(hd, s2, 0, undefined, n);
  if (op2.has(HF.STRING)) {
    errors.err(hd.tr, 'INVALID_STR_OPERAND', errors.pos(s2));
    fail();
  }
  const { var1, var2 } = checkExprOperands(hd, op1, op2);
  const f1 = var1 ? var1.flags : op1.flags;
  const f2 = var2 ? var2.flags : op2.flags;
  const combine = (f1 & f2 & HF.CONST) !== 0;
  flags |= combine ? HF.CONST : HF.EXPR;
  flags |= op1.flags & (HF.TIMESTAMP | HF.TIMESTAMP_USECS);
  const expr = createHistField(hd, undefined, flags, varName);
  op1.readOnce = true;
  op2.readOnce = true;
  expr.operands = [op1, op2];
  let fn: HistField['fn'] = op === 'minus' ? 'minus' : op === 'plus' ? 'plus' : op === 'div' ? 'div' : 'mult';
  if (op === 'div' && f2 & HF.CONST) {
    const divisor = var2 ? var2.constant : op2.constant;
    if (!divisor) {
      errors.err(hd.tr, 'DIVISION_BY_ZERO', errors.pos(s2));
      fail('EDOM');
    }
    op2.constant = divisor;
    if (!(divisor & (divisor - 1n))) fn = 'div_power2';
    else if (divisor > 1n << 20n) fn = 'div_not_power2';
    else {
      op2.divMultiplier = (1n << 20n) / divisor;
      fn = 'div_mult_shift';
    }
  }
  expr.fn = fn;
  if (combine) {
    if (var1) expr.operands[0] = var1;
    if (var2) expr.operands[1] = var2;
    expr.constant = BigInt.asUintN(64, expr.value({ rec: Buffer.alloc(0), ctx: undefined as never, ts: 0n, varRefVals: [], stack: () => [] }) as bigint);
    expr.fn = 'const';
    expr.operands = [];
    expr.name = exprStr(expr, 0);
  } else {
    expr.size = op1.size;
    expr.isSigned = op1.isSigned;
    expr.operator = op;
    expr.type = op1.type;
    expr.name = exprStr(expr, 0);
  }
  return expr;
}

/** field_has_hist_vars(): a variable or a reference anywhere in the field (three levels down). */
export function fieldHasHistVars(h: HistField | undefined, level = 0): boolean {
  if (level > 3 || !h) return false;
  if (h.has(HF.VAR) || h.has(HF.VAR_REF)) return true;
  return h.operands.some((o) => fieldHasHistVars(o, level + 1));
}

export { histFieldName };
