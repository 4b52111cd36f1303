/** Evaluates print-fmt argument expressions against one record, with C semantics. */
import { dynamicBytes, type FieldLayout, readInt } from '../field_layout.js';
import type { Expr } from './ast.js';
import { flagNames, printArray, printFlags, printHex, printHexDump, printSymbolic } from './print_helpers.js';
import { bitmapString } from './vsprintf.js';
import { EvalError, type IntBits, type PrintEnv, type PrintOptions, scalarType, toBig, truthy, type Val, wrap } from './value.js';

export interface EvalContext {
  data: Buffer;
  fields: ReadonlyMap<string, FieldLayout>;
  env: PrintEnv;
  opts: PrintOptions;
  /** Enum constants and kernel variables the fmt names (see constants.ts). */
  consts?: ReadonlyMap<string, bigint>;
  vars?: Map<string, Val>;
}

const CONSTANTS: Record<string, bigint> = { NULL: 0n, true: 1n, false: 0n };

interface IntV {
  v: bigint;
  bits: IntBits;
  signed: boolean;
}

function asInt(v: Val): IntV {
  if (v.k === 'int') return v;
  return { v: toBig(v), bits: 64, signed: false };
}

/** Integer promotion and the usual arithmetic conversions, reduced to width and sign. */
function common(a: IntV, b: IntV): { bits: IntBits; signed: boolean } {
  const pa = a.bits < 32 ? { bits: 32 as IntBits, signed: true } : a;
  const pb = b.bits < 32 ? { bits: 32 as IntBits, signed: true } : b;
  if (pa.bits === pb.bits) return { bits: pa.bits, signed: pa.signed && pb.signed };
  return pa.bits > pb.bits ? { bits: pa.bits, signed: pa.signed } : { bits: pb.bits, signed: pb.signed };
}

function mk(v: bigint, bits: IntBits, signed: boolean): Val {
  return { k: 'int', v: wrap(v, bits, signed), bits, signed };
}

const bool = (b: boolean): Val => ({ k: 'int', v: b ? 1n : 0n, bits: 32, signed: true });

function binary(op: string, a: Val, b: Val): Val {
  const x = asInt(a);
  const y = asInt(b);
  if (op === '<<' || op === '>>') {
    const p = x.bits < 32 ? { bits: 32 as IntBits, signed: true } : x;
    const s = y.v;
    if (s < 0n || s >= 64n) return mk(0n, p.bits, p.signed);
    const lv = wrap(x.v, p.bits, p.signed);
    return mk(op === '<<' ? lv << s : lv >> s, p.bits, p.signed);
  }
  const t = common(x, y);
  const l = wrap(x.v, t.bits, t.signed);
  const r = wrap(y.v, t.bits, t.signed);
  switch (op) {
    case '+':
      return mk(l + r, t.bits, t.signed);
    case '-':
      return mk(l - r, t.bits, t.signed);
    case '*':
      return mk(l * r, t.bits, t.signed);
    case '/':
      return mk(r === 0n ? 0n : l / r, t.bits, t.signed);
    case '%':
      return mk(r === 0n ? 0n : l % r, t.bits, t.signed);
    case '&':
      return mk(l & r, t.bits, t.signed);
    case '|':
      return mk(l | r, t.bits, t.signed);
    case '^':
      return mk(l ^ r, t.bits, t.signed);
    case '==':
      return bool(l === r);
    case '!=':
      return bool(l !== r);
    case '<':
      return bool(l < r);
    case '>':
      return bool(l > r);
    case '<=':
      return bool(l <= r);
    case '>=':
      return bool(l >= r);
  }
  throw new EvalError(`operator ${op}`);
}

function field(c: EvalContext, name: string): FieldLayout {
  const f = c.fields.get(name);
  if (!f) throw new EvalError(`no field ${name}`);
  return f;
}

function fieldValue(c: EvalContext, f: FieldLayout): Val {
  switch (f.kind) {
    case 'int':
      return { k: 'int', v: readInt(c.data, f.offset, f.elemBits, f.elemSigned), bits: f.elemBits, signed: f.elemSigned };
    case 'data_loc':
    case 'rel_loc':
      return { k: 'int', v: readInt(c.data, f.offset, 32, false), bits: 32, signed: false };
    default:
      return { k: 'mem', buf: c.data.subarray(f.offset, f.offset + f.size), elemBits: f.elemBits, elemSigned: f.elemSigned };
  }
}

function dynField(c: EvalContext, arg: Expr | undefined): FieldLayout {
  if (!arg) throw new EvalError('missing field');
  if (arg.k === 'id') return field(c, arg.name);
  if (arg.k === 'rec') return field(c, arg.field);
  throw new EvalError('not a field name');
}

