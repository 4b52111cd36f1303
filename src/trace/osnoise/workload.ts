/**
 * The osnoise/timerlat workload: a kernel thread per CPU of osnoise/cpus
 * (osnoise/N or timerlat/N). osnoise's thread stays busy for runtime_us of
 * every period_us and sums what interrupted it (noise_sources.ts) into a
 * sample per period; timerlat's sleeps on a timer armed every
 * timerlat_period_us and records how late the timer's IRQ and then the
 * woken thread ran. Samples go to every registered trace array, their
 * events through the kernel's tracepoints. The threads run in step with the
 * kernel clock: a timer catches them up a few dozen times a second.
 */
import type { ExecContext } from '../../kernel/context.js';
import { TRACE_FLAG_HARDIRQ, TRACE_FLAG_IRQS_OFF, TRACE_FLAG_SOFTIRQ } from '../../kernel/context.js';
import type { Rng } from '../../kernel/rng.js';
import type { Task } from '../../kernel/task.js';
import { writeCommonHeader, type TraceEventType } from '../event_type.js';
import type { TraceArray } from '../trace_array.js';
import { recordStack } from '../ftrace/kernel_stack.js';
import { traceArrayPuts } from '../trace_puts.js';
import { NoiseSources, type Gap } from './noise_sources.js';
import type { Osnoise } from './osnoise.js';
import { OSNOISE_ENTRY, TIMERLAT_ENTRY } from './sample_entries.js';

/** How often the threads are caught up with the clock (ms). */
const STEP_MS = 20;
/** The most a thread catches up after the event loop stalled (ns): older periods are skipped, as a preempted thread misses them. */
const MAX_BACKLOG_NS = 1_000_000_000;
/** timerlat's contexts. */
const IRQ_CONTEXT = 0;
const THREAD_CONTEXT = 1;
export const THREAD_URET = 2;
/** SCHED_FIFO 95 (timerlat's threads) as task->prio; osnoise's run at nice 0. */
const TIMERLAT_PRIO = 4;
const OSNOISE_PRIO = 120;

/** `ctx` inside an interrupt handler: IRQs off, in hardirq, preemption disabled once (`d.h1.`). */
function hardirq(ctx: ExecContext): ExecContext {
  return { ...ctx, flags: ctx.flags | TRACE_FLAG_HARDIRQ | TRACE_FLAG_IRQS_OFF, preemptCount: 1 };
}

interface CpuRun {
  thread: Task;
  /** The next period's start (osnoise) or the timer's next expiry (timerlat), ns. */
  next: number;
  /** timerlat's activation count. */
  seq: number;
}

export class OsnoiseWorkload {
  private timer?: NodeJS.Timeout;
  private readonly runs = new Map<number, CpuRun>();
  private readonly sources: NoiseSources;
  private readonly rng: Rng;

  constructor(private readonly os: Osnoise) {
    const k = os.tracing.kernel;
    const rng = k.rng.fork('osnoise');
    this.sources = new NoiseSources(k, rng.fork('noise'));
    this.rng = rng.fork('timerlat');
  }

  get running(): boolean {
    return this.runs.size > 0;
  }

  /** start_per_cpu_kthreads(): a thread on each online CPU of osnoise/cpus, unless user space brings the workload. */
  start(): void {
    const os = this.os;
    const k = os.tracing.kernel;
    if (this.running || !os.option('OSNOISE_WORKLOAD')) return;
    const now = k.clock.now();
    const timerlat = os.timerlatMode;
    for (const cpu of k.cpus) {
      if (!cpu.online || !os.cpus.has(cpu.id)) continue;
      const thread = k.tasks.spawnKthread(`${timerlat ? 'timerlat' : 'osnoise'}/${cpu.id}`, cpu.id, timerlat ? TIMERLAT_PRIO : OSNOISE_PRIO);
      const next = timerlat ? now + os.timerlatPeriodUs * 1000 : now;
      this.runs.set(cpu.id, { thread, next, seq: 0 });
    }
    this.timer = setInterval(() => this.advance(), STEP_MS);
    this.timer.unref();
  }

  /** stop_per_cpu_kthreads(). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const tasks = this.os.tracing.kernel.tasks;
    for (const r of this.runs.values()) tasks.reapKthread(r.thread);
    this.runs.clear();
  }

  /** Runs every thread's due work up to `toNs` (the kernel clock by default). */
  advance(toNs = this.os.tracing.kernel.clock.now()): void {
    for (const [cpu, r] of this.runs) {
      if (r.next < toNs - MAX_BACKLOG_NS) r.next = toNs - MAX_BACKLOG_NS;
      if (this.os.timerlatMode) this.timerlatUntil(cpu, r, toNs);
      else this.osnoiseUntil(cpu, r, toNs);
    }
  }

