/**
 * Dynamic events made live (trace_dynevent.c with trace_add_event_call() and
 * trace_remove_event_call()): the one registry of the tracing subsystem over
 * the kernel, each of its events a trace event type in every events/ tree
 * whose enabling arms the event's probes, and the control files' semantics
 * (error_log entries, busy events, the buffers reset after removals).
 */
import { mapBanner } from '../../kernel/banner.js';
import { fail } from '../../kernel/errno.js';
import type { Task } from '../../kernel/task.js';
import type { EventField, TraceEventType } from '../event_type.js';
import { E, FILTER_ERRORS, FilterCompileError, compileFilter } from '../events/filter/filter_parser.js';
import type { EventRegistration, TraceEvents } from '../events/trace_events.js';
import { kernelProbeEnv } from '../probe/kernel_env.js';
import type { EventView, ProbeEnv } from '../probe/probe_env.js';
import type { ErrorLogEntry } from '../probe/probe_log.js';
import { TraceProbeEvent } from '../probe/trace_probe.js';
import type { Tracing } from '../tracing.js';
import { hostStatPath } from '../../host/paths.js';
import { DynEventRegistry, type DynEventFile, type DynEventRuntime, type DynTraceEvent } from './trace_dynevent.js';
import { SynthEvent } from './trace_events_synth.js';
import { TraceKprobe } from './trace_kprobe.js';
import { TprobeStubCalls, TraceFprobe } from './trace_fprobe.js';
import { UprobeExecs } from './trace_uprobe.js';

/** The event-filter parser's verdict on an eprobe's `if` clause, as its error_log entry. */
export function checkEventFilter(te: TraceEvents, event: EventView, filter: string): ErrorLogEntry | null {
  try {
    compileFilter(filter, { fields: event.fields as EventField[], symbols: te.symbols(), profile: te.profile, isFunctionEvent: false, nrCpus: te.nrCpus });
    return null;
  } catch (e) {
    if (!(e instanceof FilterCompileError)) throw e;
    const loc = 'event filter parse error';
    if (e.pe.err > 0) return { loc, message: FILTER_ERRORS[e.pe.err], command: filter, pos: e.pe.pos };
    return { loc, message: FILTER_ERRORS[E.ERRNO], command: filter, pos: 0 };
  }
}

/** A static or ftrace event as the probe parsers see it. */
export function staticEventView(type: TraceEventType): EventView {
  return { system: type.system, name: type.name, fields: type.fields, kind: type.system === 'ftrace' ? 'ftrace' : 'static' };
}

export class DynEvents implements DynEventRuntime {
  readonly registry: DynEventRegistry;
  readonly env: ProbeEnv;
  readonly events: TraceEvents;
  readonly uprobes: UprobeExecs;
  readonly stubCalls = new TprobeStubCalls();
  /** The task writing to a control file now (the kernel work of adding an event runs in it). */
  private writer?: Task;
  /** How uprobe paths are looked up (the machine's file system; tests give their own). */
  statPath: ProbeEnv['statPath'] = hostStatPath;

  constructor(readonly tracing: Tracing) {
    const te = (this.events = tracing.events);
    const kernel = tracing.kernel;
    this.env = kernelProbeEnv(kernel, {
      findEvent: (system, name) => {
        const t = te.find(system, name);
        return t && !(t instanceof TraceProbeEvent || t instanceof SynthEvent) ? staticEventView(t) : undefined;
      },
      statPath: (path) => this.statPath(path),
      checkFilter: (event, filter) => checkEventFilter(te, event, filter),
    });
    this.registry = new DynEventRegistry(this.env, this, { pointerHashKey: BigInt.asUintN(64, BigInt(kernel.seed) * 0x9e3779b97f4a7c15n) });
    this.uprobes = new UprobeExecs(kernel, this.registry);
    // what `@linux_proc_banner` points at
    mapBanner(kernel);
    // trace_kprobe_module_callback(), the tprobes' module notifier: probes on a module's symbols follow its loads
    kernel.modules.notifiers.add((mod, state) => {
      for (const ev of this.registry.list) if (ev instanceof TraceKprobe || ev instanceof TraceFprobe) ev.moduleChanged(mod.def.name, state);
    });
    // README paragraphs of the probe events
    for (const f of ['dynamic_events', 'kprobe_events', 'uprobe_events', 'fprobe_events', 'probe_btf_args', 'synth_events']) tracing.features.add(f);
  }

  get kernel() {
    return this.tracing.kernel;
  }

  get ftrace() {
    return this.tracing.ftrace;
  }

  // ------------------------------------------------------------ the control files

  /**
   * A write(2) to a control file: each line runs in turn, error_log gets the
   * failures, a removal resets the buffers that had the removed events.
   * Returns the bytes consumed, or throws the errno of the failing line.
   */
  write(file: DynEventFile, data: Buffer | string, task?: Task): number {
    const text = typeof data === 'string' ? data : data.toString('latin1');
    this.writer = task;
    let r;
    try {
      r = this.registry.write(file, text);
    } finally {
      this.writer = undefined;
    }
    for (const e of r.log) this.tracing.errorLog.log(this.tracing.top, e.loc, e.command, e.pos, e.message);
    // dyn_event_release() resets the arrays marked by any removal so far (synthetic_events' `!name` only marks them)
    if (r.resetBuffers) this.resetClearedBuffers();
    if (r.errno) fail(r.errno);
    return r.written ?? text.length;
  }

  /** Opening a control file for writing with O_TRUNC: that file's events go (EBUSY if one is busy). */
  truncate(file: DynEventFile): void {
    const ret = this.registry.truncate(file);
    this.resetClearedBuffers();
    if (ret) fail(ret);
  }

  listing(file: DynEventFile): string {
    return this.registry.listing(file);
  }

  /** tracing_reset_all_online_cpus(): the arrays marked clear_trace are emptied. */
  private resetClearedBuffers(): void {
    for (const tr of this.tracing.arrays()) {
      if (!tr.clearTrace) continue;
      tr.clearTrace = false;
      tr.reset();
      tr.clearSnapshot();
    }
  }

  // ------------------------------------------------------------ registry → events

  /**
   * trace_add_event_call(): the event gets its id and its directory in every
   * trace array — eventfs_create_dir(name, ...) in the writing task, once per
   * array (a kprobe there sees the name in %di).
   */
  eventAdded(ev: DynTraceEvent): void {
    ev.id = this.events.allocEventId();
    const reg: EventRegistration = {
      register: () => ev.enable(),
      unregister: () => ev.disable(),
      fileEnabled: (file, on) => {
        if (on) file.wasEnabled = true;
        ev.fileEnabled(file, on);
      },
    };
    const task = this.writer;
    let added = false;
    const add = (): void => {
      if (added) return;
      added = true;
      this.events.addEventType(ev, reg);
    };
    if (task) {
      const k = this.kernel;
      const name = k.kmem.kstr(ev.name);
      for (const _tr of this.tracing.arrays()) k.call(task, 'eventfs_create_dir', [name, 0n, 0n, 0n, 0n], add);
    }
    add();
  }

  eventRemoved(ev: DynTraceEvent): void {
    for (const f of this.events.filesOf(ev)) if (f.wasEnabled) f.tr.clearTrace = true;
    this.events.removeEventType(ev);
  }

  busy(ev: DynTraceEvent): boolean {
    return !this.events.removable(ev);
  }
}
