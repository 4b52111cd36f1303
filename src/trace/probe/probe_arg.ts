/**
 * The fetch-argument parser shared by every probe type (trace_probe.c):
 * `[name=]fetcharg[:type]` into a fetch program and a storage type, with the
 * kernel's limits, error texts and caret positions.
 */
import type { ErrnoName } from '../../kernel/errno.js';
import {
  checkPrepareBtfStringFetch,
  findFetchTypeFromBtfType,
  handleEprobeTypecast,
  parseBtfArg,
  parseBtfBitfield,
} from './btf_arg.js';
import { FETCH_INSN_MAX, findFetchType, type FetchInsn, type FetchOp, type FetchType } from './fetch.js';
import { isalpha, isdigit, isGoodName, kstrtol, kstrtoul, kstrtouint, simpleStrtoul } from './kstr.js';
import {
  isFunctionEntry,
  isFunctionReturn,
  MAX_ARG_NAME_LEN,
  MAX_ARRAY_LEN,
  MAX_PROBE_EVENT_SIZE,
  PARAM_MAX_STACK,
  TPARG,
  type CodeRef,
  type KRet,
  type ParseContext,
  type ProbeArg,
  type ProbeArgs,
} from './parse_context.js';
import { parseLayers, unwindLayers } from './probe_arg_nest.js';
import type { TpErr } from './probe_log.js';

/** x86_64 regoffset_table: register name → offset in struct pt_regs. */
const PT_REGS: Record<string, number> = {
  r15: 0, r14: 8, r13: 16, r12: 24, bp: 32, bx: 40, r11: 48, r10: 56, r9: 64, r8: 72,
  ax: 80, cx: 88, dx: 96, si: 104, di: 112, orig_ax: 120, ip: 128, cs: 136, flags: 144, sp: 152, ss: 160,
};

/** regs_query_register_offset(). */
function registerOffset(name: string): number | undefined {
  return Object.hasOwn(PT_REGS, name) ? PT_REGS[name] : undefined;
}

/** Fields every event has, or probe events reserve: argument names may not take them. */
const RESERVED_FIELD_NAMES = [
  'common_type', 'common_flags', 'common_preempt_count', 'common_pid', 'common_tgid',
  '__probe_ip', '__probe_ret_ip', '__probe_func',
];

const log = (ctx: ParseContext, offset: number, err: TpErr): void => ctx.log.err(offset, err);

/** A `$stackN` / `$argN` number kstrtoul() refused: BAD_VAR, with its errno or EINVAL as the series has it. */
function badVarNumber(ctx: ParseContext, errno: ErrnoName): KRet {
  log(ctx, ctx.offset, 'BAD_VAR');
  return ctx.env.profile.probeVarNumberErrno ? errno : 'EINVAL';
}

/** parse_probe_vars(): `$retval`, `$stack[N]`, `$comm`, `$current`, `$argN`, or an eprobe's `$field`. */
function parseProbeVars(origArg: string, pc: CodeRef, end: number, ctx: ParseContext): KRet {
  const code = pc.code[pc.i];
  let err: TpErr = 'BAD_VAR';
  const arg = origArg.slice(1);
  inval: {
    if (ctx.flags & TPARG.TEVENT) {
      const field = ctx.event?.fields.find((f) => f.name === arg);
      if (field) {
        code.op = 'TP_ARG';
        code.field = field;
        return 0;
      }
    }
    if (arg === 'comm' || arg === 'COMM') {
      code.op = 'COMM';
      return 0;
    }
    // eprobes fetch their event's fields and $comm only
    if (ctx.flags & TPARG.TEVENT) break inval;
    if (arg.startsWith('retval')) {
      if (!(ctx.flags & TPARG.RETURN)) {
        err = 'RETVAL_ON_PROBE';
        break inval;
      }
      if (!(ctx.flags & TPARG.KERNEL)) {
        code.op = 'RETVAL';
        return 0;
      }
      return parseBtfArg(origArg, pc, end, ctx);
    }
    if (arg.startsWith('stack')) {
      const rest = arg.slice(5);
      if (rest === '') {
        code.op = 'STACKP';
        return 0;
      }
      if (isdigit(rest[0])) {
        const r = kstrtoul(rest, 10);
        if (!r.ok) return badVarNumber(ctx, r.err);
        if (ctx.flags & TPARG.KERNEL && r.value > BigInt(PARAM_MAX_STACK)) {
          err = 'BAD_STACK_NUM';
          break inval;
        }
        code.op = 'STACK';
        code.param = Number(r.value & 0xffffffffn);
        return 0;
      }
      break inval;
    }
    if (ctx.env.profile.probeCurrent && arg.startsWith('current')) {
      // the task_struct's address; `$current->member` through BTF
      if (!(ctx.flags & TPARG.KERNEL)) break inval;
      const rest = arg.slice(7);
      if (rest[0] === '-') return parseBtfArg(origArg, pc, end, ctx);
      if (rest !== '') break inval;
      code.op = 'CURRENT';
      return 0;
    }
    if (arg.startsWith('arg')) {
      const r = kstrtoul(arg.slice(3), 10);
      if (!r.ok) return badVarNumber(ctx, r.err);
      if (r.value === 0n || r.value > BigInt(PARAM_MAX_STACK)) {
        err = 'BAD_ARG_NUM';
        break inval;
      }
      const param = Number(r.value) - 1;
      if (isFunctionEntry(ctx.flags)) {
        code.op = 'ARG';
        // a tracepoint's probe stub has a dummy first parameter
        code.param = ctx.flags & TPARG.TPOINT ? param + 1 : param;
      } else if (isFunctionReturn(ctx.flags)) {
        code.op = 'EDATA';
        code.offset = ctx.tp.storeEntryArg(param);
      } else {
        err = 'NOFENTRY_ARGS';
        break inval;
      }
      return 0;
    }
  }
  log(ctx, ctx.offset, err);
  return 'EINVAL';
}