  /** trace_array_printk() from the CPU's thread. */
  print(tr: TraceArray, cpu: number, text: string): void {
    const r = this.runs.get(cpu);
    const k = this.os.tracing.kernel;
    traceArrayPuts(tr, 'osnoise_stop_tracing', text, k.context(r?.thread ?? k.current(cpu)));
  }

  // ------------------------------------------------------------------ osnoise

  private osnoiseUntil(cpu: number, r: CpuRun, toNs: number): void {
    const os = this.os;
    const runtime = os.runtimeUs * 1000;
    while (r.next + runtime <= toNs && this.runs.get(cpu) === r) {
      this.osnoisePeriod(cpu, r, r.next, runtime);
      r.next += Math.max(os.periodUs * 1000, runtime, 1000);
    }
  }

  /** run_osnoise(): one sampling window, its noises and its sample. */
  private osnoisePeriod(cpu: number, r: CpuRun, start: number, runtime: number): void {
    const os = this.os;
    const k = os.tracing.kernel;
    const tps = k.tracepoints;
    const ctx = k.context(r.thread);
    const threshold = os.tracing.tracingThresh * 1000 || 1000;
    let sum = 0;
    let max = 0;
    const count = { hw: 0, irq: 0, softirq: 0, thread: 0 };
    for (const gap of this.sources.gaps(cpu, start, start + runtime)) {
      let duration = 0;
      let interference = 0;
      for (const n of gap.noises) {
        duration += n.duration;
        if (n.kind === 'hw') continue;
        interference++;
        count[n.kind]++;
      }
      this.fireNoises(gap, ctx);
      if (duration < threshold) continue;
      if (duration > max) max = duration;
      if (interference === 0) count.hw++;
      sum += duration;
      if (tps.enabled('sample_threshold')) tps.fire('sample_threshold', ctx, { start: gap.start, duration, interference });
      if (os.stopTracingUs && duration > os.stopTracingUs * 1000) os.stopTracing(cpu);
    }
    const noiseUs = Math.floor(sum / 1000);
    const sample = { runtime: Math.floor(runtime / 1000), noise: noiseUs, max_sample: Math.floor(max / 1000), hw_count: count.hw, nmi_count: 0, irq_count: count.irq, softirq_count: count.softirq, thread_count: count.thread };
    if (tps.enabled('osnoise_sample')) tps.fire('osnoise_sample', ctx, sample);
    const e = OSNOISE_ENTRY;
    this.record(os.entries.osnoise, e.size, ctx, (b, o) => {
      b.writeBigUInt64LE(BigInt(sample.noise), o + e.noise);
      b.writeBigUInt64LE(BigInt(sample.runtime), o + e.runtime);
      b.writeBigUInt64LE(BigInt(sample.max_sample), o + e.maxSample);
      b.writeUInt32LE(sample.hw_count, o + e.hw);
      b.writeUInt32LE(sample.nmi_count, o + e.nmi);
      b.writeUInt32LE(sample.irq_count, o + e.irq);
      b.writeUInt32LE(sample.softirq_count, o + e.softirq);
      b.writeUInt32LE(sample.thread_count, o + e.thread);
    });
    if (os.stopTracingTotalUs && noiseUs > os.stopTracingTotalUs) os.stopTracing(cpu);
  }

  /** The osnoise:*_noise events of one gap, each as the kernel fires it (at the end of the noise, in its context). */
  private fireNoises(gap: Gap, ctx: ExecContext): void {
    const tps = this.os.tracing.kernel.tracepoints;
    for (const n of gap.noises) {
      if (n.kind === 'irq' && tps.enabled('irq_noise')) {
        tps.fire('irq_noise', hardirq(ctx), { start: n.start, duration: n.duration, desc: n.desc ?? '', vector: n.vector });
      } else if (n.kind === 'softirq' && tps.enabled('softirq_noise')) {
        tps.fire('softirq_noise', { ...ctx, flags: ctx.flags | TRACE_FLAG_SOFTIRQ }, { start: n.start, duration: n.duration, vector: n.vector });
      } else if (n.kind === 'thread' && n.task && tps.enabled('thread_noise')) {
        tps.fire('thread_noise', ctx, { comm: n.task.comm, pid: n.task.pid, start: n.start, duration: n.duration });
      }
    }
  }

  // ------------------------------------------------------------------ timerlat

  private timerlatUntil(cpu: number, r: CpuRun, toNs: number): void {
    const period = Math.max(this.os.timerlatPeriodUs, 1) * 1000;
    while (r.next <= toNs && this.runs.get(cpu) === r) {
      this.timerlatActivation(cpu, r);
      r.next += period;
    }
  }

