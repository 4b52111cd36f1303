/**
 * A trace array: the top-level tracing state or one instance (instances/NAME),
 * each with its own buffers, tracer, options and event settings.
 */
import type { ExecContext } from '../kernel/context.js';
import { fail } from '../kernel/errno.js';
import type { KernelProfile } from '../kernel/profiles/profile.js';
import type { Task } from '../kernel/task.js';
import { ArrayFtrace } from './ftrace/array_ftrace.js';
import { recordStack, stackEntries } from './ftrace/kernel_stack.js';
import { ALL_CPUS, RingBuffer } from './ring_buffer.js';
import { showClocks } from './trace_clock.js';
import { coreOptions, type CoreOption } from './trace_options.js';
import { nopTracer, type Tracer } from './tracer.js';
import { traceArrayPuts } from './trace_puts.js';
import type { Tracing } from './tracing.js';

/** Per-CPU buffer size a trace array grows to on first use (TRACE_BUF_SIZE_DEFAULT: 1408 KiB). */
export const TRACE_BUF_SIZE_DEFAULT = 1441792;

/** The per-CPU data of the snapshot buffer that a new maximum fills in (__update_max_tr()), as the latency header prints it. */
export interface MaxTrace {
  /** The CPU whose section made the maximum (max_buf->cpu). */
  cpu: number;
  /** The latency (ns). */
  latency: number;
  comm: string;
  pid: number;
  nice: number;
  policy: number;
  rtPriority: number;
  /** Where the section started and ended (irqsoff family); 0n for the wakeup tracers. */
  criticalStart: bigint;
  criticalEnd: bigint;
}

/** Where a section being timed stands: when it started (the snapshot's time_start) and its edges. */
export interface MaxSection {
  timestamp: number;
  criticalStart: bigint;
  criticalEnd: bigint;
}

export class TraceArray {
  /** Open files and other users that keep an instance from being removed. */
  refs = 0;
  /** Open files of the instance answered outside the tracefs (a FUSE cache's). */
  lent?: () => number;
  /** Readers of trace_pipe / trace_pipe_raw: the tracer cannot change meanwhile. */
  traceRef = 0;
  /** The live buffer (array_buffer). Swapped with the snapshot buffer by a snapshot. */
  buffer: RingBuffer;
  /** The spare buffer of `snapshot` (snapshot_buffer), tiny until allocated. */
  snapshotBuffer: RingBuffer;
  allocatedSnapshot = false;
  /** Per-CPU sizes as last set (trace_array_cpu.entries), in bytes: what buffer_size_kb shows. */
  readonly bufferEntries: number[];
  readonly snapshotEntries: number[];
  /** Trace-clock time of the last reset of each buffer (array_buffer.time_start). */
  timeStart = 0;
  snapshotTimeStart = 0;
  /** The buffers were sized for use (or explicitly); until then buffer_size_kb says "(expanded: ...)". */
  expanded: boolean;
  clockId = 0;
  tracer: Tracer = nopTracer;
  /** Enabled core options. */
  readonly options = new Set<string>();
  /** Enabled tracer options, by tracer name. */
  readonly tracerOptions = new Map<string, Set<string>>();
  /** tracing_cpumask: CPUs that record. */
  readonly cpumask: boolean[];
  bufferPercent = 50;
  /** tracing_thresh is global but kept here for the top level; instances ignore it. */
  /** tracing_stop_tr() nesting: recording is off while > 0. */
  stopCount = 0;
  private absRefs = 0;
  private _tracingOn = true;
  /** Called with each trace_marker record before its newline is added (ftrace/print triggers). */
  markerHook?: (entry: Buffer, cpu: number) => void;
  /** Its function tracing: ftrace ops, filters, pid lists, function probes, the graph tracer's fgraph_ops. */
  readonly ftrace: ArrayFtrace;
  /** Told of each tracer registered later (the tracefs adds its option files). */
  readonly tracerWatchers = new Set<(t: Tracer) => void>();
  /** tr->clear_trace: a dynamic event that was on here was removed; its buffers are reset after the command. */
  clearTrace = false;
  /** tracing_max_latency, in ns (the latency tracers' maximum so far). */
  maxLatency = 0;
  /** What the snapshot buffer's maximum trace was taken of (its array_buffer's data), once one was. */
  maxTrace?: MaxTrace;