function bytesArg(v: Val, len: number, c: EvalContext): Buffer {
  if (v.k === 'mem') return v.buf.subarray(0, Math.max(0, len));
  if (v.k === 'str') return Buffer.from(v.s, 'latin1').subarray(0, Math.max(0, len));
  if (v.k === 'int' && v.v !== 0n) return c.env.readKernel?.(BigInt.asUintN(64, v.v), len) ?? Buffer.alloc(0);
  return Buffer.alloc(0);
}

const str = (s: string): Val => ({ k: 'str', s });
const num = (e: Expr, c: EvalContext): bigint => toBig(evaluate(e, c));

function call(fn: string, args: Expr[], c: EvalContext): Val {
  switch (fn) {
    case '__get_str':
    case '__get_rel_str': {
      const b = dynamicBytes(c.data, dynField(c, args[0]));
      const z = b.indexOf(0);
      return str(b.toString('latin1', 0, z < 0 ? b.length : z));
    }
    case '__get_dynamic_array':
    case '__get_rel_dynamic_array':
    case '__get_sockaddr':
    case '__get_rel_sockaddr': {
      const f = dynField(c, args[0]);
      return { k: 'mem', buf: dynamicBytes(c.data, f), elemBits: f.elemBits, elemSigned: f.elemSigned };
    }
    case '__get_dynamic_array_len':
    case '__get_rel_dynamic_array_len':
      return mk(BigInt(dynamicBytes(c.data, dynField(c, args[0])).length), 32, true);
    case '__get_bitmask':
    case '__get_rel_bitmask':
    case '__get_cpumask':
    case '__get_rel_cpumask': {
      const b = dynamicBytes(c.data, dynField(c, args[0]));
      return str(bitmapString(b, b.length * 8, c.opts.bitmaskList));
    }
    case '__print_flags':
    case '__print_flags_u64': {
      const v = evaluate(args[0], c);
      const delim = evaluate(args[1], c);
      const names = flagNames(args.slice(2).map((a) => evaluate(a, c)));
      return str(printFlags(toSigned64(v), delim.k === 'str' ? delim.s : '', names));
    }
    case '__print_symbolic':
    case '__print_symbolic_u64': {
      const v = evaluate(args[0], c);
      return str(printSymbolic(toSigned64(v), flagNames(args.slice(1).map((a) => evaluate(a, c)))));
    }
    case '__print_hex':
    case '__print_hex_str': {
      const len = Number(num(args[1], c));
      return str(printHex(bytesArg(evaluate(args[0], c), len, c), fn === '__print_hex_str'));
    }
    case '__print_array': {
      const count = Number(num(args[1], c));
      const el = Number(num(args[2], c));
      return str(printArray(bytesArg(evaluate(args[0], c), count * el, c), count, el));
    }
    case '__print_dynamic_array': {
      const b = dynamicBytes(c.data, dynField(c, args[0]));
      const el = Number(num(args[1], c)) || 1;
      return str(printArray(b, Math.floor(b.length / el), el));
    }
    case '__print_hex_dump': {
      const prefix = evaluate(args[0], c);
      const len = Number(num(args[5], c));
      return str(
        printHexDump(
          prefix.k === 'str' ? prefix.s : '',
          Number(num(args[1], c)),
          Number(num(args[2], c)),
          Number(num(args[3], c)),
          bytesArg(evaluate(args[4], c), len, c),
          truthy(evaluate(args[6], c)),
        ),
      );
    }
    case '__print_ns_to_secs':
      return mk(BigInt.asUintN(64, num(args[0], c)) / 1000000000n, 64, false);
    case '__print_ns_without_secs':
      return mk(BigInt.asUintN(64, num(args[0], c)) % 1000000000n, 32, false);
    case '__builtin_expect':
    case 'pte_val':
    case 'pmd_val':
    case 'pud_val':
    case 'pgd_val':
    case 'native_make_pte':
    case 'native_make_pmd':
    case 'native_make_pud':
    case 'native_make_pgd':
      return evaluate(args[0], c);
    case '__builtin_constant_p':
      return bool(false);
  }
  throw new EvalError(`function ${fn}`);
}

/** A value as the unsigned long the __print_* helpers take (signed values sign-extend). */
function toSigned64(v: Val): bigint {
  if (v.k !== 'int') return toBig(v);
  return wrap(v.v, v.bits, v.signed);
}

