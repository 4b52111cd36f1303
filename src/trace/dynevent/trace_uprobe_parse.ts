/**
 * Parsing uprobe events (trace_uprobe.c): `p|r[:[GRP/][EVENT]] PATH:OFFSET[%return][(REF_CTR)] [ARGS]`,
 * into a TraceUprobe (trace_uprobe.ts) that then registers.
 */
import { parseEventName } from '../probe/event_name.js';
import { argvSplit, isdigit, kstrtoul, strpbrk, truncate } from '../probe/kstr.js';
import { MAX_EVENT_NAME_LEN, MAX_TRACE_ARGS, newContext, ProbeArgs, TPARG, type KRet } from '../probe/parse_context.js';
import { parseProbeArgument } from '../probe/probe_arg.js';
import { ProbeLog, type ErrorLogEntry } from '../probe/probe_log.js';
import { registerOrAppend, TraceProbe } from '../probe/trace_probe.js';
import type { DynEventRegistry } from './trace_dynevent.js';
import { TraceUprobe } from './trace_uprobe.js';

const UPROBE_EVENT_SYSTEM = 'uprobes';

export function createTraceUprobe(raw: string, reg: DynEventRegistry, sink: ErrorLogEntry[]): KRet | 'ECANCELED' {
  const argv = argvSplit(raw);
  if (!argv.length) return 0;
  if (argv[0][0] !== 'p' && argv[0][0] !== 'r') return 'ECANCELED';
  let isReturn = argv[0][0] === 'r';
  if (argv.length < 2) return 'ECANCELED';
  const { env } = reg;
  const log = new ProbeLog('trace_uprobe', argv, sink, env.profile);
  if (argv.length - 2 > MAX_TRACE_ARGS) {
    log.setIndex(2);
    if (env.profile.logsTooManyArgs) log.err(0, 'TOO_MANY_ARGS');
    return 'E2BIG';
  }
  let event: string | undefined = argv[0][1] === ':' ? argv[0].slice(2) : undefined;
  if (!argv[1].includes('/')) return 'ECANCELED';
  // the last ':' separates the offset: paths may contain ':'
  const colon = argv[1].lastIndexOf(':');
  if (colon < 0 || !isdigit(argv[1][colon + 1])) return 'ECANCELED';
  log.setIndex(1);
  const filename = argv[1].slice(0, colon);
  const st = env.statPath(filename);
  if (typeof st !== 'object') {
    log.err(0, 'FILE_NOT_FOUND');
    return st;
  }
  if (st.kind !== 'regular') {
    log.err(0, 'NO_REGULAR_FILE');
    return 'EINVAL';
  }
  const argAt = colon + 1;
  let arg = argv[1].slice(argAt);
  let refCtrOffset = 0n;
  const rctr = arg.indexOf('(');
  if (rctr >= 0) {
    const close = arg.indexOf(')', rctr);
    if (close < 0) {
      log.err(argAt + arg.length, 'REFCNT_OPEN_BRACE');
      return 'EINVAL';
    }
    if (close + 1 < arg.length) {
      log.err(argAt + close + 1, 'BAD_REFCNT_SUFFIX');
      return 'EINVAL';
    }
    const r = kstrtoul(arg.slice(rctr + 1, close));
    if (!r.ok) {
      log.err(argAt + rctr + 1, 'BAD_REFCNT');
      return r.err;
    }
    refCtrOffset = r.value;
    arg = arg.slice(0, rctr);
  }
  const pct = arg.indexOf('%');
  if (pct >= 0) {
    if (arg.slice(pct) === '%return') {
      arg = arg.slice(0, pct);
      isReturn = true;
    } else {
      log.err(argAt + pct, 'BAD_ADDR_SUFFIX');
      return 'EINVAL';
    }
  }
  const o = kstrtoul(arg);
  if (!o.ok) {
    log.err(argAt, 'BAD_UPROBE_OFFS');
    return o.err;
  }
  const offset = o.value;

  log.setIndex(0);
  let group = UPROBE_EVENT_SYSTEM;
  if (event !== undefined) {
    const n = parseEventName(event, 2, log);
    if (n === 'EINVAL') return 'EINVAL';
    if (n.group !== undefined) group = n.group;
    event = n.event;
  }
  if (event === undefined) {
    let tail = filename.slice(filename.lastIndexOf('/') + 1);
    const cut = strpbrk(tail, '.-_');
    if (cut >= 0) tail = tail.slice(0, cut);
    event = truncate(`p_${tail}_0x${offset.toString(16)}`, MAX_EVENT_NAME_LEN);
  }

  const ctx = newContext(env, log, (isReturn ? TPARG.RETURN : 0) | TPARG.USER);
  const args = argv.slice(2);
  const pa = new ProbeArgs(args.length);
  for (let i = 0; i < args.length; i++) {
    log.setIndex(i + 2);
    const ret = parseProbeArgument(pa, i, args[i], ctx);
    if (ret) return ret;
  }
  const tu = new TraceUprobe(reg, new TraceProbe(group, event, isReturn, pa), { path: filename, offset, refCtrOffset });
  // one reference counter per uprobe place (register_trace_uprobe() checks it first)
  if (tu.refCtrClash()) return 'EINVAL';
  return registerOrAppend(tu, reg, log);
}
