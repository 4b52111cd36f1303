/**
 * Argument rewriting before the arguments are parsed: `$arg*` / `$argN` into
 * BTF parameter names (traceprobe_expand_meta_args) and `:%pd` / `:%pD` into
 * dentry-name dereferences (traceprobe_expand_dentry_args); and the argument
 * parsing of the function probes (kprobes, fprobes) that does both first.
 */
import { resolveType, type CType } from '../../kernel/ctypes.js';
import type { ErrnoName } from '../../kernel/errno.js';
import { queryBtfContext } from './btf_arg.js';
import { globMatch } from '../../kernel/glob_match.js';
import { isdigit, simpleStrtoul } from './kstr.js';
import {
  isFunctionEntry,
  isFunctionReturn,
  MAX_BTF_ARGS_LEN,
  MAX_DENTRY_ARGS_LEN,
  MAX_TRACE_ARGS,
  ProbeArgs,
  type KRet,
  type ParseContext,
} from './parse_context.js';
import { parseProbeArgument } from './probe_arg.js';
import type { ProbeEnv } from './probe_env.js';

/** argv_has_var_arg(): 1 if any `$arg…`, with the index of `$arg*` (or -1). */
function argvHasVarArg(argv: readonly string[], ctx: ParseContext): { found: boolean; argsIdx: number } | KRet {
  let found = false;
  let argsIdx = -1;
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('$arg')) continue;
    ctx.log.setIndex(i + 2);
    if (!isFunctionEntry(ctx.flags) && !isFunctionReturn(ctx.flags)) {
      ctx.log.err(0, 'NOFENTRY_ARGS');
      return 'EINVAL';
    }
    if (isdigit(argv[i][4])) {
      found = true;
      continue;
    }
    if (argv[i][4] !== '*') {
      ctx.log.err(0, 'BAD_VAR');
      return 'EINVAL';
    }
    if (argsIdx >= 0 && argsIdx < argv.length) {
      ctx.log.err(0, 'DOUBLE_ARGS');
      return 'EINVAL';
    }
    found = true;
    argsIdx = i;
  }
  return { found, argsIdx };
}

/**
 * traceprobe_expand_meta_args(): `$arg*` becomes every parameter name,
 * `$argN[:type]` the N-th name; undefined when nothing changes. All the
 * names share one MAX_BTF_ARGS_LEN buffer.
 */
function expandMetaArgs(argv: readonly string[], ctx: ParseContext): string[] | undefined | KRet {
  const has = argvHasVarArg(argv, ctx);
  if (typeof has !== 'object') return has;
  if (!has.found) return undefined;
  const q = queryBtfContext(ctx);
  if (q !== 0 || ctx.btf!.params.length === 0) {
    if (has.argsIdx !== -1) {
      // $arg* needs BTF
      ctx.log.err(0, 'NOSUP_BTFARG');
      return 'EOPNOTSUPP';
    }
    return undefined;
  }
  const params = ctx.btf!.params;
  let used = 0;
  /** sprint_nth_btf_arg(): the name (with a type suffix) of parameter `idx`. */
  const nth = (idx: number, type: string): { s: string } | KRet => {
    if (idx >= params.length) {
      ctx.log.err(0, 'NO_BTFARG');
      return 'ENOENT';
    }
    const s = params[idx].name + type;
    if (s.length >= MAX_BTF_ARGS_LEN - used) {
      ctx.log.err(0, 'ARGS_2LONG');
      return 'E2BIG';
    }
    used += s.length + 1;
    return { s };
  };
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    ctx.log.setIndex(i + 2);
    if (i === has.argsIdx) {
      for (let n = 0; n < params.length; n++) {
        const r = nth(n, '');
        if (typeof r !== 'object') return r;
        out.push(r.s);
      }
      continue;
    }
    if (argv[i].startsWith('$arg')) {
      const r = simpleStrtoul(argv[i].slice(4), 10);
      const type = argv[i].slice(4 + r.end);
      if (!(type[0] === ':' || type === '')) {
        ctx.log.err(0, 'BAD_VAR');
        return 'ENOENT';
      }
      // $argN counts from 1
      if (r.value === 0n) {
        ctx.log.err(0, 'BAD_ARG_NUM');
        return 'EINVAL';
      }
      const s = nth(Number(r.value > 0xffffffffn ? 0xffffffffn : r.value) - 1, type);
      if (typeof s !== 'object') return s;
      out.push(s.s);
    } else {
      out.push(argv[i]);
    }
  }
  return out;
}

