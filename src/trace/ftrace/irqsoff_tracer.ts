/**
 * The irqsoff, preemptoff and preemptirqsoff tracers (trace_irqsoff.c):
 * they time the kernel's sections with interrupts and/or preemption off,
 * as the kernel's PreemptIrq reports their edges, record the section's
 * start and end (and, with `function-trace`, every function called inside
 * it), and keep the longest in the snapshot buffer with its latency in
 * tracing_max_latency. One of them may be current at a time.
 */
import { fail } from '../../kernel/errno.js';
import type { PreemptIrqWatcher } from '../../kernel/preempt_irq.js';
import type { Task } from '../../kernel/task.js';
import type { TraceArray } from '../trace_array.js';
import type { Tracer } from '../tracer.js';
import type { Tracing } from '../tracing.js';
import { recordStack } from './kernel_stack.js';
import { LatencyFunctionOps, SavedFlags, latencyFunction, latencyOptionChanging, reportLatency } from './latency.js';

const TRACER_IRQS_OFF = 1 << 1;
const TRACER_PREEMPT_OFF = 1 << 2;

/** A CPU's section being timed (its trace_array_cpu fields). */
interface CpuSection {
  /** Set while a section is timed here (per-CPU tracing_cpu). */
  tracing: boolean;
  criticalStart: bigint;
  criticalEnd: bigint;
  /** When it started (preempt_timestamp), in trace-clock units. */
  timestamp: number;
  /** max_sequence when it started: a maximum recorded meanwhile elsewhere makes this one stale. */
  sequence: number;
  /** Recursion guard (data->disabled). */
  disabled: number;
  /** The task whose section it is. */
  task?: Task;
  /** Which start this is (a count), and whether the event loop turned since (the section spans a suspended call tree). */
  start: number;
  suspended: boolean;
}

class IrqsoffTracing implements PreemptIrqWatcher {
  private tr?: TraceArray;
  private traceType = 0;
  /** tracer_enabled. */
  private enabled = false;
  private maxSequence = 0;
  private starts = 0;
  private readonly cpus: CpuSection[];
  private readonly flags = new SavedFlags(['overwrite', 'latency-format', 'pause-on-trace']);
  private readonly ops = new LatencyFunctionOps((ip, parentIp, _op, _regs, task) => this.functionCall(ip, parentIp, task), 'irqsoff_tracer_call');

  constructor(private readonly tracing: Tracing) {
    this.cpus = Array.from({ length: tracing.kernel.nrCpus }, () => ({ tracing: false, criticalStart: 0n, criticalEnd: 0n, timestamp: 0, sequence: 0, disabled: 0, start: 0, suspended: false }));
  }

  tracer(name: string, type: number): Tracer {
    const tracer: Tracer = {
      name,
      allowInstances: true,
      usesSnapshot: true,
      printMax: true,
      init: (tr) => this.init(tr, type),
      reset: (tr) => this.reset(tr),
      start: () => {
        this.enabled = true;
      },
      stop: () => {
        this.enabled = false;
      },
      coreOptionChanging: (tr, opt, on) => latencyOptionChanging(this.flags, this.ops, tr, opt, on),
    };
    return tracer;
  }

  private init(tr: TraceArray, type: number): void {
    if (this.tr) fail('EBUSY');
    this.traceType = type;
    this.flags.set(tr);
    tr.maxLatency = 0;
    this.tr = tr;
    for (const c of this.cpus) c.tracing = false;
    this.ops.start(tr);
    this.enabled = tr.tracingOn;
    this.tracing.kernel.preemptIrq.watch(this);
  }

  private reset(tr: TraceArray): void {
    this.enabled = false;
    this.ops.stop(tr);
    this.tracing.kernel.preemptIrq.unwatch(this);
    this.flags.restore(tr);
    this.tr = undefined;
  }

  /**
   * The section's task left it without an edge seen: the emulator restores
   * counts wholesale around a switch (the kernel's sections never outlive
   * their CPU's task), so such a section is dropped, never timed.
   */
  private stale(c: CpuSection): boolean {
    const t = c.task;
    return !t || (t.irqsOff === 0 && t.preemptCount === 0);
  }

  private preemptTrace(task: Task): boolean {
    return (this.traceType & TRACER_PREEMPT_OFF) !== 0 && task.preemptCount !== 0;
  }

  private irqTrace(task: Task): boolean {
    return (this.traceType & TRACER_IRQS_OFF) !== 0 && task.irqsOff > 0;
  }

  hardirqsOff(task: Task, ip: bigint, parentIp: bigint): void {
    if (!this.preemptTrace(task) && this.irqTrace(task)) this.startSection(task, ip, parentIp);
  }

