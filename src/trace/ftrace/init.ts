/**
 * Puts the function tracers on a Tracing: their record types, the
 * `function` and `function_graph` tracers, and the set_ftrace_filter
 * commands that act on trace arrays.
 */
import type { Tracing } from '../tracing.js';
import { registerFnEvents } from './fn_events.js';
import { registerFuncCommands } from './func_commands.js';
import { registerFuncRepeats } from './func_repeats.js';
import { functionGraphTracer } from './function_graph_tracer.js';
import { functionTracer } from './function_tracer.js';
import { registerIrqsoffTracers } from './irqsoff_tracer.js';
import { registerKernelStack } from './kernel_stack.js';
import { registerWakeupTracers } from './wakeup_tracer.js';

export function initFtrace(tracing: Tracing): void {
  const kernel = tracing.kernel;
  const types = registerFnEvents(tracing, kernel.features.has('graph-retval'));
  registerKernelStack(tracing);
  registerFuncRepeats(tracing);
  tracing.tracers.register(functionTracer(kernel.profile));
  // Linked between the two (available_tracers lists them after function_graph).
  if (kernel.features.has('latency-tracers')) {
    registerIrqsoffTracers(tracing);
    registerWakeupTracers(tracing);
  }
  tracing.tracers.register(functionGraphTracer(tracing, () => types.graphRet_));
  registerFuncCommands(tracing.ftrace);
  for (const f of ['dynamic_ftrace', 'function', 'function_graph', 'stacktrace', 'stack_tracer']) tracing.features.add(f);
}
