/**
 * The ftrace side of one trace array: its FtraceArray (ops, filters, pids,
 * probes) and the fgraph_ops its function_graph tracer registers, sharing
 * that ops' filters (set_ftrace_filter filters both tracers).
 */
import { FgraphOps } from '../../ftrace/fgraph.js';
import { FtraceArray } from '../../ftrace/ftrace_array.js';
import type { TraceArray } from '../trace_array.js';

const arrays = new WeakMap<TraceArray, ArrayFtrace>();

export class ArrayFtrace {
  readonly fa: FtraceArray;
  /** tr->gops: the function_graph tracer's fgraph_ops (callbacks set when the tracer starts). */
  readonly gops: FgraphOps;
  /** tr->function_enabled: the function tracer's ops is fully registered. */
  functionEnabled = false;

  static of(tr: TraceArray): ArrayFtrace {
    let a = arrays.get(tr);
    if (!a) arrays.set(tr, (a = new ArrayFtrace(tr)));
    return a;
  }

  /** The state if the array ever used ftrace. */
  static peek(tr: TraceArray): ArrayFtrace | undefined {
    return arrays.get(tr);
  }

  private constructor(readonly tr: TraceArray) {
    this.fa = new FtraceArray(tr.tracing.kernel, tr, tr.isTop);
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
  static destroy(tr: TraceArray): void {
    const a = arrays.get(tr);
    if (!a) return;
    a.fa.destroy();
    arrays.delete(tr);
  }
}
