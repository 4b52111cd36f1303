/**
 * Parsing kprobe events (trace_kprobe.c): `p[:[GRP/][EVENT]] [MOD:]SYM[+OFFS]|ADDR [ARGS]`,
 * `r[MAXACTIVE][:[GRP/][EVENT]] ...` and `p ...%return`, into a TraceKprobe
 * (trace_kprobe.ts) that then registers.
 */
import { KRETPROBE_MAXACTIVE_MAX } from '../../ftrace/kretprobes.js';
import { parseEventName } from '../probe/event_name.js';
import { argvSplit, isdigit, kstrtol, kstrtoul, sanitizeEventName, truncate } from '../probe/kstr.js';
import { kprobeOnFuncEntry } from '../probe/kprobe_model.js';
import { parseFunctionProbeArgs } from '../probe/meta_args.js';
import { MAX_EVENT_NAME_LEN, newContext, TPARG, type KRet, type ParseContext } from '../probe/parse_context.js';
import { ProbeLog, type ErrorLogEntry } from '../probe/probe_log.js';
import { logRegisterError, parseMaxactive, registerOrAppend, TraceProbe } from '../probe/trace_probe.js';
import type { DynEventRegistry } from './trace_dynevent.js';
import { TraceKprobe } from './trace_kprobe.js';

const KPROBE_EVENT_SYSTEM = 'kprobes';

/** traceprobe_split_symbol_offset(): `sym+off` / `sym-off`. */
function splitSymbolOffset(symbol: string): { symbol: string; offset: bigint } | undefined {
  const i = symbol.search(/[+-]/);
  if (i < 0) return { symbol, offset: 0n };
  const r = kstrtol(symbol.slice(i));
  return r.ok ? { symbol: symbol.slice(0, i), offset: r.value } : undefined;
}

/** number_of_same_symbols(): vmlinux first (where symbolCountVmlinuxFirst, a match there ends it), then modules. */
function countSymbols(reg: DynEventRegistry, mod: string | undefined, name: string): number {
  const ks = reg.env.kallsyms;
  if (mod) return ks.countName(name, mod);
  const n = ks.countName(name);
  if (n > 0 && reg.env.profile.symbolCountVmlinuxFirst) return n;
  return n + ks.countName(name, '*');
}

/** validate_probe_symbol(): ENOENT, EADDRNOTAVAIL (not unique) or 0; an unloaded module defers. */
function validateProbeSymbol(reg: DynEventRegistry, symbol: string): 0 | 'ENOENT' | 'EADDRNOTAVAIL' {
  const colon = symbol.indexOf(':');
  let mod: string | undefined;
  if (colon >= 0) {
    mod = symbol.slice(0, colon);
    symbol = symbol.slice(colon + 1);
    if (!reg.env.kallsyms.moduleLoaded(mod)) return 0;
  }
  const n = countSymbols(reg, mod, symbol);
  if (n > 1) return 'EADDRNOTAVAIL';
  if (n === 0) return 'ENOENT';
  return 0;
}

export function createTraceKprobe(raw: string, reg: DynEventRegistry, sink: ErrorLogEntry[]): KRet | 'ECANCELED' {
  const argv = argvSplit(raw);
  if (!argv.length) return 0;
  const log = new ProbeLog('trace_kprobe', argv, sink, reg.env.profile);
  const ctx = newContext(reg.env, log, TPARG.KERNEL);
  return createInternal(argv, ctx, reg);
}

function createInternal(argv: string[], ctx: ParseContext, reg: DynEventRegistry): KRet | 'ECANCELED' {
  const { log, env } = ctx;
  if (argv[0][0] !== 'p' && argv[0][0] !== 'r') return 'ECANCELED';
  let isReturn = argv[0][0] === 'r';
  if (argv.length < 2) return 'ECANCELED';
  const colon = argv[0].indexOf(':', 1);
  let event: string | undefined = colon >= 0 ? argv[0].slice(colon + 1) : undefined;
  let maxactive = 0;
  if (isdigit(argv[0][1])) {
    if (!isReturn) {
      log.err(1, 'BAD_MAXACT_TYPE');
      return 'EINVAL';
    }
    const m = parseMaxactive(argv[0], colon, KRETPROBE_MAXACTIVE_MAX, log);
    if (m === 'EINVAL') return m;
    maxactive = m;
  }

  // an address, else a symbol
  let addr: bigint | undefined;
  let symbol: string | undefined;
  let offset = 0n;
  const a = kstrtoul(argv[1]);
  if (a.ok) {
    addr = a.value;
  } else {
    log.setIndex(1);
    // a uprobe's PATH:OFFSET
    if (argv[1].includes('/') && argv[1].includes(':')) return 'ECANCELED';
    symbol = argv[1];
    const pct = symbol.indexOf('%');
    if (pct >= 0) {
      if (symbol.slice(pct) === '%return') {
        symbol = symbol.slice(0, pct);
        isReturn = true;
      } else {
        log.err(pct, 'BAD_ADDR_SUFFIX');
        return 'EINVAL';
      }
    }
    const so = splitSymbolOffset(symbol);
    if (!so || so.offset < 0n || so.offset > 0xffffffffn) {
      log.err(0, 'BAD_PROBE_ADDR');
      return 'EINVAL';
    }
    symbol = so.symbol;
    offset = so.offset;
    const v = validateProbeSymbol(reg, symbol);
    if (v) {
      log.err(0, v === 'EADDRNOTAVAIL' ? 'NON_UNIQ_SYMBOL' : 'BAD_PROBE_ADDR');
      return 'EINVAL';
    }
    if (isReturn) ctx.flags |= TPARG.RETURN;
    const e = kprobeOnFuncEntry(env, undefined, symbol, Number(offset));
    if (e === 0 && !isReturn) ctx.flags |= TPARG.FENTRY;
    // ENOENT waits for registration
    if (e === 'EINVAL' && isReturn) {
      log.err(0, 'BAD_RETPROBE');
      return 'EINVAL';
    }
  }

  log.setIndex(0);
  let group = KPROBE_EVENT_SYSTEM;
  if (event !== undefined) {
    const n = parseEventName(event, colon + 1, log);
    if (n === 'EINVAL') return 'EINVAL';
    if (n.group !== undefined) group = n.group;
    event = n.event;
  }
  if (event === undefined) {
    event = symbol !== undefined
      ? `${isReturn ? 'r' : 'p'}_${symbol}_${offset}`
      : `${isReturn ? 'r' : 'p'}_0x${reg.hashPointer(addr!)}`;
    event = sanitizeEventName(truncate(event, MAX_EVENT_NAME_LEN));
  }

  ctx.funcname = symbol;
  const pa = parseFunctionProbeArgs(argv, ctx);
  if (typeof pa === 'string') return pa;

  const tk = new TraceKprobe(reg, new TraceProbe(group, event, isReturn, pa), { symbol, offset: Number(offset), addr, maxactive });
  const ret = registerOrAppend(tk, reg, log);
  logRegisterError(log, ret);
  return ret;
}
