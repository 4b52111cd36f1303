/** The tracing subsystem as a whole: the top-level trace array and the instances. */
import { registerBlkTracer } from './blk_tracer.js';
import { registerMmioTracer } from './mmio_tracer.js';
import { fail } from '../kernel/errno.js';
import type { Kernel } from '../kernel/kernel.js';
import type { Task } from '../kernel/task.js';
import { ErrorLog } from './error_log.js';
import { EventRegistry } from './event_registry.js';
import { TraceEvents } from './events/trace_events.js';
import { initFtrace } from './ftrace/init.js';
import { registerFtraceEntries, type FtraceEntryTypes } from './ftrace_entries.js';
import { SavedCmdlines } from './saved_cmdlines.js';
import { TraceArray } from './trace_array.js';
import { makeTraceClocks, type TraceClock } from './trace_clock.js';
import { TracerRegistry, nopTracer } from './tracer.js';

export class Tracing {
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
  /** tracing_thresh, in microseconds as written. */
  tracingThresh = 0;
  /** README feature paragraphs subsystems have enabled (see src/tracefs/readme.ts). */
  readonly features = new Set<string>();
  /** The ftrace-internal event types this layer records (ftrace/print, ftrace/raw_data). */
  readonly ftraceTypes: FtraceEntryTypes;

  constructor(readonly kernel: Kernel) {
    this.clocks = makeTraceClocks(kernel.clock);
    this.errorLog = new ErrorLog(() => kernel.clock.now());
    this.tracers.register(nopTracer);
    this.tracers.onRegister.add((t) => {
      for (const tr of this.arrays()) tr.initTracerOptions(t);
    });
    this.ftraceTypes = registerFtraceEntries(this);
    initFtrace(this);
    // Registered after the function tracers, as the kernel's initcalls do (available_tracers: newest first).
    registerMmioTracer(this);
    registerBlkTracer(this);
    this.top = new TraceArray(this, '');
    this.printkTrace = this.top;
    if (this.top.options.has('copy_trace_marker')) this.markerCopies.add(this.top);
  }

  /** The top level and every instance. */
  *arrays(): IterableIterator<TraceArray> {
    if (this.top) yield this.top;
    yield* this.instances.values();
  }

  /**
   * The trace event subsystem: event types in the kernel's list order, each
   * array's event state, addEventType() / removeEventType() for dynamic events.
   */
  get events(): TraceEvents {
    return TraceEvents.of(this);
  }

  /** mkdir instances/NAME. */
  createInstance(name: string): TraceArray {
    if (this.instances.has(name)) fail('EEXIST');
    const tr = new TraceArray(this, name);
    this.instances.set(name, tr);
    return tr;
  }

  /** rmdir instances/NAME: EBUSY while something holds it. */
  removeInstance(name: string): void {
    const tr = this.instances.get(name);
    if (!tr) fail('ENODEV');
    if (tr.refs > 0 || tr.traceRef > 0) fail('EBUSY');
    tr.setNop();
    this.markerCopies.delete(tr);
    if (this.printkTrace === tr) this.setPrintkTrace(this.top);
    this.instances.delete(name);
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
