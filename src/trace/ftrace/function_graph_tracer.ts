/**
 * The `function_graph` tracer, recording side (trace_functions_graph.c): its
 * fgraph_ops keeps the call time of each traced call on the shadow stack
 * and records a funcgraph_entry at the call and a funcgraph_exit at the
 * return, honouring set_graph_function / set_graph_notrace, max_graph_depth,
 * tracing_thresh, sleep-time and funcgraph-irqs.
 */
import type { ExecContext } from '../../kernel/context.js';
import { HARDIRQ_MASK } from '../../kernel/cpu.js';
import type { Kernel } from '../../kernel/kernel.js';
import { ARG_REGS, type PtRegs } from '../../kernel/regs.js';
import type { Task } from '../../kernel/task.js';
import type { Fgraph, FgraphEnt, FgraphEntryFunc, FgraphOps, FgraphRet, FgraphRetFunc } from '../../ftrace/fgraph.js';
import type { GraphHashes } from '../../ftrace/graph_hash.js';
import type { FtraceTasks } from '../../ftrace/task_state.js';
import type { TraceArray } from '../trace_array.js';
import type { Tracer, TracerOption } from '../tracer.js';
import type { Tracing } from '../tracing.js';
import { FTRACE_REGS_MAX_ARGS, TRACE_GRAPH_ENT, TRACE_GRAPH_RET, type GraphRetLayout } from './fn_events.js';
import { printGraphHeader, printGraphLine } from './fgraph_output.js';
import { writeRecord } from './record.js';
import { writeU64LE } from '../../kernel/u64_le.js';

/** Task-variable bits of the graph tracer (TRACE_GRAPH_FL, the depth it was set at, TRACE_GRAPH_NOTRACE). */
const TRACE_GRAPH_FL = 1;
const DEPTH_SHIFT = 1;
const TRACE_GRAPH_NOTRACE = 1 << 3;

/** Graph-tracer settings shared by every trace array (globals in the kernel). */
export class GraphGlobals {
  /** max_graph_depth (0: no limit). */
  maxDepth = 0;
  /** ftrace_graph_skip_irqs: tracers not showing interrupts. */
  skipIrqs = 0;
}

/** The graph tracer's options of a series (and kernel features), in the kernel's order. */
function graphTracerOptions(kernel: Kernel): TracerOption[] {
  const o: TracerOption[] = [
    { name: 'funcgraph-overrun', default: false },
    { name: 'funcgraph-cpu', default: true },
    { name: 'funcgraph-overhead', default: true },
    { name: 'funcgraph-proc', default: false },
    { name: 'funcgraph-duration', default: true },
    { name: 'funcgraph-abstime', default: false },
    { name: 'funcgraph-irqs', default: true },
    { name: 'funcgraph-tail', default: false },
  ];
  if (kernel.features.has('graph-retval')) {
    o.push({ name: 'funcgraph-retval', default: false }, { name: 'funcgraph-retval-hex', default: false });
  }
  if (kernel.profile.functionArgs) o.push({ name: 'funcgraph-args', default: false });
  o.push({ name: 'sleep-time', default: true });
  if (!kernel.profile.profilerCoreOptions && kernel.features.has('function-profiler')) o.push({ name: 'graph-time', default: true });
  return o;
}

function flagSet(tr: TraceArray, name: string): boolean {
  return tr.tracerOptions.get('function_graph')?.has(name) ?? false;
}

/** The graph tracer's callbacks for one trace array. */
export class GraphCallbacks {
  private readonly kernel: Kernel;
  private readonly fgraph: Fgraph;
  private readonly tasks: FtraceTasks;
  private readonly hashes: GraphHashes;
  private readonly globals: GraphGlobals;

  constructor(
    private readonly tr: TraceArray,
    private readonly layout: GraphRetLayout,
  ) {
    const tracing = tr.tracing;
    this.kernel = tracing.kernel;
    this.fgraph = tracing.ftrace.fgraph;
    this.tasks = tracing.ftrace.tasks;
    this.hashes = tracing.ftrace.graphHashes;
    this.globals = tracing.graphGlobals;
  }

  private taskVar(task: Task, gops: FgraphOps): number {
    return Number(this.fgraph.taskVar(task, gops));
  }

  private setTaskVar(task: Task, gops: FgraphOps, v: number): void {
    this.fgraph.setTaskVar(task, gops, BigInt(v >>> 0));
  }

