/**
 * Optional kernel features (Kconfig options) beyond the Debian kernels the
 * emulator reproduces. By default the emulated kernel has Debian's config,
 * so every file, option and README line matches the real one; these add what
 * Debian builds without, for the selftests that need them.
 */
export type KernelFeature =
  /** CONFIG_FUNCTION_PROFILER: function_profile_enabled, trace_stat/function*, graph-time. */
  | 'function-profiler'
  /** CONFIG_FUNCTION_GRAPH_RETVAL: funcgraph-retval(-hex), the retval field of funcgraph_exit. */
  | 'graph-retval'
  /** CONFIG_OSNOISE_TRACER: the osnoise tracer, osnoise/ and the osnoise:* events. */
  | 'osnoise-tracer'
  /** CONFIG_TIMERLAT_TRACER (selects CONFIG_OSNOISE_TRACER): the timerlat tracer and its osnoise/ files. */
  | 'timerlat-tracer'
  /** CONFIG_HWLAT_TRACER: the hwlat tracer and hwlat_detector/. */
  | 'hwlat-tracer'
  /** CONFIG_NVHE_EL2_TRACING (arm64 pKVM): the hypervisor's trace remote, remotes/hypervisor (simulated; where the series has trace remotes). */
  | 'hypervisor-tracing'
  /**
   * CONFIG_IRQSOFF_TRACER, CONFIG_PREEMPT_TRACER, CONFIG_SCHED_TRACER (and
   * CONFIG_PREEMPTIRQ_DELAY_TEST=m): the irqsoff, preemptoff, preemptirqsoff
   * and wakeup tracers, tracing_max_latency, the preemptirq_delay_test module,
   * and the preemptirq events they select (CONFIG_PREEMPTIRQ_TRACEPOINTS).
   */
  | 'latency-tracers';

export const KERNEL_FEATURES: readonly KernelFeature[] = ['function-profiler', 'graph-retval', 'osnoise-tracer', 'timerlat-tracer', 'hwlat-tracer', 'hypervisor-tracing', 'latency-tracers'];

export function isKernelFeature(s: string): s is KernelFeature {
  return (KERNEL_FEATURES as readonly string[]).includes(s);
}
