/**
 * kprobe events (trace_kprobe.c): `p[:[GRP/][EVENT]] [MOD:]SYM[+OFFS]|ADDR [ARGS]`,
 * `r[MAXACTIVE][:[GRP/][EVENT]] ...` and `p ...%return`.
 */
import type { DynEvent, DynEventOps, DynEventRegistry } from './dynevent.js';
import { parseEventName } from './event_name.js';
import { argvSplit, isdigit, kstrtol, kstrtoul, kstrtouint, sanitizeEventName, truncate } from './kstr.js';
import { kprobeOnFuncEntry } from './kprobe_model.js';
import { dentryOffsets, expandDentryArgs, expandMetaArgs } from './meta_args.js';
import { MAX_EVENT_NAME_LEN, MAX_TRACE_ARGS, newContext, ProbeArgs, TPARG, type KRet, type ParseContext } from './parse_context.js';
import { parseProbeArgument } from './probe_arg.js';
import { ProbeLog, type ErrorLogEntry } from './probe_log.js';
import { compareArgTypes, matchCommandArgs, ProbeEvent, sameArgComms, type KprobeLocation, type TraceProbe } from './trace_probe.js';
import { updateSymbolArgs } from './update_arg.js';

export const KPROBE_EVENT_SYSTEM = 'kprobes';
const KRETPROBE_MAXACTIVE_MAX = 4096;

/** traceprobe_split_symbol_offset(): `sym+off` / `sym-off`. */
export function splitSymbolOffset(symbol: string): { symbol: string; offset: bigint } | undefined {
  const i = symbol.search(/[+-]/);
  if (i < 0) return { symbol, offset: 0n };
  const r = kstrtol(symbol.slice(i));
  return r.ok ? { symbol: symbol.slice(0, i), offset: r.value } : undefined;
}

