/**
 * Puts the function tracers on a Tracing: their record types, the
 * `function` and `function_graph` tracers, and the set_ftrace_filter
 * commands that act on trace arrays.
 */
import { Ftrace } from '../../ftrace/ftrace.js';
import type { Tracer } from '../tracer.js';
import type { Tracing } from '../tracing.js';
import { registerFnEvents } from './fn_events.js';
import { registerFuncCommands } from './func_commands.js';
import { registerFuncRepeats } from './func_repeats.js';
import { functionGraphTracer, graphUpdateThresh } from './function_graph_tracer.js';
import { functionTracer } from './function_tracer.js';
import { registerKernelStack } from './kernel_stack.js';

const graphTracers = new WeakMap<Tracing, Tracer>();

export function initFtrace(tracing: Tracing): void {
  const kernel = tracing.kernel;
  const types = registerFnEvents(tracing, kernel.features.has('graph-retval'));
  registerKernelStack(tracing);
  registerFuncRepeats(tracing);
  tracing.tracers.register(functionTracer(kernel.profile));
  const graph = functionGraphTracer(kernel, () => types.graphRet_);
  tracing.tracers.register(graph);
  graphTracers.set(tracing, graph);
  registerFuncCommands(Ftrace.of(kernel));
  for (const f of ['dynamic_ftrace', 'function', 'function_graph', 'stacktrace', 'stack_tracer']) tracing.features.add(f);
}

/** tracing_thresh was written: the graph tracer switches to (or from) its threshold callback. */
export function tracingThreshChanged(tracing: Tracing): void {
  const graph = graphTracers.get(tracing);
  if (graph) graphUpdateThresh(graph, tracing.top);
}
