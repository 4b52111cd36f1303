/**
 * The text layout of the trace files (trace_output.c and the header printers
 * of trace.c): the `# tracer:` header, the legend, the context columns of a
 * record (TASK-PID, CPU, flags, timestamp) in normal and latency format.
 */
import {
  TRACE_FLAG_BH_OFF,
  TRACE_FLAG_HARDIRQ,
  TRACE_FLAG_IRQS_NOSUPPORT,
  TRACE_FLAG_IRQS_OFF,
  TRACE_FLAG_NEED_RESCHED,
  TRACE_FLAG_NEED_RESCHED_LAZY,
  TRACE_FLAG_NMI,
  TRACE_FLAG_PREEMPT_RESCHED,
  TRACE_FLAG_SOFTIRQ,
} from '../kernel/context.js';
import type { KernelProfile } from '../kernel/profiles/profile.js';
import { printIpSym } from './ksym.js';
import type { RingBuffer } from './ring_buffer.js';
import type { MaxTrace, TraceArray } from './trace_array.js';

/** ns2usecs(): rounded to the nearest microsecond. */
function ns2usecs(ns: number): number {
  return Math.floor((ns + 500) / 1000);
}

/** "000" to "999": the microseconds of a timestamp are printed on every trace line. */
const DIGITS3 = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/** `%06lu` of 0..999999. */
function usecs6(us: number): string {
  const ms = Math.floor(us / 1000);
  return DIGITS3[ms] + DIGITS3[us - ms * 1000];
}

/** `%5llu.%06lu` of a nanosecond time, as the trace and stats files print it. */
export function secsUsecs(ns: number): string {
  const us = ns2usecs(ns);
  const secs = Math.floor(us / 1e6);
  return `${String(secs).padStart(5)}.${usecs6(us - secs * 1e6)}`;
}

/** trace_print_lat_fmt(): the irqs-off / need-resched / hardirq / preempt / migrate columns. */
export function latFlags(profile: KernelProfile, flags: number, preemptCount: number): string {
  const nmi = flags & TRACE_FLAG_NMI;
  const hardirq = flags & TRACE_FLAG_HARDIRQ;
  const softirq = flags & TRACE_FLAG_SOFTIRQ;
  const bhOff = flags & TRACE_FLAG_BH_OFF;
  const irqsOff = flags & TRACE_FLAG_IRQS_OFF;
  const lazy = profile.lazyResched;
  const c1 =
    irqsOff && bhOff ? 'D' : irqsOff ? 'd' : bhOff ? 'b' : !lazy && flags & TRACE_FLAG_IRQS_NOSUPPORT ? 'X' : '.';
  let c2: string;
  if (!lazy) {
    switch (flags & (TRACE_FLAG_NEED_RESCHED | TRACE_FLAG_PREEMPT_RESCHED)) {
      case TRACE_FLAG_NEED_RESCHED | TRACE_FLAG_PREEMPT_RESCHED: c2 = 'N'; break;
      case TRACE_FLAG_NEED_RESCHED: c2 = 'n'; break;
      case TRACE_FLAG_PREEMPT_RESCHED: c2 = 'p'; break;
      default: c2 = '.';
    }
  } else {
    const N = TRACE_FLAG_NEED_RESCHED;
    const L = TRACE_FLAG_NEED_RESCHED_LAZY;
    const P = TRACE_FLAG_PREEMPT_RESCHED;
    switch (flags & (N | L | P)) {
      case N | L | P: c2 = 'B'; break;
      case N | P: c2 = 'N'; break;
      case L | P: c2 = 'L'; break;
      case N | L: c2 = 'b'; break;
      case N: c2 = 'n'; break;
      case P: c2 = 'p'; break;
      case L: c2 = 'l'; break;
      default: c2 = '.';
    }
  }
  const c3 = nmi && hardirq ? 'Z' : nmi ? 'z' : hardirq && softirq ? 'H' : hardirq ? 'h' : softirq ? 's' : '.';
  const pc = preemptCount & 0xf ? (preemptCount & 0xf).toString(16) : '.';
  const mg = preemptCount & 0xf0 ? (preemptCount >> 4).toString(16) : '.';
  return c1 + c2 + c3 + pc + mg;
}

/** get_total_entries(): events in the buffer and events written (in buffer + overwritten). */
function totalEntries(rb: RingBuffer): { entries: number; total: number } {
  let entries = 0;
  let total = 0;
  for (const cb of rb.cpus) {
    const n = cb.numEntries;
    entries += n;
    total += n + cb.overrun;
  }
  return { entries, total };
}

function eventInfo(rb: RingBuffer, nrCpus: number): string {
  const { entries, total } = totalEntries(rb);
  return `# entries-in-buffer/entries-written: ${entries}/${total}   #P:${nrCpus}\n#\n`;
}

