/**
 * The tracing subsystem as a whole: the top-level trace array and the
 * instances, the ftrace core and the subsystems over it (events, dynamic
 * events, tracers).
 */
import { recordTracePrintk } from './trace_printk.js';
import { registerBlkTracer } from './blk_tracer.js';
import { registerMmioTracer } from './mmio_tracer.js';
import { type Hwlat, registerHwlatTracer } from './hwlat_tracer.js';
import type { Osnoise } from './osnoise/osnoise.js';
import { registerOsnoiseTracers } from './osnoise/osnoise_tracers.js';
import { Ftrace } from '../ftrace/ftrace.js';
import { fail } from '../kernel/errno.js';
import type { Kernel } from '../kernel/kernel.js';
import type { Task } from '../kernel/task.js';
import { DynEvents } from './dynevent/dyn_events.js';
import { ErrorLog } from './error_log.js';
import { EventRegistry } from './event_registry.js';
import { TraceEvents } from './events/trace_events.js';
import { GraphGlobals } from './ftrace/function_graph_tracer.js';
import { initFtrace } from './ftrace/init.js';
import { registerFtraceEntries, type FtraceEntryTypes } from './ftrace_entries.js';
import { SavedCmdlines } from './saved_cmdlines.js';
import { TraceRemotes } from './remote/trace_remotes.js';
import { TraceArray } from './trace_array.js';
import { makeTraceClocks, type TraceClock } from './trace_clock.js';
import { TracerRegistry, nopTracer } from './tracer.js';

export class Tracing {
  /** The ftrace core: function hooks, fgraph, kprobes, fprobes, rethook. */
  readonly ftrace: Ftrace;
  readonly top: TraceArray;
  readonly instances = new Map<string, TraceArray>();
  /** Every event type, static and dynamic. */
  readonly eventTypes = new EventRegistry();
  /** The clocks trace_clock offers (shared: `counter` counts across arrays). */
  readonly clocks: readonly TraceClock[];
  /** saved_cmdlines / saved_tgids. */
  readonly cmdlines = new SavedCmdlines();
  readonly tracers = new TracerRegistry();
  /** error_log of every trace array. */
  readonly errorLog: ErrorLog;
  /** Trace arrays that get what is written to the top-level trace_marker (copy_trace_marker). */
  readonly markerCopies = new Set<TraceArray>();
  /** Where trace_printk() goes (trace_printk_dest). */
  printkTrace!: TraceArray;
  private tracingThresh_ = 0;
  /** README feature paragraphs subsystems have enabled (see src/tracefs/readme.ts). */
  readonly features = new Set<string>();
  /** The ftrace-internal event types this layer records (ftrace/print, ftrace/raw_data). */
  readonly ftraceTypes: FtraceEntryTypes;
  /** The function_graph tracer's settings shared by every trace array (max_graph_depth, ...). */
  readonly graphGlobals = new GraphGlobals();
  /** The hwlat tracer's state (CONFIG_HWLAT_TRACER). */
  readonly hwlat?: Hwlat;
  /** The osnoise and timerlat tracers' shared state (CONFIG_OSNOISE_TRACER). */
  readonly osnoise?: Osnoise;
  private events_?: TraceEvents;
  private dynEvents_?: DynEvents;
  private remotes_?: TraceRemotes;

  constructor(readonly kernel: Kernel) {
    this.ftrace = new Ftrace(kernel);
    this.clocks = makeTraceClocks(kernel.clock);
    this.errorLog = new ErrorLog(() => kernel.clock.now());
    this.tracers.register(nopTracer);
    this.tracers.onRegister.add((t) => {
      for (const tr of this.arrays()) tr.tracerRegistered(t);
    });
    this.ftraceTypes = registerFtraceEntries(this);
    initFtrace(this);
    // Registered after the function tracers, as the kernel's initcalls do (available_tracers: newest first).
    registerMmioTracer(this);
    registerBlkTracer(this);
    this.hwlat = registerHwlatTracer(this);
    this.osnoise = registerOsnoiseTracers(this);
    this.top = new TraceArray(this, '');
    this.printkTrace = this.top;
    kernel.tracePrintk = (task, ip, text) => recordTracePrintk(this, task, ip, text);
    if (this.top.options.has('copy_trace_marker')) this.markerCopies.add(this.top);
  }

