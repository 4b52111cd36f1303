/**
 * The trace event subsystem (trace_events.c): the list of event types in the
 * kernel's order, each trace array's event state, and the binding of enabled
 * events to their tracepoints — a probe that builds the record once and hands
 * it to every trace array where the event is on.
 */
import type { ExecContext } from '../../kernel/context.js';
import { fail } from '../../kernel/errno.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { KernelProfile } from '../../kernel/profiles/profile.js';
import type { SymbolTable } from '../../kernel/symbols.js';
import { Task } from '../../kernel/task.js';
import type { TracepointProbe, TracepointRegistry } from '../../kernel/tracepoint.js';
import { EVENT_FL_IGNORE_ENABLE, EVENT_FL_NO_REG, type TraceEventType } from '../event_type.js';
import type { TraceArray } from '../trace_array.js';
import type { Tracing } from '../tracing.js';
import { ArrayEvents } from './array_events.js';
import { hasOption } from './array_hooks.js';
import { type InternalEventSpec, loadCatalogue } from './catalogue.js';
import { addOsnoiseEvents } from '../osnoise/osnoise_events.js';
import { addPreemptIrqEvents } from './preemptirq_events.js';
import { followModuleEvents } from './module_events.js';
import type { EventFile, PendingRecord } from './event_file.js';
import type { FilterInput } from './filter/predicate.js';
import type { PrintEnv } from './print_fmt/value.js';
import { pointerHasher } from './print_fmt/vsprintf.js';
import { KernelStringTable, RecordBuilder } from './record_builder.js';
import { StaticEventType } from './static_event.js';
import { createStaticEventType } from './static_events.js';
import { SyscallTracepoints } from './syscall_records.js';
import { HistState, histCommand } from './hist/hist_trigger.js';
import { standardTriggerCommands } from './triggers/commands.js';
import { callPostTriggers, callTriggers } from './triggers/trigger.js';

/** trace_event_class->reg(): attach / detach the event's source when the first / last array enables it. */
export interface EventRegistration {
  /** May refuse (throw a KernelError): the enable write then fails and nothing changes. */
  register(): void;
  unregister(): void;
  /** Each trace array's file going on or off (probe events link files; eprobes attach per array). May refuse when going on. */
  fileEnabled?(file: EventFile, on: boolean): void;
}

/** Who follows the list of event types (eventfs keeps a directory per type). */
export interface EventTypeListener {
  added?(type: TraceEventType): void;
  removed?(type: TraceEventType): void;
  /** False while something (an open file) holds the type. */
  canRemove?(type: TraceEventType): boolean;
}

/** How the event layer reads memory (user strings for filters and syscall records, kernel strings for %s). */
interface MemoryAccess {
  readKernel?(addr: bigint, len: number): Buffer | undefined;
  readUser?(task: Task, addr: bigint, len: number): Buffer | undefined;
}

function cString(b: Buffer | undefined, max = 4096): Buffer | undefined {
  if (!b) return undefined;
  const z = b.indexOf(0);
  return z < 0 ? b.subarray(0, max) : b.subarray(0, z);
}

export class TraceEvents {
  readonly profile: KernelProfile;
  readonly kernel: Kernel;
  readonly strings = new KernelStringTable();
  readonly triggerCommands = standardTriggerCommands();
  /** What the hist triggers of this tracing instance share. */
  readonly hist: HistState;
  /** ftrace/* internal events as the catalogue knows them (their formats and event directory files). */
  readonly internal: ReadonlyMap<string, InternalEventSpec>;
  memory: MemoryAccess;
  /** %p's hashed ids: keyed by the kernel's seed, so a run is reproducible. */
  readonly hashPointer: (addr: bigint) => bigint;
  private order: TraceEventType[] = [];
  /** __TRACE_LAST_TYPE: where TRACE_EVENT ids start. */
  private readonly firstEventId: number;
  private readonly arrays = new Map<TraceArray, ArrayEvents>();
  private readonly active = new Map<TraceEventType, Set<EventFile>>();
  private readonly regs = new Map<TraceEventType, EventRegistration>();
  private readonly runtime = new WeakSet<TraceEventType>();
  private readonly builders = new Map<TraceEventType, RecordBuilder>();
  private readonly syscalls: SyscallTracepoints;
  private forkProbes?: { fork: TracepointProbe<never>; free: TracepointProbe<never> };

