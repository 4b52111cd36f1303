/**
 * How the trace shows the records of the hardware-latency, osnoise and
 * timerlat tracers (TRACE_HWLAT, TRACE_OSNOISE, TRACE_TIMERLAT of
 * trace_entries.h): their layouts are the catalogue's, their FUNCTION column
 * and raw lines are trace_output.c's.
 */
import { loadCatalogue } from '../events/catalogue.js';
import type { PrintableEventType } from '../ftrace_entries.js';
import type { Tracing } from '../tracing.js';

/** The offsets of struct osnoise_entry, struct timerlat_entry and struct hwlat_entry after the common header. */
export const OSNOISE_ENTRY = { noise: 8, runtime: 16, maxSample: 24, hw: 32, nmi: 36, irq: 40, softirq: 44, thread: 48, size: 56 } as const;
export const TIMERLAT_ENTRY = { seqnum: 8, context: 12, latency: 16, size: 24 } as const;
export const HWLAT_ENTRY = { duration: 8, outer: 16, nmiTotal: 24, sec: 32, nsec: 40, nmiCount: 48, seqnum: 52, count: 56, size: 64 } as const;

/** timerlat's contexts, by the `context` field. */
const TIMERLAT_CONTEXTS = ['irq', 'thread', 'user-ret'];

export interface SampleEntryTypes {
  osnoise: PrintableEventType;
  timerlat: PrintableEventType;
  hwlat: PrintableEventType;
}

const u64 = (d: Buffer, off: number): bigint => d.readBigUInt64LE(off);
const u32 = (d: Buffer, off: number): number => d.readUInt32LE(off);

function osnoiseLine(d: Buffer): string {
  const e = OSNOISE_ENTRY;
  const runtime = u64(d, e.runtime);
  const noise = u64(d, e.noise);
  // The share of the CPU the workload had, with five decimals (integer arithmetic, as the kernel's).
  const ratio = runtime === 0n ? 0n : ((runtime - noise) * 10_000_000n) / runtime;
  const pct = `${String(ratio / 100_000n).padStart(3)}.${String(ratio % 100_000n).padStart(5, '0')}`;
  const counts = [e.hw, e.nmi, e.irq, e.softirq, e.thread].map((o) => ` ${String(u32(d, o)).padStart(6)}`).join('');
  return `${runtime} ${String(noise).padStart(10)} ${pct} ${String(u64(d, e.maxSample)).padStart(7)}${counts}\n`;
}

function hwlatLine(d: Buffer): string {
  const e = HWLAT_ENTRY;
  const nsec = String(d.readBigInt64LE(e.nsec)).padStart(9, '0');
  let s = `#${String(u32(d, e.seqnum)).padEnd(5)} inner/outer(us): ${String(u64(d, e.duration)).padStart(4)}/${String(u64(d, e.outer)).padEnd(5)} ts:${d.readBigInt64LE(e.sec)}.${nsec} count:${d.readInt32LE(e.count)}`;
  const nmiCount = u32(d, e.nmiCount);
  if (nmiCount) s += ` nmi-total:${u64(d, e.nmiTotal)} nmi-count:${nmiCount}`;
  return s + '\n';
}

/**
 * Registers the three types (before the event subsystem, so the catalogue's
 * plain copies are not made); the hwlat and osnoise tracers both ask, the
 * first registers.
 */
export function registerSampleEntries(tracing: Tracing): SampleEntryTypes {
  const internal = loadCatalogue(tracing.kernel.profile.dataSeries).internal;
  const make = (name: string, output: (d: Buffer) => string, raw: (d: Buffer) => string): PrintableEventType => {
    const spec = internal.find((s) => s.name === name);
    if (!spec) throw new Error(`ftrace/${name} missing from the event catalogue`);
    const known = tracing.eventTypes.byId(spec.id);
    if (known?.system === 'ftrace' && known.name === name) return known as PrintableEventType;
    const type: PrintableEventType = {
      id: spec.id,
      system: 'ftrace',
      name,
      internal: true,
      fields: spec.fields,
      printFmt: spec.printFmt,
      output: (rec) => output(rec.data),
      raw: (rec) => raw(rec.data),
    };
    tracing.eventTypes.register(type);
    return type;
  };
  const t = TIMERLAT_ENTRY;
  const o = OSNOISE_ENTRY;
  const h = HWLAT_ENTRY;
  return {
    osnoise: make('osnoise', osnoiseLine, (d) => `${d.readBigInt64LE(o.runtime)} ${u64(d, o.noise)} ${u64(d, o.maxSample)} ${[o.hw, o.nmi, o.irq, o.softirq, o.thread].map((x) => u32(d, x)).join(' ')}\n`),
    timerlat: make(
      'timerlat',
      (d) => `#${String(u32(d, t.seqnum)).padEnd(5)} context ${(TIMERLAT_CONTEXTS[d.readInt32LE(t.context)] ?? '').padStart(6)} timer_latency ${String(u64(d, t.latency)).padStart(9)} ns\n`,
      (d) => `${u32(d, t.seqnum)} ${d.readInt32LE(t.context)} ${u64(d, t.latency)}\n`,
    ),
    hwlat: make('hwlat', hwlatLine, (d) => `${u64(d, h.duration)} ${d.readBigInt64LE(h.outer)} ${d.readBigInt64LE(h.sec)} ${String(d.readBigInt64LE(h.nsec)).padStart(9, '0')} ${u32(d, h.seqnum)}\n`),
  };
}
