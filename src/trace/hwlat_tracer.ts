/**
 * The hwlat tracer (kernel/trace/trace_hwlat.c): a kernel thread spins with
 * interrupts off for `width` of every `window` (hwlat_detector/) reading
 * the clock, and records a sample whenever two reads were further apart
 * than tracing_thresh (10 us unless set) — time the hardware took (SMIs, a
 * hypervisor). The emulated machine has a little of it, from the seed. One
 * trace array at a time runs it; `mode` says whether one thread moves
 * round-robin over the CPUs, stays, or one runs per CPU.
 */
import { TRACE_FLAG_IRQS_OFF } from '../kernel/context.js';
import { fail } from '../kernel/errno.js';
import type { Rng } from '../kernel/rng.js';
import type { Task } from '../kernel/task.js';
import { writeCommonHeader } from './event_type.js';
import { HWLAT_ENTRY, registerSampleEntries } from './osnoise/sample_entries.js';
import type { PrintableEventType } from './ftrace_entries.js';
import type { MinMaxParam } from './osnoise/osnoise.js';
import type { TraceArray } from './trace_array.js';
import type { Tracer } from './tracer.js';
import type { Tracing } from './tracing.js';

export const HWLAT_MODES = ['none', 'round-robin', 'per-cpu'] as const;
export type HwlatMode = (typeof HWLAT_MODES)[number];

/** tracing_thresh while hwlat runs, when none was set (us). */
const DEFAULT_THRESH_US = 10;
/** Chance that one window has a latency over the threshold. */
const SPIKE_CHANCE = 0.08;
const STEP_MS = 50;

interface Detector {
  thread: Task;
  cpu: number;
  /** The next window's start (ns). */
  next: number;
}

export class Hwlat {
  /** hwlat_detector/window and width (us): the thread spins `width` of each `window`. */
  windowUs = 1_000_000;
  widthUs = 500_000;
  mode: HwlatMode = 'round-robin';
  /** The trace array running hwlat (one at most). */
  private tr?: TraceArray;
  private seq = 0;
  private savedThresh = 0;
  private lastThresh = DEFAULT_THRESH_US;
  private detectors: Detector[] = [];
  private timer?: NodeJS.Timeout;
  private readonly rng: Rng;

  constructor(
    readonly tracing: Tracing,
    private readonly entry: PrintableEventType,
  ) {
    this.rng = tracing.kernel.rng.fork('hwlat');
  }

  /** The width and window files: each bounds the other. */
  params(): Record<string, MinMaxParam> {
    return {
      window: { get: () => this.windowUs, set: (v) => (this.windowUs = v), min: () => this.widthUs },
      width: { get: () => this.widthUs, set: (v) => (this.widthUs = v), max: () => this.windowUs },
    };
  }

  /** hwlat_detector/mode as read: the modes, the current one in brackets. */
  showMode(): string {
    return HWLAT_MODES.map((m) => (m === this.mode ? `[${m}]` : m)).join(' ') + '\n';
  }

  /** A write of hwlat_detector/mode: the threads restart in the new mode. */
  setMode(text: string): void {
    const m = text.trim();
    if (!(HWLAT_MODES as readonly string[]).includes(m)) fail('EINVAL');
    const busy = this.detectors.length > 0;
    if (busy) this.stop();
    this.mode = m as HwlatMode;
    if (busy && this.tr) this.start(this.tr);
  }

  tracer(): Tracer {
    return {
      name: 'hwlat',
      allowInstances: true,
      init: (tr) => {
        if (this.tr) fail('EBUSY');
        this.tr = tr;
        this.seq = 0;
        this.savedThresh = this.tracing.tracingThresh;
        if (!this.tracing.tracingThresh) this.tracing.tracingThresh = this.lastThresh;
        if (tr.tracingOn) this.start(tr);
      },
      reset: () => {
        this.stop();
        this.lastThresh = this.tracing.tracingThresh;
        this.tracing.tracingThresh = this.savedThresh;
        this.tr = undefined;
      },
      start: (tr) => this.start(tr),
      stop: () => this.stop(),
    };
  }