  constructor(readonly tracing: Tracing) {
    this.kernel = tracing.kernel;
    this.profile = tracing.kernel.profile;
    this.memory = defaultMemory(tracing.kernel);
    this.hashPointer = pointerHasher(BigInt.asUintN(64, BigInt(tracing.kernel.seed) * 0x9e3779b97f4a7c15n + 0x632be59bd9b4e019n));
    const cat = loadCatalogue(this.profile.dataSeries);
    this.firstEventId = Math.min(...cat.events.map((e) => e.id));
    this.internal = new Map(cat.internal.map((e) => [e.name, e]));
    this.syscalls = new SyscallTracepoints(this);
    // README paragraphs of set_event, events/ and the trigger file.
    tracing.features.add('events');
    tracing.features.add('event_triggers');
    tracing.features.add('hist_triggers');
    this.hist = new HistState(tracing);
    this.triggerCommands.register(histCommand(this.hist));
    const env = () => this.printEnv();
    for (const spec of cat.events) {
      if (tracing.eventTypes.byId(spec.id) || tracing.eventTypes.get(spec.system, spec.name)) continue;
      const type = tracing.eventTypes.register(createStaticEventType(spec, env, this.profile));
      this.order.push(type);
      this.regs.set(type, this.syscalls.registrationFor(type) ?? this.tracepointRegistration(type));
    }
    followModuleEvents(this, env);
    addOsnoiseEvents(this, env);
    addPreemptIrqEvents(this, env);
    // ftrace/* events the core did not define (hwlat, mmiotrace...): their directories still show their formats.
    for (const spec of cat.internal) {
      if (tracing.eventTypes.byId(spec.id) || tracing.eventTypes.get(spec.system, spec.name)) continue;
      const flags = EVENT_FL_IGNORE_ENABLE | (spec.files.includes('id') ? 0 : EVENT_FL_NO_REG);
      tracing.eventTypes.register(new StaticEventType(spec, env, undefined, flags));
    }
  }

  get nrCpus(): number {
    return this.kernel.nrCpus;
  }

  get tracepoints(): TracepointRegistry {
    return this.kernel.tracepoints;
  }

  symbols(): SymbolTable | undefined {
    return this.kernel.symbols;
  }

  /** Every event type in the kernel's list order (available_events, set_event). */
  types(): readonly TraceEventType[] {
    return this.order;
  }

  find(system: string, name: string): TraceEventType | undefined {
    return this.tracing.eventTypes.get(system, name);
  }

  array(tr: TraceArray): ArrayEvents {
    let ae = this.arrays.get(tr);
    if (!ae) {
      this.arrays.set(tr, (ae = new ArrayEvents(this, tr)));
      this.hookMarker(ae);
    }
    return ae;
  }

  /** trace_marker writes run the triggers of ftrace/print (with the text NUL-ended, before its newline). */
  private hookMarker(ae: ArrayEvents): void {
    const print = this.tracing.ftraceTypes.print;
    ae.tr.markerHook = (entry, cpu) => {
      const f = ae.peek(print);
      if (!f?.triggers.length) return;
      const pid = entry.readInt32LE(4);
      const task = this.kernel.tasks.get(pid) ?? Object.assign(new Task(pid, pid, '<...>', 0), { cpu });
      const ctx: ExecContext = { task, cpu, flags: entry[2], preemptCount: entry[3] };
      const post = callTriggers(f, entry, ctx);
      if (post) callPostTriggers(f, post, ctx);
    };
  }

  /** An instance is removed: everything it had on goes off, and its events/ tree no longer follows the types. */
  removeArray(tr: TraceArray): void {
    const ae = this.arrays.get(tr);
    if (!ae) return;
    ae.teardown();
    this.arrays.delete(tr);
  }

  /** The files of `type` in the arrays that ever used it. */
  filesOf(type: TraceEventType): EventFile[] {
    const out: EventFile[] = [];
    for (const ae of this.arrays.values()) {
      const f = ae.peek(type);
      if (f) out.push(f);
    }
    return out;
  }

  // ------------------------------------------------------------ types

  /**
   * Adds an event type made at run time (kprobe, fprobe, synthetic...): it
   * gets its directory in every events/ tree, first in the list as on the
   * kernel. `reg` attaches its source while some array has it enabled.
   */
  addEventType(type: TraceEventType, reg?: EventRegistration): TraceEventType {
    if (this.find(type.system, type.name)) fail('EEXIST');
    this.runtime.add(type);
    this.tracing.eventTypes.register(type);
    this.order = [type, ...this.order];
    if (reg) this.regs.set(type, reg);
    for (const ae of this.arrays.values()) ae.typeListener?.added?.(type);
    return type;
  }