  /** graph_entry(): true to get the return callback. */
  entry(trace: FgraphEnt, gops: FgraphOps, regs: PtRegs | undefined, task: Task): boolean {
    let tv = this.taskVar(task, gops);
    if (tv & TRACE_GRAPH_NOTRACE) return false;
    const fnId = trace.id;
    if (fnId >= 0 && this.hashes.notrace.has(fnId)) {
      this.setTaskVar(task, gops, tv | TRACE_GRAPH_NOTRACE);
      return true;
    }
    // ftrace_graph_ignore_func(): outside set_graph_function, too deep.
    if (!(tv & TRACE_GRAPH_FL)) {
      const h = this.hashes.function;
      if (!h.empty) {
        if (fnId < 0 || !h.has(fnId)) return false;
        tv = (tv | TRACE_GRAPH_FL) & ~(3 << DEPTH_SHIFT);
        tv |= (trace.depth & 3) << DEPTH_SHIFT;
        this.setTaskVar(task, gops, tv);
      }
    }
    if (trace.depth < 0 || (this.globals.maxDepth && trace.depth >= this.globals.maxDepth)) return false;
    if (this.globals.skipIrqs && !flagSet(this.tr, 'funcgraph-irqs') && task.preemptCount & HARDIRQ_MASK) return false;
    const st = this.tasks.of(task);
    const noSleep = this.fgraph.noSleepTime > 0 && !flagSet(this.tr, 'sleep-time');
    const at = this.fgraph.reserveData(task, gops.idx, noSleep ? 16 : 8);
    if (at < 0) return false;
    const stack = st.retStack!;
    stack[at] = this.kernel.clock.nowNs();
    if (noSleep) stack[at + 1] = BigInt(st.ftraceSleeptime);
    if (this.tr.tracing.tracingThresh) return true;
    const ctx = this.kernel.context(task);
    const len = 24 + (regs ? FTRACE_REGS_MAX_ARGS * 8 : 0);
    const intDepth = this.kernel.profile.graphDepth === 'int';
    // An entry the buffer refused (tracing off) gets no return callback: its exit is not shown either.
    return writeRecord(this.tr, ctx, TRACE_GRAPH_ENT, intDepth ? 20 : len, (buf, off) => {
      writeU64LE(buf, off + 8, trace.func);
      if (intDepth) buf.writeInt32LE(trace.depth, off + 16);
      else writeU64LE(buf, off + 16, BigInt(trace.depth)); // not negative: checked above
      if (regs && this.kernel.profile.functionArgs) for (let i = 0; i < FTRACE_REGS_MAX_ARGS; i++) writeU64LE(buf, off + 24 + 8 * i, regs.get(ARG_REGS[i]));
    });
  }

  /**
   * Whether entry() now declines every call and leaves nothing behind: the
   * array records nothing, and no set_graph_function, set_graph_notrace or
   * tracing_thresh acts before the refused reservation.
   */
  quiet(): boolean {
    return this.tr.silent && this.hashes.function.empty && this.hashes.notrace.empty && !this.tr.tracing.tracingThresh;
  }

  /** trace_graph_return() / trace_graph_thresh_return(). */
  ret(trace: FgraphRet, gops: FgraphOps, task: Task, thresh: boolean): void {
    const rettime = this.kernel.clock.now();
    let tv = this.taskVar(task, gops);
    // ftrace_graph_addr_finish(): leaving the function set_graph_function started at.
    if (tv & TRACE_GRAPH_FL && trace.depth === ((tv >> DEPTH_SHIFT) & 3)) {
      tv &= ~TRACE_GRAPH_FL;
      this.setTaskVar(task, gops, tv);
    }
    if (tv & TRACE_GRAPH_NOTRACE) {
      this.setTaskVar(task, gops, tv & ~TRACE_GRAPH_NOTRACE);
      return;
    }
    const data = this.fgraph.retrieveData(task, gops.idx);
    if (!data) return;
    const st = this.tasks.of(task);
    const stack = st.retStack!;
    let calltime = Number(stack[data.index]);
    if (data.bytes >= 16 && this.fgraph.noSleepTime > 0 && !flagSet(this.tr, 'sleep-time')) {
      calltime += st.ftraceSleeptime - Number(stack[data.index + 1]);
    }
    const threshNs = this.tr.tracing.tracingThresh * 1000;
    if (thresh && threshNs && rettime - calltime < threshNs) return;
    this.record(this.kernel.context(task), trace, calltime, rettime);
  }