  private start(tr: TraceArray): void {
    if (this.detectors.length) return;
    const k = this.tracing.kernel;
    const now = k.clock.now();
    const cpus = k.cpus.filter((c) => c.online && tr.cpumask[c.id]);
    if (!cpus.length) return;
    if (this.mode === 'per-cpu') {
      for (const c of cpus) this.detectors.push({ thread: k.tasks.spawnKthread(`hwlatd/${c.id}`, c.id, 0), cpu: c.id, next: now });
    } else {
      const cpu = cpus[0]!.id;
      this.detectors.push({ thread: k.tasks.spawnKthread('hwlatd', cpu, 0), cpu, next: now });
    }
    this.timer = setInterval(() => this.advance(), STEP_MS);
    this.timer.unref();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const d of this.detectors) this.tracing.kernel.tasks.reapKthread(d.thread);
    this.detectors = [];
  }

  /** Runs every detector's due windows up to `toNs`. */
  advance(toNs = this.tracing.kernel.clock.now()): void {
    const tr = this.tr;
    if (!tr) return;
    const k = this.tracing.kernel;
    const width = this.widthUs * 1000;
    for (const d of this.detectors) {
      if (d.next < toNs - 10 * this.windowUs * 1000) d.next = toNs - this.windowUs * 1000;
      while (d.next + width <= toNs) {
        if (this.mode === 'round-robin') {
          // move_to_next_cpu(): the next CPU of tracing_cpumask.
          const cpus = k.cpus.filter((c) => c.online && tr.cpumask[c.id]).map((c) => c.id);
          d.cpu = cpus.find((c) => c > d.cpu) ?? cpus[0] ?? d.cpu;
          d.thread.cpu = d.cpu;
        }
        this.window(tr, d);
        d.next += Math.max(this.windowUs * 1000, 1000);
      }
    }
  }

  /** get_sample(): one spin; a sample when the hardware took more than the threshold. */
  private window(tr: TraceArray, d: Detector): void {
    const rng = this.rng;
    if (!rng.chance(SPIKE_CHANCE)) return;
    const thresh = this.tracing.tracingThresh || DEFAULT_THRESH_US;
    const inner = Math.round(thresh + 1 + rng.exp(4));
    const outer = rng.chance(0.5) ? Math.round(thresh + 1 + rng.exp(3)) : Math.round(rng.next() * thresh);
    const k = this.tracing.kernel;
    const wall = BigInt(k.clock.bootWallMs) * 1_000_000n + k.clock.nowNs();
    const ctx = k.context(d.thread);
    const e = HWLAT_ENTRY;
    const res = tr.reserve(d.cpu, e.size);
    if (!res) return;
    const { buf, off } = res;
    buf.fill(0, off, off + e.size);
    writeCommonHeader(buf.subarray(off), this.entry.id, { ...ctx, cpu: d.cpu, flags: ctx.flags | TRACE_FLAG_IRQS_OFF });
    buf.writeBigUInt64LE(BigInt(inner), off + e.duration);
    buf.writeBigUInt64LE(BigInt(outer), off + e.outer);
    buf.writeBigInt64LE(wall / 1_000_000_000n, off + e.sec);
    buf.writeBigInt64LE(wall % 1_000_000_000n, off + e.nsec);
    buf.writeUInt32LE(++this.seq, off + e.seqnum);
    buf.writeUInt32LE(1 + rng.int(3), off + e.count);
    tr.commit(d.cpu, d.thread.pid);
  }
}

/** Registers hwlat when the kernel has it; its state. */
export function registerHwlatTracer(tracing: Tracing): Hwlat | undefined {
  if (!tracing.kernel.features.has('hwlat-tracer')) return undefined;
  const hw = new Hwlat(tracing, registerSampleEntries(tracing).hwlat);
  tracing.tracers.register(hw.tracer());
  return hw;
}