  /** Every trace array's event state made so far. */
  allArrays(): IterableIterator<ArrayEvents> {
    return this.arrays.values();
  }

  /** Whether `type` could be removed once switched off (no soft mode, no triggers, no open file). */
  removableWhenOff(type: TraceEventType): boolean {
    for (const ae of this.arrays.values()) {
      const f = ae.peek(type);
      if (f && (f.smRef > 0 || f.triggers.length > 0)) return false;
      if (ae.typeListener?.canRemove && !ae.typeListener.canRemove(type)) return false;
    }
    return true;
  }

  /** Whether removeEventType() would succeed now (not enabled, no triggers, no open file). */
  removable(type: TraceEventType): boolean {
    for (const ae of this.arrays.values()) if (ae.busy(type)) return false;
    for (const ae of this.arrays.values()) if (ae.typeListener?.canRemove && !ae.typeListener.canRemove(type)) return false;
    return true;
  }

  /** Whether `type` was added at run time (a probe, a synthetic or a module's event), not built in. */
  isRuntime(type: TraceEventType): boolean {
    return this.runtime.has(type);
  }

  /** Removes a run-time event type; EBUSY while enabled, used by triggers, or open. */
  removeEventType(type: TraceEventType): void {
    for (const ae of this.arrays.values()) if (ae.busy(type)) fail('EBUSY');
    for (const ae of this.arrays.values()) if (ae.typeListener?.canRemove && !ae.typeListener.canRemove(type)) fail('EBUSY');
    for (const ae of this.arrays.values()) ae.forget(type);
    this.tracing.eventTypes.unregister(type);
    this.order = this.order.filter((t) => t !== type);
    this.regs.delete(type);
    this.builders.delete(type);
    this.active.delete(type);
    for (const ae of this.arrays.values()) ae.typeListener?.removed?.(type);
  }

  /**
   * The id a new dynamic event gets: the lowest free one from the first
   * TRACE_EVENT id on (the kernel's IDA), so removed events' ids come back.
   */
  allocEventId(): number {
    let id = this.firstEventId;
    while (this.tracing.eventTypes.byId(id)) id++;
    return id;
  }

  /** Whether `type` is on in some trace array (a dynamic event's source then stays armed). */
  isActive(type: TraceEventType): boolean {
    return (this.active.get(type)?.size ?? 0) > 0;
  }

  moduleOf(t: TraceEventType): string | undefined {
    return t.module;
  }

  moduleLoaded(module: string): boolean {
    return this.kernel.symbols.hasModule(module);
  }


  // ------------------------------------------------------------ recording

  /** An event file went on or off: the first / last one attaches / detaches the event's source. */
  fileEnabledChanged(file: EventFile): void {
    let set = this.active.get(file.type);
    const reg = this.regs.get(file.type);
    if (file.enabled) {
      if (!set) this.active.set(file.type, (set = new Set()));
      const first = set.size === 0;
      reg?.fileEnabled?.(file, true);
      set.add(file);
      if (first && reg) {
        try {
          reg.register();
        } catch (e) {
          set.delete(file);
          reg.fileEnabled?.(file, false);
          throw e;
        }
      }
    } else if (set?.delete(file)) {
      if (set.size === 0) reg?.unregister();
      reg?.fileEnabled?.(file, false);
    }
    // Another array's file may make an attached probe quiet or loud.
    this.tracepoints.probesChanged();
  }

  /** The files where `type` is on, in no particular order. */
  activeFiles(type: TraceEventType): ReadonlySet<EventFile> | undefined {
    return this.active.get(type);
  }

  /** Records an event built from tracepoint arguments keyed by field name into every array that has it on. */
  fire(type: TraceEventType, ctx: ExecContext, args: Readonly<Record<string, unknown>>): void {
    const files = this.active.get(type);
    if (!files?.size) return;
    let data: Buffer | undefined;
    const p: PendingRecord = { ctx, args, data: () => (data ??= this.builder(type).build(ctx, args)) };
    for (const f of [...files]) f.handle(p);
  }

  /** Records a ready-made record (dynamic events, the core's ftrace events) into every array that has it on. */
  emit(type: TraceEventType, ctx: ExecContext, data: Buffer | (() => Buffer)): void {
    const files = this.active.get(type);
    if (!files?.size) return;
    let buf: Buffer | undefined;
    const p: PendingRecord = { ctx, data: () => (buf ??= typeof data === 'function' ? data() : data) };
    for (const f of [...files]) f.handle(p);
  }