  /** __trace_graph_return(). */
  record(ctx: ExecContext, trace: FgraphRet, calltime: number, rettime: number): void {
    const l = this.layout;
    const intDepth = this.kernel.profile.graphDepth === 'int';
    writeRecord(this.tr, ctx, TRACE_GRAPH_RET, l.size, (buf, off) => {
      writeU64LE(buf, off + 8, trace.func);
      if (l.retval !== undefined) writeU64LE(buf, off + l.retval, BigInt.asUintN(64, trace.retval));
      if (intDepth) buf.writeInt32LE(trace.depth, off + l.depth);
      else buf.writeUInt32LE(trace.depth >>> 0, off + l.depth);
      buf.writeUInt32LE(trace.overrun >>> 0, off + l.overrun);
      writeU64LE(buf, off + l.calltime, BigInt(calltime));
      writeU64LE(buf, off + l.rettime, BigInt(rettime));
    });
  }
}

/** The function_graph tracer. */
export function functionGraphTracer(tracing: Tracing, layout: () => GraphRetLayout): Tracer {
  const kernel = tracing.kernel;
  const fgraph = tracing.ftrace.fgraph;
  const globals = tracing.graphGlobals;

  const entryFunc = (cb: GraphCallbacks, args: boolean): FgraphEntryFunc => (trace, gops, regs, task) =>
    cb.entry(trace, gops, args ? regs : undefined, task);
  const retFunc = (cb: GraphCallbacks, thresh: boolean): FgraphRetFunc => (trace, gops, _regs, task) => cb.ret(trace, gops, task, thresh);

  const cbOf = (tr: TraceArray) => (tr.ftrace.graph ??= new GraphCallbacks(tr, layout()));

  const setCallbacks = (tr: TraceArray) => {
    const af = tr.ftrace;
    const cb = cbOf(tr);
    const args = flagSet(tr, 'funcgraph-args');
    af.gops.savedFunc = undefined;
    af.gops.entryfunc = entryFunc(cb, args);
    af.gops.entrySym = args ? 'trace_graph_entry_args' : 'trace_graph_entry';
    af.gops.quiet = () => cb.quiet();
    const thresh = tr.tracing.tracingThresh > 0;
    af.gops.retfunc = retFunc(cb, thresh);
    af.gops.retSym = thresh ? 'trace_graph_thresh_return' : 'trace_graph_return';
  };

  const tracer: Tracer = {
    name: 'function_graph',
    allowInstances: true,
    options: graphTracerOptions(kernel),
    init(tr) {
      setCallbacks(tr);
      if (!flagSet(tr, 'funcgraph-irqs')) globals.skipIrqs++;
      if (!flagSet(tr, 'sleep-time')) fgraph.noSleepTime++;
      try {
        fgraph.register(tr.ftrace.gops);
      } catch (e) {
        if (!flagSet(tr, 'funcgraph-irqs')) globals.skipIrqs--;
        if (!flagSet(tr, 'sleep-time')) fgraph.noSleepTime--;
        throw e;
      }
    },
    reset(tr) {
      if (!flagSet(tr, 'funcgraph-irqs')) globals.skipIrqs = Math.max(0, globals.skipIrqs - 1);
      if (!flagSet(tr, 'sleep-time')) fgraph.noSleepTime = Math.max(0, fgraph.noSleepTime - 1);
      fgraph.unregister(tr.ftrace.gops);
    },
    setOption(tr, name, on) {
      // func_graph_set_flag(): only matters while this is the array's tracer.
      if (tr.tracer !== tracer) return;
      switch (name) {
        case 'sleep-time':
          if (on) fgraph.noSleepTime = Math.max(0, fgraph.noSleepTime - 1);
          else fgraph.noSleepTime++;
          break;
        case 'funcgraph-irqs':
          if (on) globals.skipIrqs = Math.max(0, globals.skipIrqs - 1);
          else globals.skipIrqs++;
          break;
        case 'funcgraph-args': {
          const af = tr.ftrace;
          fgraph.unregister(af.gops);
          const cb = cbOf(tr);
          af.gops.entryfunc = entryFunc(cb, on);
          af.gops.entrySym = on ? 'trace_graph_entry_args' : 'trace_graph_entry';
          fgraph.register(af.gops);
          break;
        }
      }
    },
    updateThresh(tr) {
      // tracing_thresh changed while this runs: the return callback switches to (or from) the threshold one.
      tracer.reset(tr);
      tracer.init(tr);
    },
    printHeader: (ctx) => printGraphHeader(ctx),
    printLine: (rec, ctx) => printGraphLine(rec, ctx),
  };
  return tracer;
}
