/**
 * Parsing fprobe and tracepoint-probe events (trace_fprobe.c):
 * `f[:[GRP/][EVENT]] [MOD:]SYM[%return] [ARGS]` and
 * `t[:[GRP/][EVENT]] TRACEPOINT [ARGS]`; with fprobeMaxactive also `f<MAXACTIVE>`.
 * The result is a TraceFprobe (trace_fprobe.ts) that then registers.
 */
import { MAX_FPROBE_DATA_SIZE } from '../../ftrace/fprobe.js';
import { parseEventName } from '../probe/event_name.js';
import { argvSplit, isalnum, isdigit, sanitizeEventName, truncate } from '../probe/kstr.js';
import { parseFunctionProbeArgs } from '../probe/meta_args.js';
import { MAX_EVENT_NAME_LEN, newContext, TPARG, type KRet, type ParseContext } from '../probe/parse_context.js';
import { ProbeLog, type ErrorLogEntry } from '../probe/probe_log.js';
import { logRegisterError, parseMaxactive, registerOrAppend, TraceProbe } from '../probe/trace_probe.js';
import type { DynEventRegistry } from './trace_dynevent.js';
import { TraceFprobe } from './trace_fprobe.js';

const FPROBE_EVENT_SYSTEM = 'fprobes';
const TRACEPOINT_EVENT_SYSTEM = 'tracepoints';
const RETHOOK_MAXACTIVE_MAX = 4096;

/** parse_symbol_and_return(): `%return`, tracepoint name characters, and `$retval` making an exit probe. */
function parseSymbolAndReturn(argv: readonly string[], tracepoint: boolean, log: ProbeLog): { symbol: string; isReturn: boolean } | undefined {
  let symbol = argv[1];
  let isReturn = false;
  const pct = symbol.indexOf('%');
  if (pct >= 0) {
    if (!tracepoint && symbol.slice(pct) === '%return') {
      isReturn = true;
    } else {
      log.err(pct, 'BAD_ADDR_SUFFIX');
      return undefined;
    }
    symbol = symbol.slice(0, pct);
  }
  if (isReturn) return { symbol, isReturn };
  if (tracepoint) {
    for (let i = 0; i < symbol.length; i++) {
      if (!isalnum(symbol[i]) && symbol[i] !== '_') {
        log.err(i, 'BAD_TP_NAME');
        return undefined;
      }
    }
  }
  for (let i = 2; i < argv.length; i++) {
    const at = argv[i].indexOf('$retval');
    if (at >= 0 && !isalnum(argv[i][at + 7]) && argv[i][at + 7] !== '_') {
      if (tracepoint) {
        log.setIndex(i);
        log.err(at, 'RETVAL_ON_PROBE');
        return undefined;
      }
      isReturn = true;
      break;
    }
  }
  return { symbol, isReturn };
}

export function createTraceFprobe(raw: string, reg: DynEventRegistry, sink: ErrorLogEntry[]): KRet | 'ECANCELED' {
  const argv = argvSplit(raw);
  if (!argv.length) return 0;
  if ((argv[0][0] !== 'f' && argv[0][0] !== 't') || argv.length < 2) return 'ECANCELED';
  const log = new ProbeLog('trace_fprobe', argv, sink, reg.env.profile);
  const ctx: FprobeContext = newContext(reg.env, log, TPARG.KERNEL | TPARG.FPROBE);
  const ret = createInternal(argv, ctx, reg);
  if (ret && reg.env.profile.fprobeEventFailsEinval && ctx.registering) return 'EINVAL';
  return ret;
}

/** The parse context, and whether the failure came from registration. */
type FprobeContext = ParseContext & { registering?: boolean };

function createInternal(argv: string[], ctx: FprobeContext, reg: DynEventRegistry): KRet {
  const { log, env } = ctx;
  const { fprobeMaxactive } = env.profile;
  const tracepoint = argv[0][0] === 't';
  let group = tracepoint ? TRACEPOINT_EVENT_SYSTEM : FPROBE_EVENT_SYSTEM;
  let event: string | undefined;
  let eventAt = 0;
  let maxactive = 0;
  if (fprobeMaxactive) {
    const colon = argv[0].indexOf(':', 1);
    if (colon >= 0) {
      event = argv[0].slice(colon + 1);
      eventAt = colon + 1;
    }
    if (isdigit(argv[0][1])) {
      const m = parseMaxactive(argv[0], colon, RETHOOK_MAXACTIVE_MAX, log);
      if (m === 'EINVAL') return m;
      maxactive = m;
    }
  } else if (argv[0].length > 1) {
    if (argv[0][1] !== ':') {
      log.setIndex(0);
      log.err(1, 'BAD_MAXACT');
      return 'EINVAL';
    }
    event = argv[0].slice(2);
    eventAt = 2;
  }

  log.setIndex(1);
  const sr = parseSymbolAndReturn(argv, tracepoint, log);
  if (!sr) return 'EINVAL';
  const { symbol, isReturn } = sr;
  if (fprobeMaxactive && !isReturn && maxactive) {
    log.setIndex(0);
    log.err(1, 'BAD_MAXACT_TYPE');
    return 'EINVAL';
  }

  log.setIndex(0);
  if (event !== undefined) {
    const n = parseEventName(event, eventAt, log);
    if (n === 'EINVAL') return 'EINVAL';
    if (n.group !== undefined) group = n.group;
    event = n.event;
  }
  if (event === undefined) {
    event = tracepoint ? `${isdigit(symbol[0]) ? '_' : ''}${symbol}` : `${symbol}__${isReturn ? 'exit' : 'entry'}`;
    event = sanitizeEventName(truncate(event, MAX_EVENT_NAME_LEN));
  }
  ctx.flags |= isReturn ? TPARG.RETURN : TPARG.FENTRY;
  ctx.funcname = undefined;
  if (tracepoint) {
    ctx.flags |= TPARG.TPOINT;
    const tpoint = env.findTracepoint(symbol);
    if (tpoint) ctx.funcname = tpoint.probestub;
  }
  if (!ctx.funcname) ctx.funcname = symbol;

  const pa = parseFunctionProbeArgs(argv, ctx);
  if (typeof pa === 'string') return pa;
  if (env.profile.fprobeBackend === 'fgraph' && isReturn && pa.entryArgs.length && pa.entryDataSize() > MAX_FPROBE_DATA_SIZE) {
    log.setIndex(2);
    log.err(0, 'TOO_MANY_EARGS');
    return 'E2BIG';
  }

  const tf = new TraceFprobe(reg, new TraceProbe(group, event, isReturn, pa), { symbol, tracepoint, maxactive });
  ctx.registering = true;
  const ret = registerOrAppend(tf, reg, log);
  logRegisterError(log, ret);
  return ret;
}