  builder(type: TraceEventType): RecordBuilder {
    let b = this.builders.get(type);
    if (!b) this.builders.set(type, (b = new RecordBuilder(type.id, type.fields, this.strings)));
    return b;
  }

  /** Whether firing `type` now leaves nothing in any array that has it on. */
  quiet(type: TraceEventType): boolean {
    const files = this.active.get(type);
    if (files) for (const f of files) if (!f.quiet) return false;
    return true;
  }

  /** Its tracepoint's probe while some array has `type` on. */
  tracepointRegistration(type: TraceEventType): EventRegistration {
    const probe: TracepointProbe<Readonly<Record<string, unknown>>> = (ctx, args) => this.fire(type, ctx, args);
    return {
      register: () => this.tracepoints.register(type.name, probe, undefined, () => this.quiet(type)),
      unregister: () => this.tracepoints.unregister(type.name, probe),
    };
  }

  // ------------------------------------------------------------ pid lists

  /** set_event_pid / set_event_notrace_pid changed somewhere: follow forks while any list exists. */
  pidListsChanged(_ae?: ArrayEvents): void {
    const tps = this.tracepoints;
    const any = [...this.arrays.values()].some((a) => a.pids.active);
    if (any && !this.forkProbes) {
      const fork: TracepointProbe<Readonly<Record<string, unknown>>> = (_ctx, args) => {
        for (const a of this.arrays.values()) {
          if (a.pids.active && hasOption(a.tr, 'event-fork')) a.pids.fork(Number(args.parent_pid), Number(args.child_pid));
        }
      };
      const free: TracepointProbe<Readonly<Record<string, unknown>>> = (_ctx, args) => {
        for (const a of this.arrays.values()) {
          if (a.pids.active && hasOption(a.tr, 'event-fork')) a.pids.exit(Number(args.pid));
        }
      };
      // The child joins after the fork event itself is recorded; a freed task leaves before its event.
      tps.register('sched_process_fork', fork, -(1 << 30));
      tps.register('sched_process_free', free, 1 << 30);
      this.forkProbes = { fork: fork as TracepointProbe<never>, free: free as TracepointProbe<never> };
    } else if (!any && this.forkProbes) {
      tps.unregister('sched_process_fork', this.forkProbes.fork);
      tps.unregister('sched_process_free', this.forkProbes.free);
      this.forkProbes = undefined;
    }
  }

  // ------------------------------------------------------------ memory

  /** What filters may read: the CPU, the task's comm, user and kernel strings. */
  filterInput(data: Buffer, ctx: ExecContext): FilterInput {
    return {
      data,
      cpu: ctx.cpu,
      comm: ctx.task.comm,
      readUserString: (addr) => cString(this.memory.readUser?.(ctx.task, addr, 1024), 1024),
      readKernelString: (addr) => {
        const s = this.strings.stringAt(addr);
        return s !== undefined ? Buffer.from(s, 'latin1') : cString(this.memory.readKernel?.(addr, 1024), 1024);
      },
    };
  }

  printEnv(): PrintEnv {
    return {
      symbols: this.symbols(),
      hashPointer: this.hashPointer,
      readKernelString: (addr) => this.strings.stringAt(addr) ?? cString(this.memory.readKernel?.(addr, 4096))?.toString('latin1'),
      readKernel: (addr, len) => this.memory.readKernel?.(addr, len),
      // jiffies' value; _stext's address (an array's name is its address in C)
      variable: (name) => (name === 'jiffies' ? this.jiffies() : name === '_stext' ? this.kernel.symbolAddr('_stext') : undefined),
    };
  }

  /** jiffies now: HZ=250 counting from INITIAL_JIFFIES (five minutes before the 32-bit wrap) at boot. */
  jiffies(): bigint {
    return 4294892296n + (this.kernel.clock.nowNs() * 250n) / 1000000000n;
  }
}

/** Kernel memory is the kernel's address space, user memory the task's `mm` (kernel threads have none). */
function defaultMemory(kernel: Kernel): MemoryAccess {
  return {
    readKernel: (addr, len) => kernel.kernelMemory.read(addr, len),
    readUser: (task, addr, len) => {
      const mm = task.mm;
      if (!mm) return undefined;
      // Shorter reads near the end of a mapping: take what is mapped.
      for (let n = len; n > 0; n = n >> 1) {
        const b = mm.read(addr, n);
        if (b) return b;
      }
      return undefined;
    },
  };
}