  hardirqsOn(task: Task, ip: bigint, parentIp: bigint): void {
    if (!this.preemptTrace(task) && this.irqTrace(task)) this.stopSection(task, ip, parentIp);
  }

  preemptOff(task: Task, ip: bigint, parentIp: bigint): void {
    if (this.preemptTrace(task) && !this.irqTrace(task)) this.startSection(task, ip, parentIp);
  }

  preemptOn(task: Task, ip: bigint, parentIp: bigint): void {
    if (this.preemptTrace(task) && !this.irqTrace(task)) this.stopSection(task, ip, parentIp);
  }

  /** irqsoff_tracer_call(): functions called inside a timed section of this CPU. */
  private functionCall(ip: bigint, parentIp: bigint, task: Task): void {
    const tr = this.tr;
    if (!tr) return;
    const ctx = this.tracing.kernel.context(task);
    const c = this.cpus[ctx.cpu];
    if (!c?.tracing || (task.irqsOff === 0 && task.preemptCount === 0) || c.disabled) return;
    c.disabled++;
    try {
      latencyFunction(tr, ip, parentIp, ctx);
    } finally {
      c.disabled--;
    }
  }

  /** start_critical_timing(). */
  private startSection(task: Task, ip: bigint, parentIp: bigint): void {
    const tr = this.tr;
    if (!tr || !this.enabled || !tr.tracingOn) return;
    const ctx = this.tracing.kernel.context(task);
    const c = this.cpus[ctx.cpu];
    if (!c || (c.tracing && !this.stale(c)) || c.disabled) return;
    c.disabled++;
    try {
      c.task = task;
      // A call tree suspended inside its section (waiting on a promise) would time whatever the event loop ran
      // meanwhile: the kernel's sections never wait, so a section that spans a turn of the loop is not timed.
      const start = ++this.starts;
      c.start = start;
      c.suspended = false;
      queueMicrotask(() => {
        if (c.start === start) c.suspended = true;
      });
      c.sequence = this.maxSequence;
      c.timestamp = tr.buffer.now();
      c.criticalStart = parentIp || ip;
      latencyFunction(tr, ip, parentIp, ctx);
      c.tracing = true;
    } finally {
      c.disabled--;
    }
  }

  /** stop_critical_timing(). */
  private stopSection(task: Task, ip: bigint, parentIp: bigint): void {
    const tr = this.tr;
    if (!tr) return;
    const ctx = this.tracing.kernel.context(task);
    const c = this.cpus[ctx.cpu];
    if (!c?.tracing) return;
    if (c.task !== task) {
      if (this.stale(c)) c.tracing = false;
      return;
    }
    c.tracing = false;
    if (c.suspended) c.criticalStart = 0n;
    if (!this.enabled || !tr.tracingOn || !c.criticalStart || c.disabled) return;
    c.disabled++;
    try {
      latencyFunction(tr, ip, parentIp, ctx);
      this.checkTiming(tr, task, c, ip, parentIp || ip, ctx.cpu);
      c.criticalStart = 0n;
    } finally {
      c.disabled--;
    }
  }

  /** check_critical_timing(): a section longer than the maximum (or the threshold) becomes the new maximum. */
  private checkTiming(tr: TraceArray, task: Task, c: CpuSection, ip: bigint, parentIp: bigint, cpu: number): void {
    const delta = tr.buffer.now() - c.timestamp;
    const ctx = this.tracing.kernel.context(task);
    if (reportLatency(tr, delta)) {
      latencyFunction(tr, ip, parentIp, ctx);
      recordStack(tr, ctx);
      if (c.sequence === this.maxSequence) {
        c.criticalEnd = parentIp;
        if (!tr.stopCount) {
          tr.maxLatency = delta;
          tr.updateMaxTr(task, cpu, c);
        }
        this.maxSequence++;
      }
    }
    c.sequence = this.maxSequence;
    c.timestamp = tr.buffer.now();
    latencyFunction(tr, ip, parentIp, ctx);
  }
}

/** Registers irqsoff, preemptoff and preemptirqsoff (init_irqsoff_tracer()). */
export function registerIrqsoffTracers(tracing: Tracing): void {
  const t = new IrqsoffTracing(tracing);
  tracing.tracers.register(t.tracer('irqsoff', TRACER_IRQS_OFF));
  tracing.tracers.register(t.tracer('preemptoff', TRACER_PREEMPT_OFF));
  tracing.tracers.register(t.tracer('preemptirqsoff', TRACER_IRQS_OFF | TRACER_PREEMPT_OFF));
}
