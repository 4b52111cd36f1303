/**
 * Dynamic events made live (trace_dynevent.c with the event side of
 * trace_kprobe.c, trace_fprobe.c, trace_eprobe.c, trace_uprobe.c and
 * trace_events_synth.c): the one registry of the tracing subsystem, each of
 * its events a trace event type in every events/ tree, enabling that arms
 * the probe, and the control files' semantics (error_log entries, busy
 * events, the buffers reset after removals).
 */
import { mapBanner } from '../../kernel/banner.js';
import { fail } from '../../kernel/errno.js';
import type { EventField, TraceEventType } from '../event_type.js';
import type { EventFile } from '../events/event_file.js';
import { E, FILTER_ERRORS, FilterCompileError, compileFilter } from '../events/filter/filter_parser.js';
import type { EventRegistration, TraceEvents } from '../events/trace_events.js';
import { DynEventRegistry, type DynEvent, type DynEventFile, type DynTraceEvent } from '../probe/dynevent.js';
import { kernelProbeEnv } from '../probe/kernel_env.js';
import type { EventView, ProbeEnv } from '../probe/probe_env.js';
import type { ErrorLogEntry } from '../probe/probe_log.js';
import { SynthEvent } from '../probe/synth.js';
import { ProbeEvent, type ProbeKind, type TraceProbe } from '../probe/trace_probe.js';
import type { Task } from '../../kernel/task.js';
import type { TraceArray } from '../trace_array.js';
import type { Tracing } from '../tracing.js';
import { hostStatPath } from './host_paths.js';
import { ProbeEventType } from './probe_event_type.js';
import { SynthEventType } from './synth_event_type.js';
import { EprobeRuntime } from './trace_eprobe.js';
import { FprobeRuntime } from './trace_fprobe.js';
import { KprobeRuntime } from './trace_kprobe.js';
import { UprobeRuntime } from './trace_uprobe.js';

/** What each probe type does at run time (the parts of trace_*probe.c past parsing). */
export interface ProbeRuntime {
  /** A probe point joined the list: register it where the kernel does at definition. */
  added(tp: TraceProbe): void;
  /** It leaves the list: unregister. */
  removed(tp: TraceProbe): void;
  /** The event goes on in its first trace array (enable_trace_*probe()); may refuse with a KernelError. */
  enable(ev: ProbeEvent, type: ProbeEventType): void;
  /** Off in the last one. */
  disable(ev: ProbeEvent, type: ProbeEventType): void;
  /** One trace array's file going on or off (eprobes attach per array). */
  fileEnabled?(ev: ProbeEvent, type: ProbeEventType, file: EventFile, on: boolean): void;
}

const instances = new WeakMap<Tracing, DynEvents>();

