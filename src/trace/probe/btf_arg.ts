/**
 * BTF arguments (CONFIG_PROBE_EVENTS_BTF_ARGS): function parameters by name,
 * `->field` / `.field` paths through struct layouts, `$retval` typed by the
 * prototype, `$current` as a task_struct, the fetch type BTF implies, and
 * typecasts: 7.2's `(struct)field` on eprobes, 7.3's `(struct[,member])`.
 */
import { resolveType, type CMember, type CType, type ResolvedType, type StructType } from '../../kernel/ctypes.js';
import { findFetchType, type FetchType } from './fetch.js';
import { isFunctionEntry, isFunctionReturn, TPARG, type CodeRef, type KRet, type ParseContext } from './parse_context.js';

/**
 * parse_btf_field() advances the caret by `next - fieldname` even when there
 * is no next field (NULL - pointer): the caret of a later error in that
 * argument is garbage in the kernel. This stands in for that garbage.
 */
const NULL_MINUS_POINTER = -0x5a5a3;

/** query_btf_context(): the prototype of ctx.funcname (tracepoint stubs lose their first `__data` parameter). */
export function queryBtfContext(ctx: ParseContext): KRet {
  if (ctx.btf) return 0;
  if (!ctx.funcname) return 'EINVAL';
  const proto = ctx.env.btf?.funcProto(ctx.funcname);
  if (!proto) return 'ENOENT';
  let params = proto.params;
  if (ctx.flags & TPARG.TPOINT) params = params.slice(1);
  ctx.btf = { proto, params };
  return 0;
}

/** split_next_field(): `a->b` (arrow), `a.b` (dot), or a lone `-` (error). */
function splitNextField(varname: string, ctx: ParseContext): { head: string; next?: string; nextAt: number; arrow: boolean } | undefined {
  for (let i = 0; i < varname.length; i++) {
    const ch = varname[i];
    if (ch === '-' && varname[i + 1] === '>') return { head: varname.slice(0, i), next: varname.slice(i + 2), nextAt: i + 2, arrow: true };
    if (ch === '.') return { head: varname.slice(0, i), next: varname.slice(i + 1), nextAt: i + 1, arrow: false };
    if (ch === '-') {
      ctx.log.err(ctx.offset + i, 'BAD_HYPHEN');
      return undefined;
    }
  }
  return { head: varname, nextAt: -1, arrow: false };
}

const isStructLike = (t: ResolvedType): t is StructType => t.kind === 'struct' || t.kind === 'union';

/** btf_find_struct_member(): named members first, then anonymous struct/union members (LIFO). */
function findStructMember(type: ResolvedType, name: string): { member: CMember; anonOffs: number } | 'EINVAL' | undefined {
  if (!isStructLike(type)) return 'EINVAL';
  const stack: { type: StructType; offset: number }[] = [];
  let cur: StructType = type;
  let curOffset = 0;
  for (;;) {
    for (const m of cur.members) {
      if (m.name === '') {
        const mt = resolveType(m.type);
        if (isStructLike(mt) && stack.length < 16) stack.push({ type: mt, offset: curOffset + m.bitOffset });
      } else if (m.name === name) {
        return { member: m, anonOffs: curOffset };
      }
    }
    const top = stack.pop();
    if (!top) return undefined;
    cur = top.type;
    curOffset = top.offset;
  }
}

/**
 * get_bitoffset_of_field(): one `.`-joined run of members (up to the next
 * `->`) inside `type`; their bit offset, the member type it ends on, and the
 * path left after the `->`.
 */
