/**
 * uprobe events (trace_uprobe.c): `p|r[:[GRP/][EVENT]] PATH:OFFSET[%return][(REF_CTR)] [ARGS]`.
 */
import type { DynEvent, DynEventOps, DynEventRegistry } from './dynevent.js';
import { parseEventName } from './event_name.js';
import { releaseProbe } from './kprobe.js';
import { argvSplit, isdigit, kstrtoul, strpbrk, truncate } from './kstr.js';
import { MAX_EVENT_NAME_LEN, MAX_TRACE_ARGS, newContext, ProbeArgs, TPARG, type KRet } from './parse_context.js';
import { parseProbeArgument } from './probe_arg.js';
import { ProbeLog, type ErrorLogEntry } from './probe_log.js';
import { compareArgTypes, matchCommandArgs, ProbeEvent, sameArgComms, type TraceProbe, type UprobeLocation } from './trace_probe.js';

export const UPROBE_EVENT_SYSTEM = 'uprobes';

const hex16 = (v: bigint): string => v.toString(16).padStart(16, '0');

/** The file identity uprobes compare (d_real_inode): the path the environment resolves to. */
function inodeOf(reg: DynEventRegistry, path: string): string {
  const st = reg.env.statPath(path);
  return typeof st === 'object' ? st.inode : path;
}

function createTraceUprobe(raw: string, reg: DynEventRegistry, sink: ErrorLogEntry[]): KRet | 'ECANCELED' {
  const argv = argvSplit(raw);
  if (!argv.length) return 0;
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
  const { env } = reg;
  const log = new ProbeLog('trace_uprobe', argv, sink);
  if (argv.length - 2 > MAX_TRACE_ARGS) {
    log.setIndex(2);
    if (env.series !== '6.12') log.err(0, 'TOO_MANY_ARGS');
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
  const loc: UprobeLocation = { kind: 'uprobe', path: filename, offset, refCtrOffset };
  const tp: TraceProbe = { loc, group, event, isReturn, args: pa.args, size: pa.size, entryArgs: [] };
  return registerTraceUprobe(tp, reg, log);
}

/** register_trace_uprobe(). */
function registerTraceUprobe(tp: TraceProbe, reg: DynEventRegistry, log: ProbeLog): KRet {
  const loc = tp.loc as UprobeLocation;
  const inode = inodeOf(reg, loc.path);
  // one reference counter per uprobe location (validate_ref_ctr_offset)
  for (const p of reg.probes('uprobe')) {
    const l = p.loc as UprobeLocation;
    if (inodeOf(reg, l.path) === inode && l.offset === loc.offset && l.refCtrOffset !== loc.refCtrOffset) return 'EINVAL';
  }
  const old = reg.probes('uprobe').find((p) => p.event === tp.event && p.group === tp.group);
  if (old) {
    if (old.isReturn !== tp.isReturn) {
      log.setIndex(0);
      log.err(0, 'DIFF_PROBE_TYPE');
      return 'EEXIST';
    }
    const diff = compareArgTypes(tp, old);
    if (diff) {
      log.setIndex(diff + 1);
      log.err(0, 'DIFF_ARG_TYPE');
      return 'EEXIST';
    }
    const ev = old.ev!;
    const same = ev.probes.some((p) => {
      const l = p.loc as UprobeLocation;
      return inodeOf(reg, l.path) === inode && l.offset === loc.offset && sameArgComms(p, tp);
    });
    if (same) {
      log.setIndex(0);
      log.err(0, 'SAME_PROBE');
      return 'EEXIST';
    }
    ev.probes.push(tp);
    tp.ev = ev;
    reg.add({ ops: uprobeOps, probe: tp });
    return 0;
  }
  const ev = new ProbeEvent(tp.group, tp.event);
  ev.probes.push(tp);
  tp.ev = ev;
  if (reg.registerEvent(ev)) {
    log.setIndex(0);
    log.err(0, 'EVENT_EXIST');
    return 'EEXIST';
  }
  reg.add({ ops: uprobeOps, probe: tp });
  return 0;
}

function uprobeHead(loc: UprobeLocation): string {
  return `0x${hex16(loc.offset)}${loc.refCtrOffset ? `(0x${loc.refCtrOffset.toString(16)})` : ''}`;
}

function showUprobe(ev: DynEvent): string {
  const tp = ev.probe!;
  const loc = tp.loc as UprobeLocation;
  let s = `${tp.isReturn ? 'r' : 'p'}:${tp.group}/${tp.event} ${loc.path}:${uprobeHead(loc)}`;
  for (const a of tp.args) s += ` ${a.name}=${a.comm}`;
  return s;
}

export const uprobeOps: DynEventOps = {
  type: 'uprobe',
  create: createTraceUprobe,
  show: showUprobe,
  isBusy: (ev) => ev.probe!.ev!.enabled,
  free: releaseProbe,
  match(system, event, argv, ev) {
    const tp = ev.probe!;
    const loc = tp.loc as UprobeLocation;
    if (event !== '' && tp.event !== event) return false;
    if (system !== undefined && tp.group !== system) return false;
    if (!argv.length) return true;
    if (!argv[0].startsWith(loc.path) || argv[0][loc.path.length] !== ':') return false;
    if (truncate(uprobeHead(loc), 64) !== argv[0].slice(loc.path.length + 1)) return false;
    return matchCommandArgs(tp, argv.slice(1));
  },
};