export function evaluate(e: Expr, c: EvalContext): Val {
  switch (e.k) {
    case 'num': {
      const fits32 = e.long ? false : e.unsigned ? e.v <= 0xffffffffn : e.v <= 0x7fffffffn;
      if (fits32) return mk(e.v, 32, !(e.unsigned || e.v > 0x7fffffffn));
      return mk(e.v, 64, !(e.unsigned || e.v > 0x7fffffffffffffffn));
    }
    case 'str':
      return str(e.v);
    case 'rec':
      return fieldValue(c, field(c, e.field));
    case 'id': {
      const v = c.vars?.get(e.name);
      if (v) return v;
      if (e.name in CONSTANTS) return mk(CONSTANTS[e.name], 32, true);
      const k = c.consts?.get(e.name);
      if (k !== undefined) return mk(k, k > 0xffffffffn ? 64 : 32, k <= 0x7fffffffn);
      const kv = c.env.variable?.(e.name);
      if (kv !== undefined) return mk(kv, 64, false);
      throw new EvalError(`unknown identifier ${e.name}`);
    }
    case 'member':
      // REC->ent.pid: the embedded struct trace_entry, i.e. the common fields.
      if (e.obj.k === 'rec' && e.obj.field === 'ent') return fieldValue(c, field(c, `common_${e.name}`));
      throw new EvalError('struct member access');
    case 'index': {
      const obj = evaluate(e.obj, c);
      const i = Number(num(e.index, c));
      if (obj.k === 'mem') {
        const size = obj.elemBits / 8;
        return { k: 'int', v: readInt(obj.buf, i * size, obj.elemBits, obj.elemSigned), bits: obj.elemBits, signed: obj.elemSigned };
      }
      if (obj.k === 'str') return mk(BigInt(obj.s.charCodeAt(i) || 0), 8, true);
      throw new EvalError('index of a non-array');
    }
    case 'call':
      return call(e.fn, e.args, c);
    case 'list':
      // An entry naming a constant the interpreter does not know is left out, not fatal.
      try {
        return { k: 'list', items: e.items.map((x) => evaluate(x, c)) };
      } catch (err) {
        if (err instanceof EvalError) return { k: 'list', items: [] };
        throw err;
      }
    case 'unary': {
      if (e.op === '&') {
        if (e.e.k === 'rec') {
          const f = field(c, e.e.field);
          return { k: 'mem', buf: c.data.subarray(f.offset, f.offset + f.size), elemBits: f.elemBits, elemSigned: f.elemSigned };
        }
        return evaluate(e.e, c);
      }
      const v = evaluate(e.e, c);
      switch (e.op) {
        case '!':
          return bool(!truthy(v));
        case '*':
          if (v.k === 'mem') return { k: 'int', v: readInt(v.buf, 0, v.elemBits, v.elemSigned), bits: v.elemBits, signed: v.elemSigned };
          throw new EvalError('dereference');
        case '+':
          return v;
      }
      const x = asInt(v);
      const p = x.bits < 32 ? { bits: 32 as IntBits, signed: true } : x;
      return mk(e.op === '-' ? -x.v : ~wrap(x.v, p.bits, p.signed), p.bits, p.signed);
    }
    case 'cast': {
      const v = evaluate(e.e, c);
      if (e.type.ptr > 0 && v.k !== 'int') return v;
      if (v.k !== 'int') return v;
      if (e.type.base === 'void' && e.type.ptr === 0) return v;
      const t = scalarType(e.type.base, e.type.ptr) ?? (e.type.base.startsWith('struct ') ? undefined : { bits: 64 as IntBits, signed: false });
      if (!t) throw new EvalError(`cast to ${e.type.base}`);
      // A value converts through its own type first (sign extension), then wraps to the target.
      return mk(wrap(v.v, v.bits, v.signed), t.bits, t.signed);
    }
    case 'sizeof': {
      if (e.type) {
        const t = scalarType(e.type.base, e.type.ptr);
        if (!t) throw new EvalError(`sizeof ${e.type.base}`);
        return mk(BigInt(t.bits / 8), 64, false);
      }
      if (e.e?.k === 'rec') return mk(BigInt(field(c, e.e.field).size), 64, false);
      const v = evaluate(e.e!, c);
      return mk(BigInt(v.k === 'int' ? v.bits / 8 : v.k === 'mem' ? v.buf.length : 8), 64, false);
    }
    case 'bin': {
      if (e.op === '&&') return bool(truthy(evaluate(e.l, c)) && truthy(evaluate(e.r, c)));
      if (e.op === '||') return bool(truthy(evaluate(e.l, c)) || truthy(evaluate(e.r, c)));
      return binary(e.op, evaluate(e.l, c), evaluate(e.r, c));
    }
    case 'cond':
      return truthy(evaluate(e.c, c)) ? evaluate(e.a, c) : evaluate(e.b, c);
    case 'block': {
      const vars = new Map(c.vars ?? []);
      const inner = { ...c, vars };
      for (const d of e.vars) {
        const v = evaluate(d.e, inner);
        const t = scalarType(d.type.base, d.type.ptr);
        vars.set(d.name, t && v.k === 'int' ? mk(wrap(v.v, v.bits, v.signed), t.bits, t.signed) : v);
      }
      return evaluate(e.result, inner);
    }
  }
}