  constructor(
    readonly tracing: Tracing,
    /** Instance name; '' for the top level. */
    readonly name: string,
  ) {
    const nr = tracing.kernel.nrCpus;
    const top = tracing.top as TraceArray | undefined;
    // The top level starts minimal and grows on first use; instances start full size.
    const size = this.isTop ? 1 : TRACE_BUF_SIZE_DEFAULT;
    this.expanded = !this.isTop;
    const clock = tracing.clocks[this.clockId];
    this.buffer = new RingBuffer(nr, size, clock.now);
    this.snapshotBuffer = new RingBuffer(nr, 1, clock.now);
    this.bufferEntries = Array.from({ length: nr }, (_, c) => this.buffer.size(c));
    this.snapshotEntries = Array.from({ length: nr }, () => 1);
    this.cpumask = Array.from({ length: nr }, () => true);
    for (const o of this.coreOptions()) {
      const inherited = top && !this.isTop ? top.options.has(o.name) && !o.zeroedInInstances : o.default;
      if (inherited) this.options.add(o.name);
    }
    this.buffer.overwrite = this.snapshotBuffer.overwrite = this.options.has('overwrite');
    for (const t of tracing.tracers.all()) this.initTracerOptions(t);
    this.ftrace = new ArrayFtrace(this);
  }

  get isTop(): boolean {
    return this.name === '';
  }

  /** The kernel series' profile. */
  get profile(): KernelProfile {
    return this.tracing.kernel.profile;
  }

  // ------------------------------------------------------------------ recording

  /** tracing_on: whether the buffers record. */
  get tracingOn(): boolean {
    return this._tracingOn;
  }

  set tracingOn(on: boolean) {
    if (on === this._tracingOn) return;
    this._tracingOn = on;
    this.silenceChanged();
    if (on) this.tracer.start?.(this);
    else {
      this.tracer.stop?.(this);
      this.buffer.wakeWaiters();
    }
  }

  /**
   * tracer_tracing_on() / tracer_tracing_off(): recording on or off without
   * the tracer's start/stop (what traceon/traceoff triggers and probes do).
   */
  setTracerTracing(on: boolean): void {
    if (on === this._tracingOn) return;
    this._tracingOn = on;
    this.silenceChanged();
    if (!on) this.buffer.wakeWaiters();
  }

  /** __trace_stack(): a kernel_stack record of the running task's call stack (the stacktrace option and trigger). */
  recordStack(ctx: ExecContext, _skip = 0): void {
    recordStack(this, ctx, stackEntries(ctx.task));
  }

  /**
   * Nothing is recorded into this array on any CPU now (tracing_on is 0):
   * its tracers' callbacks find their reservation refused. A pause (an
   * open `trace`, a resize) does not count: it lasts a request or two, and
   * hooks going quiet and loud again each time would only make the host's
   * watchers switch back and forth.
   */
  get silent(): boolean {
    return !this._tracingOn;
  }

  /** Hooks and event probes that only record here may have turned quiet or loud: what is known of who sees a call tree is stale. */
  private silenceChanged(): void {
    this.tracing.kernel.quietnessChanged();
  }

  /** Whether an event on `cpu` would be recorded now. */
  recording(cpu: number): boolean {
    return this._tracingOn && this.stopCount === 0 && this.cpumask[cpu] === true;
  }

  /**
   * Writes one event record (common header included) into this array's buffer
   * of `cpu`. Returns false when it is not recorded (tracing off, CPU masked
   * out, or dropped by a full buffer in non-overwrite mode).
   */
  record(cpu: number, data: Buffer): boolean {
    if (!this._tracingOn || this.stopCount !== 0 || this.cpumask[cpu] !== true) return false;
    if (!this.buffer.write(cpu, data)) return false;
    if (data.length >= 8) this.tracing.recordTaskInfo(data.readInt32LE(4));
    return true;
  }

