/**
 * Parsing event probes (trace_eprobe.c): `e[:[GRP/][EVENT]] SYSTEM.EVENT [ARGS] [if FILTER]`,
 * fetching the attached event's fields (`$field`), into a TraceEprobe
 * (trace_eprobe.ts) that then registers.
 */
import { parseEventName } from '../probe/event_name.js';
import { argvSplit } from '../probe/kstr.js';
import { MAX_TRACE_ARGS, newContext, ProbeArgs, TPARG, type KRet } from '../probe/parse_context.js';
import { parseProbeArgument } from '../probe/probe_arg.js';
import { ProbeLog, type ErrorLogEntry } from '../probe/probe_log.js';
import { TraceProbe } from '../probe/trace_probe.js';
import { updateSymbolArgs } from '../probe/update_arg.js';
import type { DynEventRegistry } from './trace_dynevent.js';
import { TraceEprobe } from './trace_eprobe.js';

const EPROBE_EVENT_SYSTEM = 'eprobes';

/** Probe events and ftrace-internal events cannot carry an eprobe (find_and_get_event). */
const NOT_ATTACHABLE = new Set(['kprobe', 'uprobe', 'eprobe', 'ftrace']);

export function createTraceEprobe(raw: string, reg: DynEventRegistry, sink: ErrorLogEntry[]): KRet | 'ECANCELED' {
  const argv = argvSplit(raw);
  if (!argv.length) return 0;
  if (argv.length < 2 || argv[0][0] !== 'e') return 'ECANCELED';
  const { env } = reg;
  const log = new ProbeLog('event_probe', argv, sink, env.profile);
  let group = EPROBE_EVENT_SYSTEM;
  let event: string | undefined;
  const colon = argv[0].indexOf(':', 1);
  if (colon >= 0) {
    const n = parseEventName(argv[0].slice(colon + 1), colon + 1, log);
    if (n === 'EINVAL') return 'EINVAL';
    if (n.group !== undefined) group = n.group;
    event = n.event;
  }
  log.setIndex(1);
  const se = parseEventName(argv[1], 0, log);
  if (se === 'EINVAL' || se.event === undefined || se.group === undefined) {
    log.err(0, 'NO_EVENT_INFO');
    return 'EINVAL';
  }
  const sysName = se.group;
  const sysEvent = se.event;
  if (event === undefined) event = sysEvent;

  let filterIdx = 0;
  let filterCnt = 0;
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === 'if') {
      filterIdx = i + 1;
      filterCnt = argv.length - filterIdx;
      break;
    }
  }
  const argc = filterIdx ? filterIdx - 1 : argv.length;
  if (argc - 2 > MAX_TRACE_ARGS) {
    log.setIndex(2);
    if (env.profile.logsTooManyArgs) log.err(0, 'TOO_MANY_ARGS');
    return 'E2BIG';
  }
  const attached = reg.eventView(sysName, sysEvent);
  if (!attached || NOT_ATTACHABLE.has(attached.kind)) {
    log.err(0, 'BAD_ATTACH_EVENT');
    return 'ENODEV';
  }
  let filter: string | undefined;
  if (filterIdx) {
    log.setIndex(filterIdx);
    if (filterCnt === 0) {
      log.err(0, 'NO_EP_FILTER');
      return 'EINVAL';
    }
    filter = argv.slice(filterIdx).join(' ');
    const e = env.checkFilter?.(attached, filter);
    if (e) {
      sink.push(e);
      return 'EINVAL';
    }
  }

  const ctx = newContext(env, log, TPARG.KERNEL | TPARG.TEVENT);
  ctx.event = attached;
  const pa = new ProbeArgs(argc - 2);
  for (let i = 0; i < argc - 2; i++) {
    log.setIndex(i + 2);
    let ret = parseProbeArgument(pa, i, argv[i + 2], ctx);
    // @symbols resolve now
    if (!ret) ret = updateSymbolArgs(pa.args.slice(i, i + 1), env);
    if (ret) return ret;
  }

  const ep = new TraceEprobe(reg, new TraceProbe(group, event, false, pa), { system: sysName, event: sysEvent, filter, attached });
  return ep.registerNew(log);
}
