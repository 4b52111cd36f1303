/**
 * The dynamic-event list and its control files (trace_dynevent.c): every
 * dynamic event in definition order — each one object, a probe's
 * (TraceKprobe, TraceFprobe, TraceEprobe, TraceUprobe) or a SynthEvent — the
 * commands the control files accept (create, `-:` / `!` removal, clear) and
 * the events they own by name. Without a runtime it is the parser's model
 * alone (no hooks, no event types), as the parser tests use it.
 */
import type { ErrnoName } from '../../kernel/errno.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { Ftrace } from '../../ftrace/ftrace.js';
import type { TraceEvents } from '../events/trace_events.js';
import { argvSplit } from '../probe/kstr.js';
import type { KRet } from '../probe/parse_context.js';
import type { EventView, ProbeEnv } from '../probe/probe_env.js';
import type { ErrorLogEntry } from '../probe/probe_log.js';
import { TraceProbeEvent } from '../probe/trace_probe.js';
import { createTraceEprobe } from './trace_eprobe_parse.js';
import type { SynthEvent } from './trace_events_synth.js';
import { createOrDeleteSynthEvent, createSynthDynEvent } from './trace_events_synth_parse.js';
import type { TprobeStubCalls } from './trace_fprobe.js';
import { createTraceFprobe } from './trace_fprobe_parse.js';
import { createTraceKprobe } from './trace_kprobe_parse.js';
import type { UprobeExecs } from './trace_uprobe.js';
import { createTraceUprobe } from './trace_uprobe_parse.js';

type DynEventType = 'eprobe' | 'synth' | 'kprobe' | 'fprobe' | 'uprobe';
export type ProbeType = Exclude<DynEventType, 'synth'>;

/** One entry of dynamic_events (struct dyn_event with its dyn_event_operations). */
export interface DynEvent {
  readonly type: DynEventType;
  /** The dynamic_events line (without newline). */
  show(): string;
  /** Does a `-:[system/]event [args...]` command name this event. */
  match(system: string | undefined, event: string, argv: readonly string[]): boolean;
  /** Refuses release_all (enabled / referenced). */
  isBusy(): boolean;
  /** Unregister and forget. */
  free(): KRet;
}

/** A trace event owned by the registry: a probe event or a synthetic event. */
export type DynTraceEvent = TraceProbeEvent | SynthEvent;

/**
 * What the registry's events reach once live (dyn_events.ts): the kernel
 * their hooks go into and the events layer their event types join.
 */
export interface DynEventRuntime {
  readonly kernel: Kernel;
  /** The ftrace core the probes hook functions through. */
  readonly ftrace: Ftrace;
  readonly events: TraceEvents;
  /** The exec watch uprobes share. */
  readonly uprobes: UprobeExecs;
  /** The tracepoints calling probe stubs now (tracepoint probes record in their context). */
  readonly stubCalls: TprobeStubCalls;
  /** A new event of the registry: its id and directories (trace_add_event_call). */
  eventAdded(ev: DynTraceEvent): void;
  eventRemoved(ev: DynTraceEvent): void;
  /** Held by something the registry does not count (an open file of the event, a trigger): removal is EBUSY. */
  busy(ev: DynTraceEvent): boolean;
}

/** dyn_event_operations.create: parse and register one command; ECANCELED: not this type's syntax. */
type CreateCommand = (raw: string, reg: DynEventRegistry, sink: ErrorLogEntry[]) => KRet | 'ECANCELED';

/** The control files that take dynamic-event commands. */
export type DynEventFile = 'dynamic_events' | 'kprobe_events' | 'uprobe_events' | 'synthetic_events';

/** The outcome of one command line. */
interface CommandResult {
  /** 0, or the errno the write fails with. */
  errno: 0 | ErrnoName;
  /** Entries for error_log, in order (also on success: none). */
  log: ErrorLogEntry[];
  /** A release ran: the kernel resets every trace buffer (tracing_reset_all_online_cpus). */
  resetBuffers?: boolean;
}

interface WriteResult {
  errno: 0 | ErrnoName;
  /** Bytes consumed (the write's return value) when errno is 0. */
  written?: number;
  log: ErrorLogEntry[];
  resetBuffers: boolean;
}

/** trace_parse_run_command()'s WRITE_BUFSIZE: a line must fit in 4094 bytes. */
const WRITE_BUFSIZE = 4096;