  /**
   * Reserves `length` bytes for a record on `cpu` to be filled in place
   * (ring_buffer_lock_reserve()); pair with commit(cpu). Null when not recorded.
   */
  reserve(cpu: number, length: number): { buf: Buffer; off: number } | null {
    if (!this._tracingOn || this.stopCount !== 0 || this.cpumask[cpu] !== true) return null;
    return this.buffer.reserve(cpu, length);
  }

  /** Commits the event reserved on `buffer` (the array's buffer then: a snapshot may have swapped it out since). */
  commit(cpu: number, pid: number, buffer = this.buffer): void {
    buffer.commit(cpu);
    this.tracing.recordTaskInfo(pid);
  }

  /** tracing_stop_tr() / tracing_start_tr(): recording paused (resize, pause-on-trace). */
  stop(): void {
    this.stopCount++;
  }

  start(): void {
    if (this.stopCount > 0) this.stopCount--;
  }

  // ------------------------------------------------------------------ buffers

  /** tracing_reset_online_cpus() / tracing_reset_cpu(): empties the live buffer. */
  reset(cpu = ALL_CPUS): void {
    if (cpu === ALL_CPUS) this.timeStart = this.buffer.now();
    this.buffer.reset(cpu);
  }

  /** tracing_update_buffers(): the first real use grows the buffers to their default size. */
  updateBuffers(): void {
    if (!this.expanded) this.resize(TRACE_BUF_SIZE_DEFAULT);
  }

  /** tracing_resize_ring_buffer(): `size` bytes per CPU, one CPU or all. */
  resize(size: number, cpu = ALL_CPUS): void {
    this.expanded = true;
    this.stop();
    try {
      this.buffer.resize(size, cpu);
      if (this.allocatedSnapshot) {
        this.snapshotBuffer.resize(size, cpu);
        this.updateEntries(this.snapshotBuffer, this.snapshotEntries, cpu);
      }
      this.updateEntries(this.buffer, this.bufferEntries, cpu);
    } finally {
      this.start();
    }
  }

  private updateEntries(rb: RingBuffer, entries: number[], cpu: number): void {
    for (let c = 0; c < entries.length; c++) if (cpu === ALL_CPUS || c === cpu) entries[c] = rb.size(c);
  }

  /** buffer_subbuf_size_kb write: sub-buffers of 4 KiB << order. */
  setSubbufOrder(order: number): void {
    if (order < 0 || order > 7) fail('EINVAL');
    this.stop();
    try {
      this.buffer.setSubbufOrder(order);
      if (this.allocatedSnapshot) this.snapshotBuffer.setSubbufOrder(order);
    } finally {
      this.start();
    }
  }

  /** ring_buffer_set_time_stamp_abs(), reference counted (hist triggers using common_timestamp). */
  setTimeStampAbs(on: boolean): void {
    if (on) this.absRefs++;
    else if (this.absRefs > 0) this.absRefs--;
    const abs = this.absRefs > 0;
    this.buffer.absTimeStamps = abs;
    this.snapshotBuffer.absTimeStamps = abs;
  }

  get timeStampAbs(): boolean {
    return this.absRefs > 0;
  }

  // ------------------------------------------------------------------ clock

  get clock() {
    return this.tracing.clocks[this.clockId];
  }

  /** trace_clock write: a new clock resets the buffers (their times would not compare). */
  setClock(name: string): void {
    const i = this.tracing.clocks.findIndex((c) => c.name === name);
    if (i < 0) fail('EINVAL');
    this.clockId = i;
    const now = this.tracing.clocks[i].now;
    this.buffer.clock = now;
    this.snapshotBuffer.clock = now;
    this.reset();
    this.snapshotBuffer.reset();
    this.snapshotTimeStart = now();
  }

  showClock(): string {
    return showClocks(this.tracing.clocks, this.clockId);
  }

  // ------------------------------------------------------------------ tracers

