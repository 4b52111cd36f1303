/**
 * The layers of a fetch argument around its leaf (trace_probe.c's
 * parse_probe_arg_nested() and unwind_parse_states()): dereferences
 * `+|-[u]OFFS(...)`, BTF typecasts `(struct[,member])...->member` and
 * `this_cpu_read(...)` / `this_cpu_ptr(...)`, read outside-in onto a stack,
 * then applied inside-out to the leaf's fetch program. Which layers exist,
 * and how deep they may go, is the profile's (7.2 knows dereferences only).
 */
import { applyBtfTypecast } from './btf_arg.js';
import { isdigit, kstrtol } from './kstr.js';
import { isFunctionEntry, isFunctionReturn, TPARG, type CodeRef, type KRet, type ParseContext } from './parse_context.js';
import type { TpErr } from './probe_log.js';

const THIS_CPU_PTR = 'this_cpu_ptr(';
const THIS_CPU_READ = 'this_cpu_read(';

/** One layer, as read on the way in. */
export type NestState =
  | {
      kind: 'deref';
      op: 'DEREF' | 'UDEREF' | 'CPU_PTR';
      offset: bigint;
      /** Caret of the inner expression: where errors of this layer point on the way out. */
      curOffs: number;
      inner: string;
      /** this_cpu_read(): a load after the per-CPU pointer. */
      cpuRead: boolean;
    }
  | {
      kind: 'typecast';
      casttype: string;
      fieldname: string;
      /** Caret of the `(`. */
      origOffset: number;
      /** Where the member path starts, from the `(`. */
      fieldOffset: number;
      inner: string;
    };

const log = (ctx: ParseContext, offset: number, err: TpErr): void => ctx.log.err(offset, err);

/** Does `arg` open a layer (rather than being the leaf)? */
function opensLayer(arg: string, ctx: ParseContext): boolean {
  const p = ctx.env.profile;
  if (arg[0] === '+' || arg[0] === '-') return true;
  if (arg[0] === '(') return p.probeTypecasts === 'btf';
  return p.probePerCpu && (arg.startsWith(THIS_CPU_PTR) || arg.startsWith(THIS_CPU_READ));
}