/** str_to_immediate(). */
function strToImmediate(s: string): { ok: true; value: bigint } | { ok: false; err: KRet } {
  let r;
  if (isdigit(s[0])) r = kstrtoul(s);
  else if (s[0] === '-') r = kstrtol(s);
  else if (s[0] === '+') r = kstrtol(s.slice(1));
  else return { ok: false, err: 'EINVAL' };
  return r.ok ? { ok: true, value: BigInt.asUintN(64, r.value) } : { ok: false, err: r.err };
}

/** parse_probe_arg_leaf(): what the layers wrap: a variable, register, address, symbol, immediate, name. */
function parseProbeArgLeaf(arg: string, pc: CodeRef, end: number, ctx: ParseContext): KRet {
  let code = pc.i;
  let ret: KRet = 0;
  const at = (i: number): FetchInsn => pc.code[i];
  sw: switch (arg[0]) {
    case '$':
      ret = parseProbeVars(arg, pc, end, ctx);
      break;
    case '%': {
      if (ctx.flags & (TPARG.TEVENT | TPARG.FPROBE)) {
        // eprobes and fprobes have no registers
        log(ctx, ctx.offset, 'BAD_VAR');
        if (ctx.env.profile.probeRegisterRefusalLogsTwice) break;
        return 'EINVAL';
      }
      const off = registerOffset(arg.slice(1));
      if (off !== undefined) {
        at(code).op = 'REG';
        at(code).param = off;
      } else {
        log(ctx, ctx.offset, 'BAD_REG_NAME');
        ret = 'EINVAL';
      }
      break;
    }
    case '@': {
      if (isdigit(arg[1])) {
        const r = kstrtoul(arg.slice(1));
        if (!r.ok) {
          log(ctx, ctx.offset, 'BAD_MEM_ADDR');
          ret = r.err;
          break;
        }
        at(code).op = 'IMM';
        at(code).immediate = r.value;
      } else if (arg[1] === '+') {
        if (ctx.flags & TPARG.KERNEL) {
          log(ctx, ctx.offset, 'FILE_ON_KPROBE');
          return 'EINVAL';
        }
        const r = kstrtol(arg.slice(2));
        if (!r.ok) {
          log(ctx, ctx.offset, 'BAD_FILE_OFFS');
          ret = r.err;
          break;
        }
        at(code).op = 'FOFFS';
        at(code).immediate = BigInt.asUintN(64, r.value);
      } else {
        if (!(ctx.flags & TPARG.KERNEL)) {
          log(ctx, ctx.offset, 'SYM_ON_UPROBE');
          return 'EINVAL';
        }
        // the symbol is resolved when the probe registers
        at(code).op = 'NOP_SYMBOL';
        at(code).data = arg.slice(1);
        if (++code === end) {
          log(ctx, ctx.offset, 'TOO_MANY_OPS');
          return 'EINVAL';
        }
        pc.code[code] = { op: 'IMM', immediate: 0n };
      }
      // these are fetching from memory
      if (++code === end) {
        log(ctx, ctx.offset, 'TOO_MANY_OPS');
        return 'EINVAL';
      }
      pc.i = code;
      pc.code[code] = { op: 'DEREF', offset: 0 };
      break;
    }
    case '\\':
      if (arg[1] === '"') {
        const s = arg.slice(2);
        if (!s.length || s[s.length - 1] !== '"') {
          log(ctx, ctx.offset + 2 + s.length, 'IMMSTR_NO_CLOSE');
          ret = 'EINVAL';
          break;
        }
        at(code).op = 'DATA';
        at(code).data = s.slice(0, -1);
      } else {
        const r = strToImmediate(arg.slice(1));
        if (!r.ok) {
          log(ctx, ctx.offset + 1, 'BAD_IMM');
          ret = r.err;
        } else {
          at(code).op = 'IMM';
          at(code).immediate = r.value;
        }
      }
      break;
    case '(':
      // BTF typecasts are layers (probe_arg_nest.ts); 7.2's eprobe typecast is a leaf
      if (ctx.env.profile.probeTypecasts !== 'eprobe') break;
      ret = handleEprobeTypecast(arg, pc, end, ctx);
      break;
    default:
      if (isalpha(arg[0]) || arg[0] === '_') {
        if (ctx.flags & TPARG.TEVENT && ctx.env.profile.eprobeBareFields) {
          const field = ctx.event?.fields.find((f) => f.name === arg);
          if (!field) {
            log(ctx, ctx.offset, 'NO_EVENT_FIELD');
            return 'EINVAL';
          }
          at(code).op = 'TP_ARG';
          at(code).field = field;
          break sw;
        }
        if (!isFunctionEntry(ctx.flags) && !isFunctionReturn(ctx.flags)) {
          log(ctx, ctx.offset, 'NOSUP_BTFARG');
          return 'EINVAL';
        }
        ret = parseBtfArg(arg, pc, end, ctx);
        break sw;
      }
  }
  if (!ret && at(code).op === 'NOP') {
    // parsed, but no fetch method found
    log(ctx, ctx.offset, 'BAD_FETCH_ARG');
    ret = 'EINVAL';
  }
  return ret;
}