  /** current_tracer write (tracing_set_tracer()). */
  setTracer(name: string): void {
    this.updateBuffers();
    const t = this.tracing.tracers.get(name);
    if (!t || (!this.isTop && !t.allowInstances)) fail('EINVAL');
    if (t === this.tracer) return;
    if (this.traceRef > 0) fail('EBUSY');
    this.tracer.reset(this);
    const hadMax = this.tracer.usesSnapshot === true;
    this.tracer = nopTracer;
    // A latency tracer's maximum lives in the snapshot buffer: allocated while one is current.
    if (hadMax && !t.usesSnapshot) this.freeSnapshot();
    if (!hadMax && t.usesSnapshot) this.allocSnapshot();
    // tracer_init(): a new tracer starts from empty buffers.
    this.reset();
    try {
      t.init(this);
    } catch (e) {
      if (t.usesSnapshot) this.freeSnapshot();
      throw e;
    }
    this.tracer = t;
  }

  /** Back to nop (instance removal). */
  setNop(): void {
    if (this.tracer === nopTracer) return;
    this.tracer.reset(this);
    this.tracer = nopTracer;
  }

  /** A tracer was registered: its options get their defaults here, and the watchers hear of it. */
  tracerRegistered(t: Tracer): void {
    this.initTracerOptions(t);
    for (const w of this.tracerWatchers) w(t);
  }

  private initTracerOptions(t: Tracer): void {
    if (this.tracerOptions.has(t.name)) return;
    this.tracerOptions.set(t.name, new Set((t.options ?? []).filter((o) => o.default).map((o) => o.name)));
  }

  // ------------------------------------------------------------------ options

  coreOptions(): readonly CoreOption[] {
    return coreOptions(this.profile, this.tracing.kernel.features);
  }

  /** A core option or an option of the current tracer. */
  option(name: string): boolean {
    return this.options.has(name) || (this.tracerOptions.get(this.tracer.name)?.has(name) ?? false);
  }

  /** trace_options content: core options, then the current tracer's. */
  showOptions(): string {
    let out = '';
    for (const o of this.coreOptions()) out += `${this.options.has(o.name) ? '' : 'no'}${o.name}\n`;
    const mine = this.tracerOptions.get(this.tracer.name);
    for (const o of this.tracer.options ?? []) out += `${mine?.has(o.name) ? '' : 'no'}${o.name}\n`;
    return out;
  }

  /** trace_set_options(): a core option, else an option of the current tracer; EINVAL if neither. */
  setOptionByName(name: string, on: boolean): void {
    if (this.coreOptions().some((o) => o.name === name)) return this.setCoreOption(name, on);
    if (this.tracer.options?.some((o) => o.name === name)) return this.setTracerOption(this.tracer, name, on);
    fail('EINVAL');
  }

  /** set_tracer_flag(). */
  setCoreOption(name: string, on: boolean): void {
    if (this.options.has(name) === on) return;
    if (this.tracer.coreOptionChanging && !this.tracer.coreOptionChanging(this, name, on)) fail('EINVAL');
    const tracing = this.tracing;
    switch (name) {
      case 'trace_printk_dest':
        if (on) tracing.setPrintkTrace(this);
        else {
          if (tracing.printkTrace === tracing.top) fail('EINVAL');
          if (tracing.printkTrace === this) tracing.setPrintkTrace(tracing.top);
        }
        return;
      case 'copy_trace_marker':
        if (on) tracing.markerCopies.add(this);
        else tracing.markerCopies.delete(this);
        break;
      case 'record-tgid':
        tracing.cmdlines.allocTgidMap();
        tracing.taskInfoChanged();
        break;
      case 'record-cmd':
        tracing.taskInfoChanged();
        break;
      case 'overwrite':
        this.buffer.overwrite = on;
        this.snapshotBuffer.overwrite = on;
        break;
      case 'function-fork':
        // ftrace_pid_follow_fork()
        this.ftrace.fa.followFork(on);
        break;
    }
    if (on) this.options.add(name);
    else this.options.delete(name);
  }

  /** __set_tracer_option(): the tracer may refuse. */
  setTracerOption(t: Tracer, name: string, on: boolean): void {
    const set = this.tracerOptions.get(t.name) ?? new Set<string>();
    this.tracerOptions.set(t.name, set);
    if (set.has(name) === on) return;
    t.setOption?.(this, name, on);
    if (on) set.add(name);
    else set.delete(name);
  }

  // ------------------------------------------------------------------ cpumask

  /** tracing_cpumask write. */
  setCpumask(mask: boolean[]): void {
    for (let c = 0; c < this.cpumask.length; c++) this.cpumask[c] = mask[c] === true;
  }