function memberRun(fieldname: string, type: ResolvedType, ctx: ParseContext): { bitoffs: number; type: ResolvedType; rest?: string } | KRet {
  let bitoffs = 0;
  let name: string | undefined = fieldname;
  let isPtr: boolean;
  do {
    const split = splitNextField(name, ctx);
    if (!split) return 'EINVAL';
    isPtr = split.arrow;
    const found = findStructMember(type, split.head);
    if (found === 'EINVAL') {
      ctx.log.err(ctx.offset, 'BAD_BTF_TID');
      return 'EINVAL';
    }
    if (!found) {
      ctx.log.err(ctx.offset, 'NO_BTF_FIELD');
      return 'ENOENT';
    }
    bitoffs += found.anonOffs + found.member.bitOffset;
    ctx.lastBitsize = found.member.bitSize;
    type = resolveType(found.member.type);
    if (split.next !== undefined) ctx.offset += split.nextAt;
    else if (ctx.env.profile.btfFieldGarbageCaret) ctx.offset += NULL_MINUS_POINTER;
    name = split.next;
  } while (!isPtr && name !== undefined);
  return { bitoffs, type, rest: name };
}

/**
 * parse_btf_field(): a `->`/`.` path from a pointer — or, after a typecast
 * or `$current` (ctx.structType), from the struct itself, whose first
 * member's offset is taken back by the typecast's field option
 * (`prefixBytes`: container_of).
 */
function parseBtfField(fieldname: string, type: ResolvedType, pc: CodeRef, end: number, ctx: ParseContext, prefixBytes = 0): KRet {
  let code = pc.i;
  let name: string | undefined = fieldname;
  let first = true;
  do {
    const fromStruct = first && ctx.structType !== undefined;
    if (!fromStruct) {
      if (type.kind !== 'ptr') {
        ctx.log.err(ctx.offset, 'NO_PTR_STRCT');
        return 'EINVAL';
      }
      type = resolveType(type.target);
    }
    const run = memberRun(name!, type, ctx);
    if (typeof run !== 'object') return run;
    if (++code === end) {
      ctx.log.err(ctx.offset, 'TOO_MANY_OPS');
      return 'EINVAL';
    }
    pc.code[code] = { op: 'DEREF', offset: Math.floor(run.bitoffs / 8) - (fromStruct ? prefixBytes : 0) };
    pc.i = code;
    ctx.lastBitoffs = run.bitoffs % 8;
    ctx.lastType = run.type;
    type = run.type;
    name = run.rest;
    first = false;
  } while (name !== undefined);
  return 0;
}

/** parse_btf_arg(): a parameter name (or `$retval`, `$current`, or an eprobe field after a 7.2 typecast), with an optional field path. */
export function parseBtfArg(varname: string, pc: CodeRef, end: number, ctx: ParseContext): KRet {
  const code = pc.code[pc.i];
  const current = ctx.env.profile.probeCurrent && varname.startsWith('$current');
  if (!current && !ctx.funcname && !(ctx.flags & TPARG.TEVENT)) return 'EINVAL';
  const split = splitNextField(varname, ctx);
  if (!split) return 'EINVAL';
  const head = split.head;
  if (!split.arrow && split.next !== undefined) {
    ctx.log.err(ctx.offset + split.nextAt, 'NOSUP_DAT_ARG');
    return 'EOPNOTSUPP';
  }
  let type: CType | undefined;
  if (current && head === '$current') {
    code.op = 'CURRENT';
    // without a typecast, $current is a task_struct
    const task = ctx.env.btf?.struct('task_struct');
    if (!task) {
      ctx.log.err(ctx.offset, 'NO_BTF_ENTRY');
      return 'ENOENT';
    }
    ctx.structType = task;
    type = task;
  } else if (ctx.flags & TPARG.TEVENT && ctx.env.profile.probeTypecasts === 'eprobe') {
    const field = ctx.event?.fields.find((f) => f.name === head);
    if (!field) {
      ctx.log.err(ctx.offset, 'BAD_ATTACH_ARG');
      return 'EINVAL';
    }
    code.op = 'TP_ARG';
    code.field = field;
    if (!ctx.structType) return 'EINVAL';
    type = ctx.structType;
  } else if (ctx.flags & TPARG.RETURN && head === '$retval') {
    code.op = 'RETVAL';
    if (queryBtfContext(ctx) === 0) {
      const ret = ctx.btf!.proto.ret;
      if (ret.kind === 'void') {
        ctx.log.err(ctx.offset, 'NO_RETVAL');
        return 'ENOENT';
      }
      type = ret;
    } else {
      if (split.next !== undefined) {
        ctx.log.err(ctx.offset + split.nextAt, 'NO_BTF_ENTRY');
        return 'ENOENT';
      }
      return 0;
    }
  } else {
    if (!ctx.btf) {
      const ret = queryBtfContext(ctx);
      if (ret !== 0 || ctx.btf!.params.length === 0) {
        ctx.log.err(ctx.offset, 'NO_BTF_ENTRY');
        return 'ENOENT';
      }
    }
    const params = ctx.btf!.params;
    const i = params.findIndex((p) => p.name === head);
    if (i < 0) {
      ctx.log.err(ctx.offset, 'NO_BTFARG');
      return 'ENOENT';
    }
    if (isFunctionEntry(ctx.flags)) {
      code.op = 'ARG';
      code.param = ctx.flags & TPARG.TPOINT ? i + 1 : i;
    } else if (isFunctionReturn(ctx.flags)) {
      code.op = 'EDATA';
      code.offset = ctx.tp.storeEntryArg(i);
    }
    type = params[i].type;
  }
  const resolved = resolveType(type);
  ctx.lastType = resolved;
  ctx.lastBitoffs = 0;
  ctx.lastBitsize = 0;
  if (split.next !== undefined) {
    ctx.offset += split.nextAt;
    return parseBtfField(split.next, resolved, pc, end, ctx);
  }
  return 0;
}