/** parse_probe_arg(): the layers, the leaf, then the layers applied to the leaf's program. */
function parseProbeArg(arg: string, pc: CodeRef, end: number, ctx: ParseContext): KRet {
  const nest = parseLayers(arg, ctx);
  if (typeof nest !== 'object') return nest;
  const ret = parseProbeArgLeaf(nest.leaf, pc, end, ctx);
  if (ret) return ret;
  return unwindLayers(nest.layers, pc, end, ctx);
}

/** __parse_bitfield_probe_arg(): `b<width>@<offset>/<container>` → shift-and-mask. */
function parseBitfieldProbeArg(bf: string, t: FetchType, pc: CodeRef): KRet {
  if (bf[0] !== 'b') return 0;
  const w = simpleStrtoul(bf.slice(1));
  const tail = bf.slice(1 + w.end);
  if (w.value === 0n || tail[0] !== '@') return 'EINVAL';
  const rest = tail.slice(1);
  const o = simpleStrtoul(rest);
  if (o.end === 0 || rest[o.end] !== '/') return 'EINVAL';
  const next = pc.i + 1;
  if (pc.code[next].op !== 'NOP') return 'EINVAL';
  pc.i = next;
  const bits = BigInt(t.size * 8);
  pc.code[next] = {
    op: 'MOD_BF',
    lshift: Number(BigInt.asUintN(8, bits - (w.value + o.value))),
    rshift: Number(BigInt.asUintN(8, bits - w.value)),
    basesize: t.size,
  };
  return bits < w.value + o.value ? 'EINVAL' : 0;
}

interface ArgType {
  /** Text after `:` up to `[` (undefined without `:`). */
  t?: string;
  /** Offset of `t` in the argument (0 without a type). */
  offs: number;
  /** The fetch expression without its type. */
  expr: string;
}