/** print_func_help_header(): the legend without the irq columns. */
export function funcHelpHeader(rb: RingBuffer, nrCpus: number, tgid: boolean): string {
  return (
    eventInfo(rb, nrCpus) +
    `#           TASK-PID    ${tgid ? '   TGID   ' : ''} CPU#     TIMESTAMP  FUNCTION\n` +
    `#              | |      ${tgid ? '     |    ' : ''}   |         |         |\n`
  );
}

/** print_func_help_header_irq(): the legend of the default layout. */
export function funcHelpHeaderIrq(rb: RingBuffer, nrCpus: number, tgid: boolean): string {
  const sp = tgid ? '            ' : '  ';
  const t1 = tgid ? '     TGID   ' : '  ';
  const t2 = tgid ? '       |    ' : '  ';
  return (
    eventInfo(rb, nrCpus) +
    `#                            ${sp}  _-----=> irqs-off/BH-disabled\n` +
    `#                            ${sp} / _----=> need-resched\n` +
    `#                            ${sp}| / _---=> hardirq/softirq\n` +
    `#                            ${sp}|| / _--=> preempt-depth\n` +
    `#                            ${sp}||| / _-=> migrate-disable\n` +
    `#                            ${sp}|||| /     delay\n` +
    `#           TASK-PID  ${t1} CPU#  |||||  TIMESTAMP  FUNCTION\n` +
    `#              | |    ${t2}   |   |||||     |         |\n`
  );
}

/** print_lat_help_header(). */
export const LAT_HELP_HEADER =
  '#                    _------=> CPU#            \n' +
  '#                   / _-----=> irqs-off/BH-disabled\n' +
  '#                  | / _----=> need-resched    \n' +
  '#                  || / _---=> hardirq/softirq \n' +
  '#                  ||| / _--=> preempt-depth   \n' +
  '#                  |||| / _-=> migrate-disable \n' +
  '#                  ||||| /     delay           \n' +
  '#  cmd     pid     |||||| time  |   caller     \n' +
  '#     \\   /        ||||||  \\    |    /       \n';

/** print_trace_header(): the latency-format header, with what made the maximum when the buffer holds one. */
export function latencyTraceHeader(tr: TraceArray, rb: RingBuffer, max?: MaxTrace, skipped = 0): string {
  let { entries, total } = totalEntries(rb);
  // Skipped records count in neither figure, and the overruns are left out then (get_total_entries_cpu()).
  if (skipped) total = entries -= skipped;
  const nr = tr.tracing.kernel.numOnlineCpus();
  const profile = tr.profile;
  const us = max ? Math.floor(max.latency / 1000) : 0;
  let s =
    `# ${tr.tracer.name} latency trace v1.1.5 on ${profile.build.release}\n` +
    '# --------------------------------------------------------------------\n' +
    `# latency: ${us} us, #${entries}/${total}, CPU#${max?.cpu ?? 0} | (M:${profile.preemptModel} VP:0, KP:0, SP:0 HP:0 #P:${nr})\n` +
    '#    -----------------\n' +
    (max
      ? `#    | task: ${max.comm}-${max.pid} (uid:0 nice:${max.nice} policy:${max.policy} rt_prio:${max.rtPriority})\n`
      : '#    | task: -0 (uid:0 nice:0 policy:0 rt_prio:0)\n') +
    '#    -----------------\n';
  if (max?.criticalStart) {
    const top = tr.tracing.top.options;
    const flags = { symOffset: top.has('sym-offset'), symAddr: top.has('sym-addr') };
    const kernel = tr.tracing.kernel;
    s += `#  => started at: ${printIpSym(kernel, max.criticalStart, flags)}\n`;
    s += `#  => ended at:   ${printIpSym(kernel, max.criticalEnd, flags)}\n#\n`;
  }
  return s + '#\n';
}

/** Marks of trace_find_mark(): how long until the next event. */
export function delayMark(ns: number): string {
  if (ns > 1e9) return '$';
  if (ns > 1e8) return '@';
  if (ns > 1e7) return '*';
  if (ns > 1e6) return '#';
  if (ns > 1e5) return '!';
  if (ns > 1e4) return '+';
  return ' ';
}

export interface ContextFields {
  comm: string;
  pid: number;
  cpu: number;
  flags: number;
  preemptCount: number;
  ts: number;
}

/**
 * trace_print_context(): `           comm-pid     [cpu] flags  secs.usecs: `,
 * for one reader. Consecutive records mostly come from the same task on the
 * same CPU: the columns before the timestamp are kept while they repeat,
 * and so are the seconds.
 */
export class ContextPrinter {
  private pid = -1;
  private comm = '';
  private tgid: number | undefined;
  private cpu = -1;
  private flags = -1;
  private preemptCount = -1;
  private irqInfo = false;
  private head = '';
  private secs = -1;
  private secsText = '';

  constructor(private readonly profile: KernelProfile) {}