const isUnsigned8 = (t: CType): boolean => {
  const r = resolveType(t);
  return r.kind === 'int' && !r.signed && r.size === 1;
};

/**
 * btf_type_is_char_ptr(): the kernel takes `type->type` without checking the
 * kind; for sized types (int, enum, struct, union) that field is the size,
 * read as a type id. So `$retval:string` on a `long` asks about type 8.
 */
function isCharPtr(t: ResolvedType, ctx: ParseContext): boolean {
  if (t.kind === 'ptr') return isUnsigned8(t.target);
  if (t.kind === 'int' || t.kind === 'enum' || t.kind === 'struct' || t.kind === 'union' || t.kind === 'float') {
    const alias = ctx.env.btfTypeById?.(t.size);
    return alias !== undefined && isUnsigned8(alias);
  }
  return false;
}

/** check_prepare_btf_string_fetch(): `char *` gets one more dereference, `char[]` none, other types are refused. */
export function checkPrepareBtfStringFetch(typename: string, pc: CodeRef, ctx: ParseContext): KRet {
  const t = ctx.lastType;
  if (!ctx.env.btf || !t) return 0;
  if (t.kind === 'array' && isUnsigned8(t.elem)) return 0;
  if (isCharPtr(t, ctx)) {
    const next = pc.i + 1;
    if (pc.code[next].op === 'END') {
      ctx.log.err(ctx.offset, 'TOO_MANY_OPS');
      return 'E2BIG';
    }
    pc.code[next] = { op: typename[0] === 'u' ? 'UDEREF' : 'DEREF', offset: 0 };
    pc.i = next;
    return 0;
  }
  ctx.log.err(ctx.offset, 'BAD_TYPE4STR');
  return 'EINVAL';
}

/** fetch_type_from_btf_type(): the storage type BTF implies (undefined: the default). */
function fetchTypeFromBtfType(t: ResolvedType, ctx: ParseContext): string | undefined {
  switch (t.kind) {
    case 'enum':
      return t.size === 8 ? 's64' : 's32';
    case 'ptr':
      return 'x64';
    case 'int': {
      const bits = t.size * 8;
      if (t.signed) return bits === 8 || bits === 16 || bits === 32 || bits === 64 ? `s${bits}` : undefined;
      if (bits === 8 || bits === 16 || bits === 32 || bits === 64) return `u${bits}`;
      ctx.lastBitsize = bits;
      return 'u64';
    }
    default:
      return undefined;
  }
}