/** parse_probe_arg_type(): split `expr:type[N]`, check the array part, find the fetch type. */
function parseProbeArgType(arg: string, parg: Partial<ProbeArg>, ctx: ParseContext): ArgType | KRet {
  let t: string | undefined;
  const colon = arg.indexOf(':');
  const expr = colon < 0 ? arg : arg.slice(0, colon);
  parg.count = 0;
  if (colon >= 0) {
    t = arg.slice(colon + 1);
    const lb = t.indexOf('[');
    if (lb >= 0) {
      const t2At = colon + 1 + lb + 1;
      const t2 = t.slice(lb + 1);
      t = t.slice(0, lb);
      const rb = t2.indexOf(']');
      if (rb < 0) {
        log(ctx, ctx.offset + t2At + t2.length, 'ARRAY_NO_CLOSE');
        return 'EINVAL';
      }
      if (rb + 1 < t2.length) {
        log(ctx, ctx.offset + t2At + rb + 1, 'BAD_ARRAY_SUFFIX');
        return 'EINVAL';
      }
      const n = kstrtouint(t2.slice(0, rb));
      if (!n.ok || n.value === 0n) {
        log(ctx, ctx.offset + t2At, 'BAD_ARRAY_NUM');
        return 'EINVAL';
      }
      if (n.value > BigInt(MAX_ARRAY_LEN)) {
        log(ctx, ctx.offset + t2At, 'ARRAY_TOO_BIG');
        return 'EINVAL';
      }
      parg.count = Number(n.value);
    }
  }
  const offs = t !== undefined ? colon + 1 : 0;
  const user = (ctx.flags & TPARG.USER) !== 0;
  // $comm and immediate strings cannot be dereferenced: they are strings
  if (!(ctx.flags & TPARG.TEVENT) && (expr === '$comm' || expr === '$COMM' || expr.startsWith('\\"'))) {
    if (parg.count || (t !== undefined && t !== 'string')) {
      log(ctx, ctx.offset + offs, 'NEED_STRING_TYPE');
      return 'EINVAL';
    }
    parg.type = findFetchType('string', user);
  } else {
    parg.type = findFetchType(t, user);
  }
  if (!parg.type) {
    log(ctx, ctx.offset + offs, 'BAD_TYPE');
    return 'EINVAL';
  }
  return { t, offs, expr };
}

const STRING_SOURCES: readonly FetchOp[] = ['DEREF', 'UDEREF', 'IMM', 'COMM', 'DATA', 'TP_ARG'];
const SYMSTR_SOURCES: readonly FetchOp[] = ['REG', 'STACK', 'RETVAL', 'ARG', 'DEREF', 'TP_ARG'];

/** finalize_fetch_insn(): the store step, then bitfield and array steps, then END. */
function finalizeFetchInsn(pc: CodeRef, parg: ProbeArg, type: string | undefined, typeOffset: number, ctx: ParseContext): KRet {
  let code = pc.i;
  const at = (i: number): FetchInsn => pc.code[i];
  const ptype = parg.type;
  if (ptype.string) {
    if (ptype.name === 'symstr') {
      if (!SYMSTR_SOURCES.includes(at(code).op)) {
        log(ctx, ctx.offset + typeOffset, 'BAD_SYMSTRING');
        return 'EINVAL';
      }
    } else if (!STRING_SOURCES.includes(at(code).op)) {
      log(ctx, ctx.offset + typeOffset, 'BAD_STRING');
      return 'EINVAL';
    }
    const op = at(code).op;
    if (ptype.name === 'symstr' || op === 'IMM' || op === 'COMM' || op === 'DATA' || op === 'TP_ARG' || parg.count) {
      // the address itself is kept; the store step comes after it
      code++;
      if (at(code).op !== 'NOP') {
        log(ctx, ctx.offset, 'TOO_MANY_OPS');
        return 'EINVAL';
      }
    }
    const cur = at(code);
    if (ptype.name === 'ustring' || cur.op === 'UDEREF') cur.op = 'ST_USTRING';
    else if (ptype.name === 'symstr') cur.op = 'ST_SYMSTR';
    else cur.op = 'ST_STRING';
    cur.size = ptype.size;
    parg.dynamic = true;
  } else if (at(code).op === 'DEREF') {
    at(code).op = 'ST_MEM';
    at(code).size = ptype.size;
  } else if (at(code).op === 'UDEREF') {
    at(code).op = 'ST_UMEM';
    at(code).size = ptype.size;
  } else {
    code++;
    if (at(code).op !== 'NOP') {
      log(ctx, ctx.offset, 'TOO_MANY_OPS');
      return 'E2BIG';
    }
    pc.code[code] = { op: 'ST_RAW', size: ptype.size };
  }
  const scode = code;
  const mod: CodeRef = { code: pc.code, i: code };
  if (type !== undefined) {
    const ret = parseBitfieldProbeArg(type, ptype, mod);
    if (ret) {
      log(ctx, ctx.offset + typeOffset, 'BAD_BITFIELD');
      return ret;
    }
  } else if (ctx.lastType) {
    // no type given: a BTF bitfield member still needs its shift-and-mask
    const ret = parseBtfBitfield(mod, ctx);
    if (ret) return ret;
  }
  code = mod.i;
  if (parg.count) {
    const sop = at(scode).op;
    if (sop !== 'ST_MEM' && sop !== 'ST_STRING' && sop !== 'ST_USTRING') {
      log(ctx, ctx.offset + typeOffset, 'BAD_STRING');
      return 'EINVAL';
    }
    code++;
    if (at(code).op !== 'NOP') {
      log(ctx, ctx.offset, 'TOO_MANY_OPS');
      return 'E2BIG';
    }
    pc.code[code] = { op: 'LP_ARRAY', param: parg.count };
  }
  code++;
  if (code < pc.code.length) pc.code[code] = { op: 'END' };
  pc.i = code;
  return 0;
}