/** number_of_same_symbols(): vmlinux first (7.x stops there), then modules. */
function countSymbols(reg: DynEventRegistry, mod: string | undefined, name: string): number {
  const ks = reg.env.kallsyms;
  if (mod) return ks.countName(name, mod);
  const n = ks.countName(name);
  if (n > 0 && reg.env.series !== '6.12') return n;
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

function createTraceKprobe(raw: string, reg: DynEventRegistry, sink: ErrorLogEntry[]): KRet | 'ECANCELED' {
  const argv = argvSplit(raw);
  if (!argv.length) return 0;
  const log = new ProbeLog('trace_kprobe', argv, sink);
  const ctx = newContext(reg.env, log, TPARG.KERNEL);
  return createInternal(argv, ctx, reg);
}

function createInternal(argv: string[], ctx: ParseContext, reg: DynEventRegistry): KRet | 'ECANCELED' {
  const { log, env } = ctx;
  let isReturn: boolean;
  switch (argv[0][0]) {
    case 'r':
      isReturn = true;
      break;
    case 'p':
      isReturn = false;
      break;
    default:
      return 'ECANCELED';
  }
  if (argv.length < 2) return 'ECANCELED';
  const colon = argv[0].indexOf(':', 1);
  let event: string | undefined = colon >= 0 ? argv[0].slice(colon + 1) : undefined;
  let maxactive = 0;
  if (isdigit(argv[0][1])) {
    if (!isReturn) {
      log.err(1, 'BAD_MAXACT_TYPE');
      return 'EINVAL';
    }
    const len = colon >= 0 ? colon - 1 : argv[0].length - 1;
    if (len > MAX_EVENT_NAME_LEN - 1) {
      log.err(1, 'BAD_MAXACT');
      return 'EINVAL';
    }
    const r = kstrtouint(argv[0].slice(1, 1 + len));
    if (!r.ok || r.value === 0n) {
      log.err(1, 'BAD_MAXACT');
      return 'EINVAL';
    }
    if (r.value > BigInt(KRETPROBE_MAXACTIVE_MAX)) {
      log.err(1, 'MAXACT_TOO_BIG');
      return 'EINVAL';
    }
    maxactive = Number(r.value);
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
  let args = argv.slice(2);
  const expanded = expandMetaArgs(args, ctx);
  if (typeof expanded === 'string') return expanded;
  if (expanded) args = expanded;
  if (args.length > MAX_TRACE_ARGS) {
    log.setIndex(2);
    if (env.series !== '6.12') log.err(0, 'TOO_MANY_ARGS');
    return 'E2BIG';
  }
  const d = expandDentryArgs(args, dentryOffsets(env));
  if (d) return d;

  const pa = new ProbeArgs(args.length);
  for (let i = 0; i < args.length; i++) {
    log.setIndex(i + 2);
    ctx.offset = 0;
    const ret = parseProbeArgument(pa, i, args[i], ctx);
    if (ret) return ret;
  }

  const loc: KprobeLocation = { kind: 'kprobe', symbol, offset: Number(offset), addr, maxactive };
  const tp: TraceProbe = { loc, group, event, isReturn, args: pa.args, size: pa.size, entryArgs: pa.entryArgs };
  const ret = registerTraceKprobe(tp, reg, log);
  if (ret) {
    log.setIndex(1);
    if (ret === 'EILSEQ') log.err(0, 'BAD_INSN_BNDRY');
    else if (ret === 'ENOENT') log.err(0, 'BAD_PROBE_ADDR');
    else if (ret !== 'ENOMEM' && ret !== 'EEXIST') log.err(0, 'FAIL_REG_PROBE');
    return ret;
  }
  return 0;
}

/** trace_kprobe_address(): where the probe sits (0 if the symbol is unknown). */
function kprobeAddress(reg: DynEventRegistry, loc: KprobeLocation): bigint {
  if (loc.symbol === undefined) return loc.addr ?? 0n;
  const s = reg.env.kallsyms.lookupName(loc.symbol);
  return s ? s.addr + BigInt(loc.offset) : 0n;
}

/** __register_trace_kprobe(): notrace check, @symbols, the kretprobe entry check, then register_kprobe(). */
function registerKprobePoint(tp: TraceProbe, reg: DynEventRegistry): KRet {
  const loc = tp.loc as KprobeLocation;
  const { env } = reg;
  const where = kprobeAddress(reg, loc);
  if (where && env.kallsyms.lookupAddr(where)) {
    const site = env.kprobeSite(where, true);
    if (!site.ok && site.why === 'notrace') return 'EINVAL';
  }
  const u = updateSymbolArgs(tp.args, env);
  if (u) return u;
  if (tp.isReturn) {
    const e = kprobeOnFuncEntry(env, loc.symbol ? undefined : loc.addr, loc.symbol, loc.offset);
    if (e) return e;
    if (loc.maxactive <= 0) loc.maxactive = Math.max(10, 2 * env.possibleCpus);
  }
  // register_kprobe(): _kprobe_addr() then the address checks
  let target: bigint;
  if (loc.symbol !== undefined) {
    const s = env.kallsyms.lookupName(loc.symbol);
    if (!s) return 'ENOENT';
    target = BigInt.asUintN(64, s.addr + BigInt(loc.offset));
  } else {
    if (!loc.addr) return 'EINVAL';
    target = loc.addr;
  }
  if (!env.kallsyms.lookupAddr(target)) return 'ENOENT';
  const site = env.kprobeSite(target, false);
  if (!site.ok) return site.errno;
  if (loc.symbol === undefined) loc.addr = site.addr;
  return 0;
}

/** trace_kprobe_module_exist(): a `mod:sym` probe waits for an unloaded module. */
function moduleExists(reg: DynEventRegistry, loc: KprobeLocation): boolean {
  if (loc.symbol === undefined) return false;
  const colon = loc.symbol.indexOf(':');
  if (colon < 0) return true;
  return reg.env.kallsyms.moduleLoaded(loc.symbol.slice(0, colon));
}

function registerPointOrDefer(tp: TraceProbe, reg: DynEventRegistry): KRet {
  const ret = registerKprobePoint(tp, reg);
  // the probe may register when its module loads
  if (ret === 'ENOENT' && !moduleExists(reg, tp.loc as KprobeLocation)) return 0;
  return ret;
}

/** register_trace_kprobe(): a new event, or one more probe on an existing kprobe event. */
function registerTraceKprobe(tp: TraceProbe, reg: DynEventRegistry, log: ProbeLog): KRet {
  const old = reg.probes('kprobe').find((p) => p.event === tp.event && p.group === tp.group);
  if (old) {
    if (old.isReturn !== tp.isReturn) {
      log.setIndex(0);
      log.err(0, 'DIFF_PROBE_TYPE');
      return 'EEXIST';
    }
    return appendTraceKprobe(tp, old, reg, log);
  }
  const ev = new ProbeEvent(tp.group, tp.event);
  ev.probes.push(tp);
  tp.ev = ev;
  if (reg.registerEvent(ev)) {
    log.setIndex(0);
    log.err(0, 'EVENT_EXIST');
    return 'EEXIST';
  }
  const ret = registerPointOrDefer(tp, reg);
  if (ret) {
    reg.unregisterEvent(ev);
    return ret;
  }
  reg.add({ ops: kprobeOps, probe: tp });
  return 0;
}

function sameKprobe(ev: ProbeEvent, tp: TraceProbe): boolean {
  const loc = tp.loc as KprobeLocation;
  return ev.probes.some((p) => {
    const l = p.loc as KprobeLocation;
    return (l.symbol ?? 'unknown') === (loc.symbol ?? 'unknown') && l.offset === loc.offset && sameArgComms(p, tp);
  });
}

/** append_trace_kprobe(). */
function appendTraceKprobe(tp: TraceProbe, to: TraceProbe, reg: DynEventRegistry, log: ProbeLog): KRet {
  const diff = compareArgTypes(tp, to);
  if (diff) {
    // arguments start at index 2
    log.setIndex(diff + 1);
    log.err(0, 'DIFF_ARG_TYPE');
    return 'EEXIST';
  }
  const ev = to.ev!;
  if (sameKprobe(ev, tp)) {
    log.setIndex(0);
    log.err(0, 'SAME_PROBE');
    return 'EEXIST';
  }
  const ret = registerPointOrDefer(tp, reg);
  if (ret) return ret;
  ev.probes.push(tp);
  tp.ev = ev;
  reg.add({ ops: kprobeOps, probe: tp });
  return 0;
}

function kprobeHead(tp: TraceProbe, reg: DynEventRegistry): string {
  const loc = tp.loc as KprobeLocation;
  if (loc.symbol === undefined) return `0x${reg.hashPointer(loc.addr ?? 0n)}`;
  return loc.offset ? `${loc.symbol}+${loc.offset}` : loc.symbol;
}

/** trace_kprobe_show(). */
function showKprobe(ev: DynEvent, reg: DynEventRegistry): string {
  const tp = ev.probe!;
  const loc = tp.loc as KprobeLocation;
  let s = tp.isReturn ? 'r' : 'p';
  if (tp.isReturn && loc.maxactive) s += String(loc.maxactive);
  s += `:${tp.group}/${tp.event} ${kprobeHead(tp, reg)}`;
  for (const a of tp.args) s += ` ${a.name}=${a.comm}`;
  return s;
}

/** Shared by the probe types: unregister_trace_*probe() + free. */
export function releaseProbe(ev: DynEvent, reg: DynEventRegistry): KRet {
  const tp = ev.probe!;
  const pev = tp.ev!;
  if (pev.probes.length === 1) {
    if (reg.isBusy(pev)) return 'EBUSY';
    reg.unregisterEvent(pev);
  }
  reg.remove(ev);
  pev.probes.splice(pev.probes.indexOf(tp), 1);
  return 0;
}

export const kprobeOps: DynEventOps = {
  type: 'kprobe',
  create: createTraceKprobe,
  show: showKprobe,
  isBusy: (ev) => ev.probe!.ev!.enabled,
  free: releaseProbe,
  match(system, event, argv, ev, reg) {
    const tp = ev.probe!;
    if (event !== '' && tp.event !== event) return false;
    if (system !== undefined && tp.group !== system) return false;
    if (!argv.length) return true;
    if (truncate(kprobeHead(tp, reg), 64) !== argv[0]) return false;
    return matchCommandArgs(tp, argv.slice(1));
  },
};
