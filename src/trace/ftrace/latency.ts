/**
 * What the latency tracers (irqsoff family, wakeup family) share: the core
 * options they turn on while current and give back as they were, the
 * threshold test of a new maximum, their function records, and their
 * trace array's function ops (the `function-trace` option).
 */
import type { ExecContext } from '../../kernel/context.js';
import type { FtraceFunc } from '../../ftrace/ftrace_ops.js';
import { writeU64LE } from '../../kernel/u64_le.js';
import type { TraceArray } from '../trace_array.js';
import { TRACE_FN } from './fn_events.js';
import { writeRecord } from './record.js';

/** Core options a latency tracer sets while it is current (set_tracer_flag() at init), restored at reset. */
export class SavedFlags {
  private saved = new Set<string>();
  /** Putting them back (the tracer is leaving: nothing it would refuse is refused). */
  restoring = false;

  constructor(private readonly names: readonly string[]) {}

  set(tr: TraceArray): void {
    this.saved = new Set(this.names.filter((n) => tr.options.has(n)));
    for (const n of this.names) tr.setCoreOption(n, true);
  }

  restore(tr: TraceArray): void {
    this.restoring = true;
    try {
      for (const n of this.names) tr.setCoreOption(n, this.saved.has(n));
    } finally {
      this.restoring = false;
    }
  }
}

/**
 * flag_changed of a latency tracer: `function-trace` (un)registers its
 * function ops; `overwrite` may not go off while it is current
 * (trace_keep_overwrite()).
 */
export function latencyOptionChanging(flags: SavedFlags, ops: LatencyFunctionOps, tr: TraceArray, opt: string, on: boolean): boolean {
  if (flags.restoring) return true;
  if (opt === 'function-trace') {
    if (on) ops.start(tr, true);
    else ops.stop(tr);
    return true;
  }
  return !(opt === 'overwrite' && !on);
}

/** report_latency(): above tracing_thresh when one is set, else above the maximum so far. */
export function reportLatency(tr: TraceArray, deltaNs: number): boolean {
  const thresh = tr.tracing.tracingThresh * 1000;
  return thresh ? deltaNs >= thresh : deltaNs > tr.maxLatency;
}

/** trace_function() without arguments: one ftrace/function record. */
export function latencyFunction(tr: TraceArray, ip: bigint, parentIp: bigint, ctx: ExecContext): void {
  writeRecord(tr, ctx, TRACE_FN, 24, (buf, off) => {
    writeU64LE(buf, off + 8, ip);
    writeU64LE(buf, off + 16, parentIp);
  });
}

/**
 * The trace array's function ops while a latency tracer is current
 * (ftrace_init_array_ops() + register_ftrace_function()), on only while
 * `function-trace` is set.
 */
export class LatencyFunctionOps {
  private registered = false;

  constructor(
    private readonly func: FtraceFunc,
    private readonly sym: string,
  ) {}

  start(tr: TraceArray, force = false): void {
    if (this.registered || (!force && !tr.options.has('function-trace'))) return;
    const ftrace = tr.tracing.ftrace;
    ftrace.setFunc(tr.ftrace.fa.ops, this.func, this.sym);
    ftrace.register(tr.ftrace.fa.ops);
    this.registered = true;
  }

  stop(tr: TraceArray): void {
    if (!this.registered) return;
    const ftrace = tr.tracing.ftrace;
    ftrace.unregister(tr.ftrace.fa.ops);
    ftrace.setFunc(tr.ftrace.fa.ops, () => {}, 'ftrace_stub');
    this.registered = false;
  }
}