/** Byte offsets %pd / %pD dereference: dentry->d_name.name and file->f_path.dentry. */
interface DentryOffsets {
  dName: number;
  fPathDentry: number;
}

/** x86_64 7.x / 6.12 layouts, when BTF does not say. */
const DEFAULT_DENTRY_OFFSETS: DentryOffsets = { dName: 0x28, fPathDentry: 0x48 };

function memberByteOffset(t: CType | undefined, path: string[]): number | undefined {
  let off = 0;
  for (const name of path) {
    const r = t && resolveType(t);
    if (!r || (r.kind !== 'struct' && r.kind !== 'union')) return undefined;
    const m = r.members.find((x) => x.name === name);
    if (!m) return undefined;
    off += m.bitOffset;
    t = m.type;
  }
  return off / 8;
}

/** offsetof(struct dentry, d_name.name) and offsetof(struct file, f_path.dentry), from BTF if possible. */
function dentryOffsets(env: ProbeEnv): DentryOffsets {
  const db = env.btf;
  const dName = memberByteOffset(db?.struct('dentry'), ['d_name', 'name']);
  const fPathDentry = memberByteOffset(db?.struct('file'), ['f_path', 'dentry']);
  return {
    dName: dName ?? DEFAULT_DENTRY_OFFSETS.dName,
    fPathDentry: fPathDentry ?? DEFAULT_DENTRY_OFFSETS.fPathDentry,
  };
}

/** traceprobe_expand_dentry_args(): `[name=]expr:%pd` → `[name=]+0x0(+0x28(expr)):string`. */
function expandDentryArgs(argv: string[], offs: DentryOffsets): KRet {
  let used = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!globMatch('*:%p[dD]', arg)) continue;
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : '';
    const expr = arg.slice(eq + 1, arg.length - 4);
    const hex = (n: number): string => `0x${n.toString(16)}`;
    const s = arg[arg.length - 1] === 'd'
      ? `${name}${eq >= 0 ? '=' : ''}+0x0(+${hex(offs.dName)}(${expr})):string`
      : `${name}${eq >= 0 ? '=' : ''}+0x0(+${hex(offs.dName)}(+${hex(offs.fPathDentry)}(${expr}))):string`;
    if (s.length >= MAX_DENTRY_ARGS_LEN - used) return 'ENOMEM';
    argv[i] = s;
    used += s.length + 1;
  }
  return 0;
}

/**
 * The arguments of a kprobe or fprobe (argv from index 2): `$arg*` and `%pd`
 * expanded, at most MAX_TRACE_ARGS of them (E2BIG), then each parsed.
 * Without `$arg` expansion, `%pd` is rewritten in `argv` itself, the words
 * the error log rebuilds its command from: a rejected definition shows the
 * rewritten text, as on the kernel.
 */
export function parseFunctionProbeArgs(argv: string[], ctx: ParseContext): ProbeArgs | ErrnoName {
  const { log, env } = ctx;
  let args = argv.slice(2);
  const expanded = expandMetaArgs(args, ctx);
  if (typeof expanded === 'string') return expanded;
  if (expanded) args = expanded;
  if (args.length > MAX_TRACE_ARGS) {
    log.setIndex(2);
    if (env.profile.logsTooManyArgs) log.err(0, 'TOO_MANY_ARGS');
    return 'E2BIG';
  }
  const d = expandDentryArgs(args, dentryOffsets(env));
  if (d) return d;
  if (!expanded) argv.splice(2, args.length, ...args);
  const pa = new ProbeArgs(args.length);
  for (let i = 0; i < args.length; i++) {
    log.setIndex(i + 2);
    ctx.offset = 0;
    const ret = parseProbeArgument(pa, i, args[i], ctx);
    if (ret) return ret;
  }
  return pa;
}
