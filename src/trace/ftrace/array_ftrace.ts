/**
 * The function tracing of one trace array: its FtraceArray (ops, filters,
 * pids, probes), the fgraph_ops its function_graph tracer registers, sharing
 * that ops' filters (set_ftrace_filter filters both tracers), and what the
 * function tracers keep for it while they run.
 */
import { FgraphOps } from '../../ftrace/fgraph.js';
import { FtraceArray } from '../../ftrace/ftrace_array.js';
import type { TraceArray } from '../trace_array.js';
import type { FuncRepeats } from './func_repeats.js';
import type { GraphCallbacks } from './function_graph_tracer.js';

export class ArrayFtrace {
  readonly fa: FtraceArray;
  /** tr->gops: the function_graph tracer's fgraph_ops (callbacks set when the tracer starts). */
  readonly gops: FgraphOps;
  /** tr->function_enabled: the function tracer's ops is fully registered. */
  functionEnabled = false;
  /** tr->last_func_repeats: the function tracer's pending repeats (func-no-repeats), while it runs. */
  repeats?: FuncRepeats;
  /** The function_graph tracer's callbacks for this array (made when it first runs here). */
  graph?: GraphCallbacks;

  constructor(tr: TraceArray) {
    this.fa = new FtraceArray(tr.tracing.ftrace, tr, tr.isTop);
    this.gops = new FgraphOps({
      entryfunc: () => false,
      retfunc: () => {},
      entrySym: 'trace_graph_entry',
      retSym: 'trace_graph_return',
      private: tr,
      funcHash: this.fa.ops.funcHash,
      pids: this.fa,
    });
  }

  /** The instance is removed: probes, ops and pid lists go. */
  destroy(): void {
    this.fa.destroy();
  }
}