/** The command lines of one write, comments cut; an over-long line is EINVAL. */
export function* runCommands(text: string): Generator<string | { errno: ErrnoName }> {
  let done = 0;
  while (done < text.length) {
    let size = Math.min(text.length - done, WRITE_BUFSIZE - 1);
    // the kernel's buffer is a C string: a NUL ends it
    const chunk = text.slice(done, done + size).split('\0')[0];
    let at = 0;
    do {
      let line: string;
      const nl = chunk.indexOf('\n', at);
      if (nl >= 0) {
        line = chunk.slice(at, nl);
        size = nl - at + 1;
      } else {
        line = chunk.slice(at);
        size = line.length;
        if (done + size < text.length) {
          if (at !== 0) break;
          yield { errno: 'EINVAL' };
          return;
        }
      }
      done += size;
      const hash = line.indexOf('#');
      yield hash >= 0 ? line.slice(0, hash) : line;
      at += size;
    } while (done < text.length);
  }
}

/** The types dynamic_events tries a command on, in order. */
const CREATE_ORDER: readonly CreateCommand[] = [createTraceEprobe, createSynthDynEvent, createTraceKprobe, createTraceFprobe, createTraceUprobe];

const FILE_TYPE: Record<DynEventFile, DynEventType | undefined> = {
  dynamic_events: undefined,
  kprobe_events: 'kprobe',
  uprobe_events: 'uprobe',
  synthetic_events: 'synth',
};

export class DynEventRegistry {
  /** dyn_event_list, in definition order. */
  readonly list: DynEvent[] = [];
  /** Events owned by the registry, by `system/name`. */
  private readonly events = new Map<string, DynTraceEvent>();
  private readonly hashKey: bigint;
  private releaseRan = false;

  constructor(
    readonly env: ProbeEnv,
    /** The live side; none for the parser's model alone. */
    readonly runtime?: DynEventRuntime,
    opts: { pointerHashKey?: bigint } = {},
  ) {
    this.hashKey = opts.pointerHashKey ?? 0x9e3779b97f4a7c15n;
  }

  /** The live side, for what only live events do (fire, print, arm). */
  live(): DynEventRuntime {
    if (!this.runtime) throw new Error('dynamic events without a runtime cannot go live');
    return this.runtime;
  }

  // ---- the control files -------------------------------------------------

  /**
   * A write(2) of `text` (bytes as latin1) to a control file, as
   * trace_parse_run_command() runs it: line by line, `#` comments cut, the
   * first failing line ends the write with its errno (earlier lines stay).
   */
  write(file: DynEventFile, text: string): WriteResult {
    const log: ErrorLogEntry[] = [];
    let resetBuffers = false;
    for (const cmd of runCommands(text)) {
      if (typeof cmd !== 'string') return { errno: cmd.errno, log, resetBuffers };
      const r = this.command(file, cmd);
      log.push(...r.log);
      resetBuffers ||= r.resetBuffers === true;
      if (r.errno) return { errno: r.errno, log, resetBuffers };
    }
    return { errno: 0, written: text.length, log, resetBuffers };
  }

  /** One command line written to `file` (comments already cut, as trace_parse_run_command does). */
  command(file: DynEventFile, raw: string): CommandResult {
    const log: ErrorLogEntry[] = [];
    this.releaseRan = false;
    const errno = this.dispatch(file, raw, log);
    return { errno: errno === 'ECANCELED' ? 'EINVAL' : errno, log, ...(this.releaseRan ? { resetBuffers: true } : {}) };
  }

  private dispatch(file: DynEventFile, raw: string, log: ErrorLogEntry[]): KRet | 'ECANCELED' {
    switch (file) {
      case 'dynamic_events': {
        if (raw[0] === '-' || raw[0] === '!') return this.release(raw, undefined);
        let ret: KRet | 'ECANCELED' = 'ENODEV';
        for (const create of CREATE_ORDER) {
          ret = create(raw, this, log);
          if (ret !== 'ECANCELED') break;
        }
        if (ret === 'ECANCELED') {
          if (this.env.profile.logsNoMatchingDynevent) log.push({ loc: 'dynevent', message: 'No matching dynamic event type', command: raw, pos: 0 });
          return 'EINVAL';
        }
        return ret;
      }
      case 'kprobe_events': {
        if (raw[0] === '-') return this.release(raw, 'kprobe');
        const ret = createTraceKprobe(raw, this, log);
        return ret === 'ECANCELED' ? 'EINVAL' : ret;
      }
      case 'uprobe_events': {
        if (raw[0] === '-') return this.release(raw, 'uprobe');
        const ret = createTraceUprobe(raw, this, log);
        return ret === 'ECANCELED' ? 'EINVAL' : ret;
      }
      case 'synthetic_events':
        return createOrDeleteSynthEvent(raw, this, log);
    }
  }