  /** The top level and every instance. */
  *arrays(): IterableIterator<TraceArray> {
    if (this.top) yield this.top;
    yield* this.instances.values();
  }

  /**
   * The trace event subsystem: event types in the kernel's list order, each
   * array's event state, addEventType() / removeEventType() for dynamic events
   * (made, with the static catalogue, on first use).
   */
  /** tracing_thresh, in microseconds as written. */
  get tracingThresh(): number {
    return this.tracingThresh_;
  }

  set tracingThresh(us: number) {
    if (us === this.tracingThresh_) return;
    this.tracingThresh_ = us;
    // A function_graph tracer with tracing off is quiet only without a threshold.
    this.kernel.quietnessChanged();
  }

  get events(): TraceEvents {
    return (this.events_ ??= new TraceEvents(this));
  }

  /** The dynamic events (dynamic_events, kprobe_events, ...), made on first use. */
  get dynEvents(): DynEvents {
    return (this.dynEvents_ ??= new DynEvents(this));
  }

  /** The trace remotes (remotes/), made on first use. */
  get remotes(): TraceRemotes {
    return (this.remotes_ ??= new TraceRemotes(this.kernel, this.clocks.find((c) => c.name === 'global')!));
  }

  /** mkdir instances/NAME. */
  createInstance(name: string): TraceArray {
    if (this.instances.has(name)) fail('EEXIST');
    const tr = new TraceArray(this, name);
    this.instances.set(name, tr);
    return tr;
  }

  /**
   * rmdir instances/NAME (__remove_instance()): EBUSY while something holds
   * it; else everything the instance has is undone — its tracer, function
   * probes, events and triggers, ftrace ops and pid lists, what it registered
   * to follow tracers and event types, its error_log — and nothing shared
   * keeps it (or its buffers) any more.
   */
  removeInstance(name: string): void {
    const tr = this.instances.get(name);
    if (!tr) fail('ENODEV');
    if (tr.refs > 0 || (tr.lent?.() ?? 0) > 0 || tr.traceRef > 0) fail('EBUSY');
    this.instances.delete(name);
    if (this.printkTrace === tr) this.setPrintkTrace(this.top);
    this.markerCopies.delete(tr);
    tr.setNop();
    tr.ftrace.fa.probes.clear();
    this.events_?.removeArray(tr);
    tr.ftrace.destroy();
    this.errorLog.clear(tr);
  }

  /** update_printk_trace(): one trace array at a time has trace_printk_dest. */
  setPrintkTrace(tr: TraceArray): void {
    if (this.printkTrace === tr) return;
    this.printkTrace?.options.delete('trace_printk_dest');
    this.printkTrace = tr;
    tr.options.add('trace_printk_dest');
  }

  /**
   * Remembers the comm (and tgid) of the task that wrote a record, as the
   * kernel's sched_switch hook does once an event was committed: the output
   * then shows `comm-pid` instead of `<...>-pid`.
   */
  recordTaskInfo(pid: number): void {
    if (!pid) return;
    const last = this.lastTaskInfo;
    // The same task writing again with the same comm has nothing new to save.
    if (last && last.pid === pid && last.comm === this.lastComm && this.lastTaskInfoGen === this.taskInfoGen) return;
    const cmd = this.top.options.has('record-cmd');
    const tgid = this.cmdlines.tgidMapAllocated;
    if (!cmd && !tgid) return;
    const task = this.kernel.tasks.get(pid);
    if (!task) return;
    if (cmd) this.cmdlines.save(pid, task.comm);
    if (tgid) this.cmdlines.saveTgid(pid, task.tgid);
    this.lastTaskInfo = task;
    this.lastComm = task.comm;
    this.lastTaskInfoGen = this.taskInfoGen;
  }

  /** Forget the recording shortcut (the comm cache or the recording options changed). */
  taskInfoChanged(): void {
    this.taskInfoGen++;
  }

  private lastTaskInfo?: Task;
  private lastComm = '';
  private taskInfoGen = 0;
  private lastTaskInfoGen = -1;
}