/** The `)` closing the `(` at s[0] (find_matched_close_paren), or -1. */
function matchedClose(s: string, from = 0): number {
  let depth = 0;
  for (let i = from; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

/** parse_probe_arg_deref(): `+|-[u]OFFS(inner)`. */
function derefLayer(arg: string, ctx: ParseContext): NestState | KRet {
  // `s` walks as the kernel's pointer does (the caret arithmetic depends on it)
  let s = arg;
  let op: 'DEREF' | 'UDEREF' = 'DEREF';
  if (s[1] === 'u') {
    op = 'UDEREF';
    s = s[0] + s.slice(2);
  }
  if (s[0] === '+') s = s.slice(1);
  const open = s.indexOf('(');
  if (open < 0) {
    log(ctx, ctx.offset, 'DEREF_NEED_BRACE');
    return 'EINVAL';
  }
  const r = kstrtol(s.slice(0, open));
  if (!r.ok) {
    log(ctx, ctx.offset, 'BAD_DEREF_OFFS');
    return r.err;
  }
  ctx.offset += open + 1 + (s[0] !== '-' ? 1 : 0);
  const inner = s.slice(open + 1);
  const close = inner.lastIndexOf(')');
  if (close < 0) {
    log(ctx, ctx.offset + inner.length, 'DEREF_OPEN_BRACE');
    return 'EINVAL';
  }
  return { kind: 'deref', op, offset: r.value, curOffs: ctx.offset, inner: inner.slice(0, close), cpuRead: false };
}

/** parse_this_cpu(): `this_cpu_ptr(inner)` / `this_cpu_read(inner)`, kernel probes but eprobes only. */
function thisCpuLayer(arg: string, ctx: ParseContext): NestState | KRet {
  if (!(ctx.flags & TPARG.KERNEL) || ctx.flags & TPARG.TEVENT) {
    log(ctx, ctx.offset, 'NOSUP_PERCPU');
    return 'EINVAL';
  }
  const cpuRead = arg.startsWith(THIS_CPU_READ);
  const rest = arg.slice((cpuRead ? THIS_CPU_READ : THIS_CPU_PTR).length);
  ctx.offset += arg.length - rest.length;
  const close = rest.lastIndexOf(')');
  if (close < 0) {
    log(ctx, ctx.offset + rest.length, 'DEREF_OPEN_BRACE');
    return 'EINVAL';
  }
  return { kind: 'deref', op: 'CPU_PTR', offset: 0n, curOffs: ctx.offset, inner: rest.slice(0, close), cpuRead };
}

/**
 * handle_typecast(): `(struct[,member])X->path`, where X is a name, `$var`
 * or `@sym`, a parenthesized expression, a dereference or a this_cpu_*().
 * The struct and the path are resolved on the way out.
 */
function typecastLayer(arg: string, ctx: ParseContext): NestState | KRet {
  const origOffset = ctx.offset;
  if (!(ctx.flags & TPARG.TEVENT) && !isFunctionEntry(ctx.flags) && !isFunctionReturn(ctx.flags)) {
    log(ctx, ctx.offset, 'NOSUP_BTFARG');
    return 'EOPNOTSUPP';
  }
  const castEnd = arg.indexOf(')');
  if (castEnd < 0) {
    log(ctx, ctx.offset + arg.length, 'DEREF_OPEN_BRACE');
    return 'EINVAL';
  }
  const at = castEnd + 1;
  const tmp = arg.slice(at);
  ctx.offset += at;
  let inner: string;
  let fieldAt: number;
  if (tmp[0] === '(') {
    const close = matchedClose(tmp);
    if (close < 0) {
      log(ctx, ctx.offset, 'DEREF_OPEN_BRACE');
      return 'EINVAL';
    }
    if (tmp[close + 1] !== '-' || tmp[close + 2] !== '>') {
      log(ctx, ctx.offset + close + 1, 'TYPECAST_REQ_FIELD');
      return 'EINVAL';
    }
    ctx.offset += 1;
    inner = tmp.slice(1, close);
    fieldAt = close + 3;
  } else if (tmp[0] === '+' || tmp[0] === '-' || tmp.startsWith(THIS_CPU_PTR) || tmp.startsWith(THIS_CPU_READ)) {
    const open = tmp.indexOf('(', 1);
    if (open < 0) {
      log(ctx, ctx.offset, 'DEREF_NEED_BRACE');
      return 'EINVAL';
    }
    const paren = matchedClose(tmp, open);
    if (paren < 0) {
      log(ctx, ctx.offset + tmp.length, 'DEREF_OPEN_BRACE');
      return 'EINVAL';
    }
    const close = paren + 1;
    if (tmp[close] !== '-' || tmp[close + 1] !== '>') {
      log(ctx, ctx.offset + close, 'TYPECAST_REQ_FIELD');
      return 'EINVAL';
    }
    inner = tmp.slice(0, close);
    fieldAt = close + 2;
  } else {
    if (tmp[0] === '@') {
      // @sym+offset must be parenthesized
      const sign = tmp.search(/[+-]/);
      if (sign >= 0 && isdigit(tmp[sign + 1])) {
        log(ctx, ctx.offset, 'TYPECAST_SYM_OFFSET');
        return 'EINVAL';
      }
    }
    const close = tmp.indexOf('-');
    if (close < 0 || tmp[close + 1] !== '>') {
      log(ctx, ctx.offset + tmp.length, 'TYPECAST_REQ_FIELD');
      return 'EINVAL';
    }
    inner = tmp.slice(0, close);
    fieldAt = close + 2;
  }
  return { kind: 'typecast', casttype: arg.slice(1, castEnd), fieldname: tmp.slice(fieldAt), origOffset, fieldOffset: at + fieldAt, inner };
}

/** parse_probe_arg_nested(): the layers around the leaf, outermost first; `leaf` is what is left. */
export function parseLayers(arg: string, ctx: ParseContext): { leaf: string; layers: NestState[] } | KRet {
  const layers: NestState[] = [];
  const max = ctx.env.profile.probeArgMaxNesting;
  while (opensLayer(arg, ctx)) {
    if (max !== undefined && layers.length >= max) {
      log(ctx, ctx.offset, 'TOO_MANY_NESTED');
      return 'E2BIG';
    }
    const st = arg[0] === '+' || arg[0] === '-' ? derefLayer(arg, ctx) : arg[0] === '(' ? typecastLayer(arg, ctx) : thisCpuLayer(arg, ctx);
    if (typeof st !== 'object') return st;
    layers.push(st);
    arg = st.inner;
  }
  return { leaf: arg, layers };
}

/** unwind_parse_states(): each layer, innermost first, appended to the leaf's program. */
export function unwindLayers(layers: readonly NestState[], pc: CodeRef, end: number, ctx: ParseContext): KRet {
  for (let i = layers.length - 1; i >= 0; i--) {
    const st = layers[i];
    if (st.kind === 'typecast') {
      const ret = applyBtfTypecast(st.casttype, st.origOffset + 1, st.fieldname, st.origOffset + st.fieldOffset, pc, end, ctx);
      if (ret) return ret;
      continue;
    }
    ctx.offset = st.curOffs;
    const cur = pc.code[pc.i].op;
    if (cur === 'COMM' || cur === 'DATA') {
      log(ctx, ctx.offset, 'COMM_CANT_DEREF');
      return 'EINVAL';
    }
    // this_cpu_*(@sym): the per-CPU pointer replaces the load of the symbol
    if (!(st.op === 'CPU_PTR' && st.inner[0] === '@') && ++pc.i === end) {
      log(ctx, ctx.offset, 'TOO_MANY_OPS');
      return 'EINVAL';
    }
    pc.code[pc.i] = { op: st.op, offset: Number(BigInt.asIntN(32, st.offset)) };
    ctx.lastType = undefined;
    if (st.cpuRead) {
      if (++pc.i === end) {
        log(ctx, ctx.offset, 'TOO_MANY_OPS');
        return 'EINVAL';
      }
      pc.code[pc.i] = { op: 'DEREF', offset: 0 };
    }
  }
  return 0;
}