  // ------------------------------------------------------------------ snapshot

  /** tracing_alloc_snapshot_instance(): the spare buffer gets the live one's geometry. */
  allocSnapshot(): void {
    if (this.allocatedSnapshot) return;
    this.snapshotBuffer.setSubbufOrder(this.buffer.subbufOrder);
    this.duplicateSizes();
    this.allocatedSnapshot = true;
  }

  private duplicateSizes(): void {
    for (let c = 0; c < this.bufferEntries.length; c++) {
      this.snapshotBuffer.resize(this.bufferEntries[c], c);
      this.snapshotEntries[c] = this.bufferEntries[c];
    }
  }

  /** free_snapshot(): back to a minimal spare buffer. */
  freeSnapshot(): void {
    if (!this.allocatedSnapshot) return;
    this.snapshotBuffer.setSubbufOrder(0);
    this.snapshotBuffer.resize(1);
    this.snapshotEntries.fill(1);
    this.snapshotTimeStart = this.snapshotBuffer.now();
    this.snapshotBuffer.reset();
    this.allocatedSnapshot = false;
  }

  /** `echo 1 > snapshot`: allocate if needed, then swap the live and spare buffers. */
  takeSnapshot(): void {
    if (this.allocatedSnapshot) this.duplicateSizes();
    this.allocSnapshot();
    this.swapSnapshot();
  }

  /** update_max_tr(): the spare becomes live and the live one the snapshot (nothing while stopped). */
  swapSnapshot(): void {
    if (this.stopCount || !this.allocatedSnapshot) return;
    const live = this.buffer;
    this.buffer = this.snapshotBuffer;
    this.snapshotBuffer = live;
    this.snapshotTimeStart = 0;
    this.buffer.wakeWaiters();
  }

  /**
   * tracing_snapshot_instance(): a snapshot taken from inside the kernel (the
   * snapshot trigger, a hist action). Without a spare buffer it says so in
   * the trace and stops tracing.
   */
  snapshotFromKernel(ctx: ExecContext): void {
    const func = 'tracing_snapshot_instance_cond';
    if (!this.allocatedSnapshot) {
      traceArrayPuts(this, func, '*** SNAPSHOT NOT ALLOCATED ***\n', ctx);
      traceArrayPuts(this, func, '*** stopping trace here!   ***\n', ctx);
      this.tracingOn = false;
      return;
    }
    if (this.tracer.usesSnapshot) {
      traceArrayPuts(this, func, '*** LATENCY TRACER ACTIVE ***\n', ctx);
      traceArrayPuts(this, func, '*** Can not use snapshot (sorry) ***\n', ctx);
      return;
    }
    this.swapSnapshot();
  }

  /**
   * update_max_tr(): a new maximum — the live buffer becomes the snapshot
   * (the whole buffer, every CPU, where the kernel swaps only the CPU's for
   * the irqsoff family) and what made it is remembered for the header.
   */
  updateMaxTr(task: Task, cpu: number, section: MaxSection): void {
    if (this.stopCount || !this.allocatedSnapshot) return;
    const live = this.buffer;
    this.buffer = this.snapshotBuffer;
    this.snapshotBuffer = live;
    this.snapshotTimeStart = section.timestamp;
    const rt = task.prio < 100 && task.prio >= 0;
    this.maxTrace = {
      cpu,
      latency: this.maxLatency,
      comm: task.comm,
      pid: task.pid,
      nice: rt ? 0 : task.prio - 120,
      policy: task.policy,
      rtPriority: rt ? 99 - task.prio : 0,
      criticalStart: section.criticalStart,
      criticalEnd: section.criticalEnd,
    };
    this.tracing.cmdlines.save(task.pid, task.comm);
    this.snapshotBuffer.wakeWaiters();
  }

  /** `echo 2 > snapshot`: empties the snapshot, keeping it allocated. */
  clearSnapshot(cpu = ALL_CPUS): void {
    if (!this.allocatedSnapshot) return;
    if (cpu === ALL_CPUS) this.snapshotTimeStart = this.snapshotBuffer.now();
    this.snapshotBuffer.reset(cpu);
  }
}
