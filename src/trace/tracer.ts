/**
 * Tracers (current_tracer): the registry and the `Tracer` contract that nop,
 * function and function_graph implement. A tracer is initialised on a trace
 * array when selected and reset when replaced.
 */
import { fail } from '../kernel/errno.js';
import type { TraceRecord } from './event_type.js';
import type { TraceArray } from './trace_array.js';

/** A tracer-specific option (options/NAME, and a trace_options line while the tracer is current). */
export interface TracerOption {
  name: string;
  default: boolean;
}

/** What a tracer's print hooks see of the reader. */
export interface TracerPrintContext {
  readonly tr: TraceArray;
  /** Trace option (core or of this tracer) in effect. */
  option(name: string): boolean;
  /** Latency-format output was asked for when the file was opened. */
  readonly latencyFormat: boolean;
  /** Timestamps are nanoseconds. */
  readonly timeInNs: boolean;
  /** The standard context columns of a record (`TASK-PID  [CPU]  FLAGS  TIMESTAMP: `). */
  context(rec: TraceRecord): string;
  /**
   * The record after the one being printed on the same CPU (lookahead, as
   * function_graph's get_return_for_leaf() does), or null. On a consuming
   * reader this consumes the current record first.
   */
  peekSameCpu?(): TraceRecord | null;
  /** That record was printed with the current one: do not print it again. */
  skipSameCpu?(): void;
}

export interface Tracer {
  readonly name: string;
  /** May be selected in instances (else only at the top level). */
  readonly allowInstances?: boolean;
  readonly options?: readonly TracerOption[];
  /** Latency tracers keep their maximum in the snapshot buffer: `snapshot` is theirs (EBUSY). */
  readonly usesSnapshot?: boolean;
  /** `trace` shows the snapshot buffer, where the maximum is (print_max). */
  readonly printMax?: boolean;
  /** Selected on `tr`; throw a KernelError to refuse. */
  init(tr: TraceArray): void;
  /** Replaced on `tr`. */
  reset(tr: TraceArray): void;
  /** tracing_on went 1 / 0. */
  start?(tr: TraceArray): void;
  stop?(tr: TraceArray): void;
  /** A tracer option is being set: throw to refuse (set_flag). */
  setOption?(tr: TraceArray, name: string, on: boolean): void;
  /** tracing_thresh was written while this is the top level's tracer (update_thresh). */
  updateThresh?(tr: TraceArray): void;
  /** A core option is changing: return false to refuse it with EINVAL (flag_changed). */
  coreOptionChanging?(tr: TraceArray, name: string, on: boolean): boolean;
  /** Replaces the default `trace` header (print_header). */
  printHeader?(ctx: TracerPrintContext): string;
  /** Prints one record instead of the default layout; undefined = not handled (print_line). */
  printLine?(rec: TraceRecord, ctx: TracerPrintContext): string | undefined;
}

export class TracerRegistry {
  private readonly tracers = new Map<string, Tracer>();
  /** Called when a tracer registers (the Tracing tells each of its trace arrays). */
  readonly onRegister = new Set<(t: Tracer) => void>();

  register(t: Tracer): void {
    if (this.tracers.has(t.name)) throw new Error(`tracer ${t.name} already registered`);
    this.tracers.set(t.name, t);
    for (const cb of this.onRegister) cb(t);
  }

  get(name: string): Tracer | undefined {
    return this.tracers.get(name);
  }

  /** Tracers usable on `tr`, newest registered first (available_tracers order). */
  available(tr: TraceArray): Tracer[] {
    return [...this.tracers.values()].reverse().filter((t) => tr.isTop || t.allowInstances);
  }

  all(): Tracer[] {
    return [...this.tracers.values()];
  }
}

/** The nop tracer: records nothing itself; its two test options show how tracer options behave. */
export const nopTracer: Tracer = {
  name: 'nop',
  allowInstances: true,
  options: [
    { name: 'test_nop_accept', default: false },
    { name: 'test_nop_refuse', default: false },
  ],
  init() {},
  reset() {},
  setOption(_tr, name) {
    if (name === 'test_nop_refuse') fail('EINVAL');
  },
};