/** traceprobe_parse_probe_arg_body(): length checks, type, fetch program, layout. */
function parseProbeArgBody(body: string, parg: ProbeArg, ctx: ParseContext): KRet {
  if (body.length > ctx.env.profile.probeArgMaxLen) {
    log(ctx, ctx.offset, 'ARG_TOO_LONG');
    return 'E2BIG';
  }
  if (body.length === 0) {
    log(ctx, ctx.offset, 'NO_ARG_BODY');
    return 'EINVAL';
  }
  parg.comm = body;
  try {
    const at = parseProbeArgType(body, parg, ctx);
    if (typeof at !== 'object') return at;
    const code: FetchInsn[] = Array.from({ length: FETCH_INSN_MAX }, () => ({ op: 'NOP' as FetchOp }));
    code[FETCH_INSN_MAX - 1] = { op: 'END' };
    const pc: CodeRef = { code, i: 0 };
    ctx.lastType = undefined;
    let ret = parseProbeArg(at.expr, pc, FETCH_INSN_MAX - 1, ctx);
    if (ret) return ret;
    if (ctx.lastType) {
      // BTF knows the type: it is the default storage type, and a `char *` string needs a dereference
      if (at.t === undefined) parg.type = findFetchTypeFromBtfType(ctx)!;
      else if (at.t.includes('string')) {
        ret = checkPrepareBtfStringFetch(at.t, pc, ctx);
        if (ret) return ret;
      }
    }
    parg.offset = ctx.tp.size;
    ctx.tp.size += parg.type.size * (parg.count || 1);
    if (ctx.tp.size > MAX_PROBE_EVENT_SIZE) {
      log(ctx, ctx.offset, 'EVENT_TOO_BIG');
      return 'E2BIG';
    }
    if (parg.count) parg.fmt = `${parg.type.fmttype}[${parg.count}]`;
    ret = finalizeFetchInsn(pc, parg, at.t, at.t !== undefined ? at.offs : 0, ctx);
    if (ret) return ret;
    const endAt = code.findIndex((c) => c.op === 'END');
    parg.code = code.slice(0, endAt + 1);
    return 0;
  } finally {
    // a typecast's struct is only for this argument
    ctx.structType = undefined;
  }
}

/** generate_probe_arg_name(): the BTF-style name when the expression is one, else `argN`. */
function generateProbeArgName(arg: string, idx: number): string {
  const colon = arg.indexOf(':');
  const name = colon < 0 ? arg : arg.slice(0, colon);
  return isGoodName(name) ? name : `arg${idx + 1}`;
}

/** traceprobe_parse_probe_arg(): argument `i` of `tp`, from one argv word. */
export function parseProbeArgument(tp: ProbeArgs, i: number, arg: string, ctx: ParseContext): KRet {
  ctx.tp = tp;
  const eq = arg.indexOf('=');
  let name: string;
  let body: string;
  if (eq >= 0) {
    if (eq > MAX_ARG_NAME_LEN) {
      log(ctx, 0, 'ARG_NAME_TOO_LONG');
      return 'EINVAL';
    }
    if (eq === 0) {
      log(ctx, 0, 'NO_ARG_NAME');
      return 'EINVAL';
    }
    name = arg.slice(0, eq);
    body = arg.slice(eq + 1);
  } else {
    name = generateProbeArgName(arg, i);
    body = arg;
  }
  const parg: ProbeArg = { name, comm: '', type: findFetchType(undefined, false)!, count: 0, offset: 0, dynamic: false, code: [] };
  tp.args[i] = parg;
  if (!isGoodName(name)) {
    log(ctx, 0, 'BAD_ARG_NAME');
    return 'EINVAL';
  }
  if (RESERVED_FIELD_NAMES.includes(name) || tp.args.slice(0, i).some((a) => a.name === name)) {
    log(ctx, 0, 'USED_ARG_NAME');
    return 'EINVAL';
  }
  ctx.offset = eq >= 0 ? eq + 1 : 0;
  return parseProbeArgBody(body, parg, ctx);
}