/** The event-filter parser's verdict on an eprobe's `if` clause, as its error_log entry. */
export function checkEventFilter(te: TraceEvents, event: EventView, filter: string): ErrorLogEntry | null {
  try {
    compileFilter(filter, { fields: event.fields as EventField[], symbols: te.symbols(), series: te.series, isFunctionEvent: false, nrCpus: te.nrCpus });
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

export class DynEvents {
  readonly registry: DynEventRegistry;
  readonly env: ProbeEnv;
  private readonly te: TraceEvents;
  private readonly types = new Map<DynTraceEvent, ProbeEventType | SynthEventType>();
  private readonly runtimes: Record<ProbeKind, ProbeRuntime>;
  /** Trace arrays where an event was ever on (EVENT_FILE_FL_WAS_ENABLED): removing it clears them. */
  private readonly wasEnabled = new Map<TraceEventType, Set<TraceArray>>();
  /** tr->clear_trace. */
  private readonly clearTrace = new Set<TraceArray>();
  /** The task writing to a control file now (the kernel work of adding an event runs in it). */
  private writer?: Task;
  /** How uprobe paths are looked up (the machine's file system; tests give their own). */
  statPath: ProbeEnv['statPath'] = hostStatPath;

  /** The dynamic events of a tracing subsystem (made on first use). */
  static of(tracing: Tracing): DynEvents {
    let d = instances.get(tracing);
    if (!d) instances.set(tracing, (d = new DynEvents(tracing)));
    return d;
  }

  private constructor(readonly tracing: Tracing) {
    const te = (this.te = tracing.events);
    const kernel = tracing.kernel;
    this.env = kernelProbeEnv(kernel, {
      findEvent: (system, name) => {
        const t = te.find(system, name);
        return t && !this.isDynamic(t) ? staticEventView(t) : undefined;
      },
      statPath: (path) => this.statPath(path),
      checkFilter: (event, filter) => checkEventFilter(te, event, filter),
    });
    this.runtimes = {
      kprobe: new KprobeRuntime(this),
      fprobe: new FprobeRuntime(this),
      eprobe: new EprobeRuntime(this),
      uprobe: new UprobeRuntime(this),
    };
    this.registry = new DynEventRegistry(this.env, {
      eventAdded: (ev) => this.eventAdded(ev),
      eventRemoved: (ev) => this.eventRemoved(ev),
      probeAdded: (ev) => this.probeChanged(ev, true),
      probeRemoved: (ev) => this.probeChanged(ev, false),
      busy: (ev) => {
        const t = this.types.get(ev);
        return t !== undefined && !te.removable(t);
      },
    }, { pointerHashKey: BigInt.asUintN(64, BigInt(kernel.seed) * 0x9e3779b97f4a7c15n) });
    // what `@linux_proc_banner` points at
    mapBanner(kernel);
    // README paragraphs of the probe events
    for (const f of ['dynamic_events', 'kprobe_events', 'uprobe_events', 'fprobe_events', 'probe_btf_args', 'synth_events']) tracing.features.add(f);
  }

  get kernel() {
    return this.tracing.kernel;
  }

  get events(): TraceEvents {
    return this.te;
  }

  private isDynamic(t: TraceEventType): boolean {
    return t instanceof ProbeEventType || t instanceof SynthEventType;
  }

  /** The trace event type of a registry event. */
  typeOf(ev: DynTraceEvent): ProbeEventType | SynthEventType | undefined {
    return this.types.get(ev);
  }

  runtime(kind: ProbeKind): ProbeRuntime {
    return this.runtimes[kind];
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

  /** kprobe_profile: `  %-44s %15lu %15lu` (event, hits, misses) per kprobe point. */
  kprobeProfile(): string {
    const rt = this.runtimes.kprobe as KprobeRuntime;
    let out = '';
    for (const tp of this.registry.probes('kprobe')) {
      const { hits, missed } = rt.profile(tp);
      out += `  ${tp.event.padEnd(44)} ${String(hits).padStart(15)} ${String(missed).padStart(15)}\n`;
    }
    return out;
  }

  /** uprobe_profile: `  %s %-44s %15lu` (file, event, hits) per uprobe point. */
  uprobeProfile(): string {
    const rt = this.runtimes.uprobe as UprobeRuntime;
    let out = '';
    for (const tp of this.registry.probes('uprobe')) {
      const loc = tp.loc as { path: string };
      out += `  ${loc.path} ${tp.event.padEnd(44)} ${String(rt.hits(tp)).padStart(15)}\n`;
    }
    return out;
  }

  /** tracing_reset_all_online_cpus(): the arrays marked clear_trace are emptied. */
  private resetClearedBuffers(): void {
    for (const tr of this.clearTrace) {
      tr.reset();
      tr.clearSnapshot();
    }
    this.clearTrace.clear();
  }

  // ------------------------------------------------------------ registry → events

  private eventAdded(ev: DynTraceEvent): void {
    const id = this.te.allocEventId();
    if (ev instanceof SynthEvent) {
      const type = new SynthEventType(id, ev, this.kernel);
      this.types.set(ev, type);
      this.addType(type, this.synthRegistration(ev, type));
      return;
    }
    const type = new ProbeEventType(id, ev, this.kernel);
    this.types.set(ev, type);
    this.addType(type, this.probeRegistration(ev, type));
  }

  /**
   * trace_add_event_call(): the event gets its directory in every trace
   * array — eventfs_create_dir(name, ...) in the writing task, once per
   * array (a kprobe there sees the name in %di).
   */
  private addType(type: ProbeEventType | SynthEventType, reg: EventRegistration): void {
    const task = this.writer;
    let added = false;
    const add = (): void => {
      if (added) return;
      added = true;
      this.te.addEventType(type, reg);
    };
    if (task) {
      const k = this.kernel;
      const name = k.kmem.kstr(type.name);
      for (const _tr of this.tracing.arrays()) k.call(task, 'eventfs_create_dir', [name, 0n, 0n, 0n, 0n], add);
    }
    add();
  }

  private eventRemoved(ev: DynTraceEvent): void {
    const type = this.types.get(ev);
    if (!type) return;
    for (const tr of this.wasEnabled.get(type) ?? []) this.clearTrace.add(tr);
    this.wasEnabled.delete(type);
    this.te.removeEventType(type);
    this.types.delete(ev);
  }

  private probeChanged(ev: DynEvent, added: boolean): void {
    const tp = ev.probe;
    if (!tp) return;
    const rt = this.runtimes[tp.loc.kind];
    if (added) rt.added(tp);
    else rt.removed(tp);
  }

  private noteEnabled(type: TraceEventType, file: EventFile): void {
    let s = this.wasEnabled.get(type);
    if (!s) this.wasEnabled.set(type, (s = new Set()));
    s.add(file.tr);
  }

  private probeRegistration(ev: ProbeEvent, type: ProbeEventType): EventRegistration {
    return {
      register: () => {
        const rt = this.runtimes[ev.kind];
        ev.enabled = true;
        try {
          rt.enable(ev, type);
        } catch (e) {
          ev.enabled = false;
          throw e;
        }
      },
      unregister: () => {
        this.runtimes[ev.kind].disable(ev, type);
        ev.enabled = false;
      },
      fileEnabled: (file, on) => {
        if (on) {
          this.noteEnabled(type, file);
          // tracing_update_buffers(): the first use grows the buffers
          file.tr.updateBuffers();
        }
        this.runtimes[ev.kind].fileEnabled?.(ev, type, file, on);
      },
    };
  }

  private synthRegistration(ev: SynthEvent, type: SynthEventType): EventRegistration {
    return {
      register: () => {
        ev.enabled = true;
      },
      unregister: () => {
        ev.enabled = false;
      },
      fileEnabled: (file, on) => {
        if (on) this.noteEnabled(type, file);
      },
    };
  }
}