  print(c: ContextFields, tgid: number | undefined, irqInfo: boolean, inNs: boolean): string {
    if (
      c.pid !== this.pid || c.comm !== this.comm || tgid !== this.tgid || c.cpu !== this.cpu ||
      c.flags !== this.flags || c.preemptCount !== this.preemptCount || irqInfo !== this.irqInfo
    ) {
      this.pid = c.pid;
      this.comm = c.comm;
      this.tgid = tgid;
      this.cpu = c.cpu;
      this.flags = c.flags;
      this.preemptCount = c.preemptCount;
      this.irqInfo = irqInfo;
      let s = `${c.comm.padStart(16)}-${String(c.pid).padEnd(7)} `;
      if (tgid !== undefined) s += tgid ? `(${String(tgid).padStart(7)}) ` : '(-------) ';
      s += `[${String(c.cpu).padStart(3, '0')}] `;
      if (irqInfo) s += latFlags(this.profile, c.flags, c.preemptCount);
      this.head = s;
      this.secs = -1;
    }
    if (!inNs) return `${this.head} ${String(c.ts).padStart(12)}: `;
    const us = ns2usecs(c.ts);
    const secs = Math.floor(us / 1e6);
    if (secs !== this.secs) {
      this.secs = secs;
      this.secsText = `${this.head} ${String(secs).padStart(5)}.`;
    }
    return this.secsText + usecs6(us - secs * 1e6) + ': ';
  }
}

/** trace_print_lat_context(): the latency-format columns, with the delay to the next event. */
export function printLatContext(
  c: ContextFields,
  o: { profile: KernelProfile; verbose: boolean; inNs: boolean; timeStart: number; nextTs: number; idx: number },
): string {
  let s: string;
  if (o.verbose) {
    s =
      `${c.comm.padStart(16)} ${String(c.pid).padStart(7)} ${String(c.cpu).padStart(3)} ${c.flags} ` +
      `${(c.preemptCount & 0xf).toString(16).padStart(8, '0')} ${o.idx.toString(16).padStart(8, '0')} `;
  } else {
    s = `${c.comm.slice(0, 8).padStart(8)}-${String(c.pid).padEnd(7)} ${String(c.cpu).padStart(3)}`;
    s += latFlags(o.profile, c.flags, c.preemptCount);
  }
  let abs = c.ts - o.timeStart;
  let rel = o.nextTs - c.ts;
  if (o.inNs) {
    abs = ns2usecs(abs);
    rel = ns2usecs(rel);
  }
  if (o.verbose && o.inNs) {
    const absMs = Math.floor(abs / 1000);
    const relMs = Math.floor(rel / 1000);
    s +=
      `[${ns2usecs(c.ts).toString(16).padStart(8, '0')}] ${absMs}.${String(abs - absMs * 1000).padStart(3, '0')}ms ` +
      `(+${relMs}.${String(rel - relMs * 1000).padStart(3, '0')}ms): `;
  } else if (o.verbose) {
    s += `[${c.ts.toString(16).padStart(16, '0')}] ${abs} (+${rel}): `;
  } else if (o.inNs) {
    s += ` ${String(abs).padStart(4)}us${delayMark(rel * 1000)}: `;
  } else {
    s += ` ${String(abs).padStart(4)}: `;
  }
  return s;
}

/** print_snapshot_help(). */
export function snapshotHelp(allocated: boolean, perCpu: boolean): string {
  let s = allocated ? '#\n# * Snapshot is allocated *\n#\n' : '#\n# * Snapshot is freed *\n#\n';
  s += '# Snapshot commands:\n';
  if (!perCpu) {
    s +=
      '# echo 0 > snapshot : Clears and frees snapshot buffer\n' +
      '# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated.\n' +
      '#                      Takes a snapshot of the main buffer.\n' +
      "# echo 2 > snapshot : Clears snapshot buffer (but does not allocate or free)\n" +
      "#                      (Doesn't have to be '2' works with any number that\n" +
      "#                       is not a '0' or '1')\n";
  } else {
    s +=
      '# echo 0 > snapshot : Invalid for per_cpu snapshot file.\n' +
      '# echo 1 > snapshot : Not supported with this kernel.\n' +
      '#                     Must use main snapshot file to allocate.\n' +
      "# echo 2 > snapshot : Clears this cpu's snapshot buffer (but does not allocate)\n" +
      "#                      (Doesn't have to be '2' works with any number that\n" +
      "#                       is not a '0' or '1')\n";
  }
  return s;
}

/** SEQ_PUT_HEX_FIELD(): the bytes of a little-endian value, most significant first, then a space. */
export function hexField(bytes: Buffer): string {
  let s = '';
  for (let i = bytes.length - 1; i >= 0; i--) s += bytes[i].toString(16).padStart(2, '0');
  return s + ' ';
}
