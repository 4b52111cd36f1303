/**
 * Trace options (trace_options and options/*): the core flags of each series
 * in the kernel's order with their defaults, and tracer-specific options.
 */
import type { KernelFeature } from '../kernel/features.js';
import type { KernelProfile, ProfileSwitch } from '../kernel/profiles/profile.js';

export interface CoreOption {
  readonly name: string;
  readonly default: boolean;
  /** Only the top level has the options/ file (it still lists in trace_options everywhere). */
  readonly topOnly?: boolean;
  /** New instances start with it off whatever the top level has. */
  readonly zeroedInInstances?: boolean;
  /** Only where the series' profile has this switch on. */
  readonly needs?: ProfileSwitch;
  /** Only with this optional kernel feature. */
  readonly feature?: KernelFeature;
}

const CORE_OPTIONS: readonly CoreOption[] = [
  { name: 'print-parent', default: true },
  { name: 'sym-offset', default: false },
  { name: 'sym-addr', default: false },
  { name: 'verbose', default: false },
  { name: 'raw', default: false },
  { name: 'hex', default: false },
  { name: 'bin', default: false },
  { name: 'block', default: false },
  { name: 'fields', default: false },
  { name: 'trace_printk', default: true, topOnly: true },
  { name: 'annotate', default: true },
  { name: 'userstacktrace', default: false },
  { name: 'sym-userobj', default: false },
  { name: 'printk-msg-only', default: false, topOnly: true },
  { name: 'context-info', default: true },
  { name: 'latency-format', default: false },
  { name: 'record-cmd', default: true, topOnly: true },
  { name: 'record-tgid', default: false },
  { name: 'overwrite', default: true },
  { name: 'disable_on_free', default: false },
  { name: 'irq-info', default: true },
  { name: 'markers', default: true },
  { name: 'event-fork', default: false, zeroedInInstances: true },
  { name: 'trace_printk_dest', default: true, zeroedInInstances: true },
  { name: 'copy_trace_marker', default: true, zeroedInInstances: true, needs: 'copyTraceMarker' },
  { name: 'pause-on-trace', default: false },
  { name: 'hash-ptr', default: true },
  { name: 'bitmask-list', default: false, needs: 'bitmaskList' },
  { name: 'function-trace', default: true },
  { name: 'function-fork', default: false, zeroedInInstances: true },
  { name: 'display-graph', default: false },
  { name: 'stacktrace', default: false },
  // FUNCTION_PROFILER (without profilerCoreOptions, graph-time is a function_graph option)
  { name: 'prof-text-offset', default: false, needs: 'profilerCoreOptions', feature: 'function-profiler' },
  { name: 'graph-time', default: true, needs: 'profilerCoreOptions', feature: 'function-profiler' },
];

/** The core options of a series (and optional features), in trace_options order. */
export function coreOptions(profile: KernelProfile, features: ReadonlySet<KernelFeature> = new Set()): readonly CoreOption[] {
  return CORE_OPTIONS.filter((o) => (!o.needs || profile[o.needs]) && (!o.feature || features.has(o.feature)));
}

/** Splits `[no]name` as trace_options takes it (surrounding blanks ignored). */
export function parseOptionWrite(text: string): { name: string; on: boolean } {
  const s = text.trim();
  return s.startsWith('no') ? { name: s.slice(2), on: false } : { name: s, on: true };
}