/** find_fetch_type_from_btf_type(). */
export function findFetchTypeFromBtfType(ctx: ParseContext): FetchType | undefined {
  const typestr = ctx.env.btf && ctx.lastType ? fetchTypeFromBtfType(ctx.lastType, ctx) : undefined;
  return findFetchType(typestr, (ctx.flags & TPARG.USER) !== 0);
}

/** parse_btf_bitfield(): a bitfield member gets a shift-and-mask step on a u64 load. */
export function parseBtfBitfield(pc: CodeRef, ctx: ParseContext): KRet {
  if (ctx.lastBitsize % 8 === 0 && ctx.lastBitoffs === 0) return 0;
  const next = pc.i + 1;
  if (pc.code[next].op !== 'NOP') {
    ctx.log.err(ctx.offset, 'TOO_MANY_OPS');
    return 'EINVAL';
  }
  pc.i = next;
  pc.code[next] = {
    op: 'MOD_BF',
    lshift: 64 - (ctx.lastBitsize + ctx.lastBitoffs),
    rshift: 64 - ctx.lastBitsize,
    basesize: 8,
  };
  return 0;
}

/** 7.2's handle_typecast(): `(struct_name)field[->member...]` on eprobe fields, parsed at the leaf. */
export function handleEprobeTypecast(arg: string, pc: CodeRef, end: number, ctx: ParseContext): KRet {
  if (!(ctx.flags & TPARG.TEVENT)) {
    ctx.log.err(ctx.offset, 'TYPECAST_NOT_EVENT');
    return 'EINVAL';
  }
  const close = arg.indexOf(')');
  if (close < 0) {
    ctx.log.err(ctx.offset + arg.length, 'DEREF_OPEN_BRACE');
    return 'EINVAL';
  }
  // bpf_find_btf_id(, BTF_KIND_STRUCT): `()` is the first anonymous struct
  const st = ctx.env.btf?.struct(arg.slice(1, close), 'struct');
  if (!st) {
    ctx.log.err(ctx.offset + 1, 'NO_PTR_STRCT');
    return 'EINVAL';
  }
  ctx.structType = st;
  ctx.offset += close + 1;
  return parseBtfArg(arg.slice(close + 1), pc, end, ctx);
}

/**
 * parse_btf_casttype(): `struct[,member...]` of a BTF typecast, the caret
 * at `struct`. The struct becomes ctx.structType; the result is the byte
 * offset of the field option's member (0 without one).
 */
function parseBtfCasttype(casttype: string, ctx: ParseContext): { prefixBytes: number } | KRet {
  const comma = casttype.indexOf(',');
  const st = ctx.env.btf?.struct(comma < 0 ? casttype : casttype.slice(0, comma), 'struct');
  if (!st) {
    ctx.log.err(ctx.offset, 'NO_PTR_STRCT');
    return 'EINVAL';
  }
  ctx.structType = st;
  if (comma < 0) return { prefixBytes: 0 };
  ctx.offset += comma + 1;
  const run = memberRun(casttype.slice(comma + 1), st, ctx);
  if (typeof run !== 'object') return run;
  if (run.bitoffs % 8) {
    ctx.log.err(ctx.offset, 'TYPECAST_NOT_ALIGNED');
    return 'EINVAL';
  }
  if (run.rest !== undefined) {
    // the member path went through a `->`
    ctx.log.err(ctx.offset - 2, 'TYPECAST_BAD_ARROW');
    return 'EINVAL';
  }
  return { prefixBytes: run.bitoffs / 8 };
}

/**
 * A BTF typecast being unwound: its struct (caret at `castAt`, just after the
 * `(`) and its member path (caret at `fieldAt`), applied to the fetch
 * program of what it casts.
 */
export function applyBtfTypecast(casttype: string, castAt: number, fieldname: string, fieldAt: number, pc: CodeRef, end: number, ctx: ParseContext): KRet {
  ctx.structType = undefined;
  ctx.offset = castAt;
  const cast = parseBtfCasttype(casttype, ctx);
  if (typeof cast !== 'object') return cast;
  ctx.offset = fieldAt;
  return parseBtfField(fieldname, ctx.structType!, pc, end, ctx, cast.prefixBytes);
}