  /** dyn_event_release(): `-:[system/]event [args]` (or `!…:event` on dynamic_events). */
  release(raw: string, type: DynEventType | undefined): KRet {
    const argv = argvSplit(raw);
    if (!argv.length) return 'EINVAL';
    let event: string;
    if (argv[0][0] === '-') {
      if (argv[0][1] !== ':') return 'EINVAL';
      event = argv[0].slice(2);
    } else {
      const colon = argv[0].indexOf(':');
      if (colon < 0) return 'EINVAL';
      event = argv[0].slice(colon + 1);
    }
    let system: string | undefined;
    const slash = event.indexOf('/');
    if (slash >= 0) {
      system = event.slice(0, slash);
      event = event.slice(slash + 1);
    }
    if (system === undefined && event === '') return 'EINVAL';
    this.releaseRan = true;
    let ret: KRet = 'ENOENT';
    for (const ev of [...this.list]) {
      if (type && type !== ev.type) continue;
      if (!ev.match(system, event, argv.slice(1))) continue;
      ret = ev.free();
      if (ret) break;
    }
    return ret;
  }

  /** Opening a control file with O_TRUNC: dyn_events_release_all() for its type (all for dynamic_events). */
  truncate(file: DynEventFile): 0 | ErrnoName {
    const t = FILE_TYPE[file];
    const mine = this.list.filter((ev) => !t || ev.type === t);
    if (mine.some((ev) => ev.isBusy())) return 'EBUSY';
    for (const ev of mine) {
      const ret = ev.free();
      if (ret) return ret;
    }
    return 0;
  }

  /** What reading the control file shows. */
  listing(file: DynEventFile): string {
    const t = FILE_TYPE[file];
    let out = '';
    for (const ev of this.list) {
      if (t && ev.type !== t) continue;
      const line = ev.show();
      out += file === 'synthetic_events' ? line.replace(/^s:[^/]*\//, '') + '\n' : line + '\n';
    }
    return out;
  }

  // ---- used by the dynamic events ----------------------------------------

  /** An event owned by the registry. */
  event(system: string, name: string): DynTraceEvent | undefined {
    return this.events.get(`${system}/${name}`);
  }

  /** The probe event of that name whose probes are of `type` (find_trace_kprobe() and its kin). */
  probeEvent(type: ProbeType, system: string, name: string): TraceProbeEvent | undefined {
    const ev = this.events.get(`${system}/${name}`);
    return ev instanceof TraceProbeEvent && ev.primary.type === type ? ev : undefined;
  }

  /** find_trace_event_call(): any event of that name, dynamic or not. */
  eventExists(system: string, name: string): boolean {
    return this.events.has(`${system}/${name}`) || this.env.findEvent(system, name) !== undefined;
  }

  /** An event as eprobes see it (registry events first). */
  eventView(system: string, name: string): EventView | undefined {
    const ev = this.events.get(`${system}/${name}`);
    if (ev) return ev.view();
    return this.env.findEvent(system, name);
  }

  /** trace_probe_register_event_call() / register_synth_event(): EEXIST if the name is taken. */
  registerEvent(ev: DynTraceEvent): 0 | 'EEXIST' {
    if (this.eventExists(ev.system, ev.name)) return 'EEXIST';
    this.events.set(`${ev.system}/${ev.name}`, ev);
    this.runtime?.eventAdded(ev);
    return 0;
  }

  unregisterEvent(ev: DynTraceEvent): void {
    if (this.events.get(`${ev.system}/${ev.name}`) !== ev) return;
    this.events.delete(`${ev.system}/${ev.name}`);
    this.runtime?.eventRemoved(ev);
  }

  /** dyn_event_add(). */
  add(ev: DynEvent): void {
    this.list.push(ev);
  }

  /** dyn_event_remove(). */
  remove(ev: DynEvent): void {
    const i = this.list.indexOf(ev);
    if (i >= 0) this.list.splice(i, 1);
  }

  /** The event may not go: enabled, referenced (eprobes, hist triggers), or held by the events layer. */
  isBusy(ev: DynTraceEvent): boolean {
    return ev.enabled || ev.refs > 0 || this.runtime?.busy(ev) === true;
  }

  /** `%p` of a kernel pointer: a stable 32-bit hash shown as 16 hex digits, as hashed pointers print. */
  hashPointer(addr: bigint): string {
    let z = BigInt.asUintN(64, addr + this.hashKey);
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    z ^= z >> 31n;
    return (z >> 32n).toString(16).padStart(16, '0');
  }
}