  /** One period: timerlat_irq() then the woken thread's sample. */
  private timerlatActivation(cpu: number, r: CpuRun): void {
    r.seq++;
    this.timerlatWakeup(cpu, r.thread, r.seq);
  }

  /**
   * timerlat_irq() on `cpu` then `thread` woken by it, for activation `seq`:
   * their samples, and tracing stopped past stop_tracing(_total)_us.
   * Returns the thread's latency (ns).
   */
  timerlatWakeup(cpu: number, thread: Task, seq: number): number {
    const os = this.os;
    const k = os.tracing.kernel;
    const rng = this.rng;
    // The timer's IRQ: entry and handler; now and then the tick or another IRQ was in the way.
    let irq = Math.round(700 + rng.exp(900));
    if (rng.chance(0.04)) irq += Math.round(900 + rng.exp(1500));
    // The thread: the wakeup, a context switch from idle; rarely a kernel thread ran first.
    let latency = irq + Math.round(1800 + rng.exp(1800));
    if (rng.chance(0.003)) latency += Math.round(4000 + rng.exp(12000));
    this.timerlatSample(hardirq(k.context(k.current(cpu))), seq, IRQ_CONTEXT, irq);
    if (os.stopTracingUs && irq / 1000 >= os.stopTracingUs) os.stopTracing(cpu);
    this.timerlatSample(k.context(thread), seq, THREAD_CONTEXT, latency);
    const stops = os.stopTracingTotalUs > 0 && latency / 1000 >= os.stopTracingTotalUs;
    // A kernel thread dumps the IRQ's stack past print_stack; a user thread only where it stops tracing (timerlat_fd_read).
    if (thread.kthread || stops) this.dumpIrqStack(cpu, thread, latency);
    if (stops) os.stopTracing(cpu);
    return latency;
  }

  /**
   * timerlat_dump_stack(): past print_stack µs of latency, the stack the
   * timer's IRQ saved (timerlat_save_stack(0): the hrtimer interrupt's
   * frames over the idle loop it woke the CPU from), in every instance, in
   * the woken thread's context. Functions the symbols lack (timerlat_irq:
   * Debian's kernels, whose symbols these are, have no timerlat) are left out.
   */
  private dumpIrqStack(cpu: number, thread: Task, latencyNs: number): void {
    const os = this.os;
    if (!os.printStackUs || os.printStackUs > Math.floor(latencyNs / 1000)) return;
    const k = os.tracing.kernel;
    const inside = (name: string): bigint[] => {
      const f = k.symbols.lookupName(name);
      return f ? [f.addr + BigInt(Math.min(0x30, Math.max(f.size - 1, 0)))] : [];
    };
    const idle = cpu === 0 ? ['rest_init', 'start_kernel', 'x86_64_start_reservations', 'x86_64_start_kernel', 'common_startup_64'] : ['start_secondary', 'common_startup_64'];
    const names = ['timerlat_irq', '__hrtimer_run_queues', 'hrtimer_interrupt', '__sysvec_apic_timer_interrupt', 'sysvec_apic_timer_interrupt', 'asm_sysvec_apic_timer_interrupt', 'pv_native_safe_halt', 'default_idle', 'default_idle_call', 'do_idle', 'cpu_startup_entry', ...idle];
    const entries = names.flatMap(inside);
    for (const tr of os.instances) recordStack(tr, k.context(thread), entries);
  }

  /** How long a user-space thread, woken, takes to come back to its next read (ns): the return to user space and its loop. */
  userReturnNs(): number {
    return Math.round(900 + this.rng.exp(1200));
  }

  /** record_timerlat_sample(): the event and the timerlat tracer's entry. */
  timerlatSample(ctx: ExecContext, seq: number, context: number, latency: number): void {
    const tps = this.os.tracing.kernel.tracepoints;
    if (tps.enabled('timerlat_sample')) tps.fire('timerlat_sample', ctx, { timer_latency: latency, seqnum: seq, context });
    const e = TIMERLAT_ENTRY;
    this.record(this.os.entries.timerlat, e.size, ctx, (b, o) => {
      b.writeUInt32LE(seq >>> 0, o + e.seqnum);
      b.writeInt32LE(context, o + e.context);
      b.writeBigUInt64LE(BigInt(latency), o + e.latency);
    });
  }

  /** The record in every registered trace array. */
  private record(type: TraceEventType, size: number, ctx: ExecContext, fill: (buf: Buffer, off: number) => void): void {
    for (const tr of this.os.instances) {
      const res = tr.reserve(ctx.cpu, size);
      if (!res) continue;
      res.buf.fill(0, res.off, res.off + size);
      writeCommonHeader(res.buf.subarray(res.off), type.id, ctx);
      fill(res.buf, res.off);
      tr.commit(ctx.cpu, ctx.task.pid);
    }
  }
}
