/**
 * The dynamic-event registry (trace_dynevent.c): every probe point and
 * synthetic event in definition order, the per-type operations, and the
 * commands the control files accept (create, `-:` / `!` removal, clear).
 * Pure model: the file layer turns results into errnos and error_log entries.
 */
import type { ErrnoName } from '../../kernel/errno.js';
import { eprobeOps } from './eprobe.js';
import { fprobeOps } from './fprobe.js';
import { kprobeOps } from './kprobe.js';
import { argvSplit } from './kstr.js';
import type { KRet } from './parse_context.js';
import type { EventView, ProbeEnv } from './probe_env.js';
import type { ErrorLogEntry } from './probe_log.js';
import { createOrDeleteSynthEvent, synthOps, type SynthEvent } from './synth.js';
import type { ProbeEvent, TraceProbe } from './trace_probe.js';
import { uprobeOps } from './uprobe.js';

export type DynEventType = 'eprobe' | 'synth' | 'kprobe' | 'fprobe' | 'uprobe';

/** One entry of dynamic_events: a probe point, or a synthetic event. */
export type DynEvent =
  | { readonly ops: DynEventOps; readonly probe: TraceProbe; readonly synth?: undefined }
  | { readonly ops: DynEventOps; readonly synth: SynthEvent; readonly probe?: undefined };

/** struct dyn_event_operations. */
export interface DynEventOps {
  readonly type: DynEventType;
  /** Parse and register one command; ECANCELED: not this type's syntax. */
  create(raw: string, reg: DynEventRegistry, sink: ErrorLogEntry[]): KRet | 'ECANCELED';
  /** The dynamic_events line (without newline). */
  show(ev: DynEvent, reg: DynEventRegistry): string;
  /** Refuses release_all (enabled / referenced). */
  isBusy(ev: DynEvent): boolean;
  /** Unregister and forget. */
  free(ev: DynEvent, reg: DynEventRegistry): KRet;
  /** Does a `-:[system/]event [args...]` command name this event. */
  match(system: string | undefined, event: string, argv: readonly string[], ev: DynEvent, reg: DynEventRegistry): boolean;
}

/** A trace event owned by the registry: a probe event or a synthetic event. */
export type DynTraceEvent = ProbeEvent | SynthEvent;

/** What the events layer is told, so event directories follow the registry. */
export interface DynEventListener {
  eventAdded?(ev: DynTraceEvent): void;
  eventRemoved?(ev: DynTraceEvent): void;
  /** A probe point (or synthetic event) joined dyn_event_list: registered, as the kernel registers it at definition. */
  probeAdded?(ev: DynEvent): void;
  /** It left the list (unregistered and freed). */
  probeRemoved?(ev: DynEvent): void;
  /** Held by something the registry does not count (an open file of the event, a trigger): removal is EBUSY. */
  busy?(ev: DynTraceEvent): boolean;
}

/** The control files that take dynamic-event commands. */
export type DynEventFile = 'dynamic_events' | 'kprobe_events' | 'uprobe_events' | 'synthetic_events';

/** The outcome of one command line. */
export interface CommandResult {
  /** 0, or the errno the write fails with. */
  errno: 0 | ErrnoName;
  /** Entries for error_log, in order (also on success: none). */
  log: ErrorLogEntry[];
  /** A release ran: the kernel resets every trace buffer (tracing_reset_all_online_cpus). */
  resetBuffers?: boolean;
}

export interface WriteResult {
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

const OPS_ORDER: readonly DynEventOps[] = [eprobeOps, synthOps, kprobeOps, fprobeOps, uprobeOps];

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
    readonly listener: DynEventListener = {},
    opts: { pointerHashKey?: bigint } = {},
  ) {
    this.hashKey = opts.pointerHashKey ?? 0x9e3779b97f4a7c15n;
  }

  opsOf(type: DynEventType): DynEventOps {
    return OPS_ORDER.find((o) => o.type === type)!;
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
        for (const ops of OPS_ORDER) {
          ret = ops.create(raw, this, log);
          if (ret !== 'ECANCELED') break;
        }
        if (ret === 'ECANCELED') {
          if (this.env.series !== '6.12') log.push({ loc: 'dynevent', message: 'No matching dynamic event type', command: raw, pos: 0 });
          return 'EINVAL';
        }
        return ret;
      }
      case 'kprobe_events':
      case 'uprobe_events': {
        const ops = this.opsOf(FILE_TYPE[file]!);
        if (raw[0] === '-') return this.release(raw, ops);
        const ret = ops.create(raw, this, log);
        return ret === 'ECANCELED' ? 'EINVAL' : ret;
      }
      case 'synthetic_events':
        return createOrDeleteSynthEvent(raw, this, log);
    }
  }

  /** dyn_event_release(): `-:[system/]event [args]` (or `!…:event` on dynamic_events). */
  release(raw: string, type: DynEventOps | undefined): KRet {
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
      if (type && type !== ev.ops) continue;
      if (!ev.ops.match(system, event, argv.slice(1), ev, this)) continue;
      ret = ev.ops.free(ev, this);
      if (ret) break;
    }
    return ret;
  }

  /** Opening a control file with O_TRUNC: dyn_events_release_all() for its type (all for dynamic_events). */
  truncate(file: DynEventFile): 0 | ErrnoName {
    const t = FILE_TYPE[file];
    const mine = this.list.filter((ev) => !t || ev.ops.type === t);
    if (mine.some((ev) => ev.ops.isBusy(ev))) return 'EBUSY';
    for (const ev of mine) {
      const ret = ev.ops.free(ev, this);
      if (ret) return ret;
    }
    return 0;
  }

  /** What reading the control file shows. */
  listing(file: DynEventFile): string {
    const t = FILE_TYPE[file];
    let out = '';
    for (const ev of this.list) {
      if (t && ev.ops.type !== t) continue;
      const line = ev.ops.show(ev, this);
      out += file === 'synthetic_events' ? line.replace(/^s:[^/]*\//, '') + '\n' : line + '\n';
    }
    return out;
  }

  // ---- used by the probe types -------------------------------------------

  /** An event owned by the registry. */
  event(system: string, name: string): DynTraceEvent | undefined {
    return this.events.get(`${system}/${name}`);
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
    this.listener.eventAdded?.(ev);
    return 0;
  }

  unregisterEvent(ev: DynTraceEvent): void {
    if (this.events.get(`${ev.system}/${ev.name}`) !== ev) return;
    this.events.delete(`${ev.system}/${ev.name}`);
    this.listener.eventRemoved?.(ev);
  }

  add(ev: DynEvent): void {
    this.list.push(ev);
    this.listener.probeAdded?.(ev);
  }

  remove(ev: DynEvent): void {
    const i = this.list.indexOf(ev);
    if (i < 0) return;
    this.list.splice(i, 1);
    this.listener.probeRemoved?.(ev);
  }

  /** The event may not go: enabled, referenced (eprobes, hist triggers), or held by the events layer. */
  isBusy(ev: DynTraceEvent): boolean {
    return ev.enabled || ev.refs > 0 || this.listener.busy?.(ev) === true;
  }

  /** All probe points of one type. */
  probes(type: DynEventType): TraceProbe[] {
    return this.list.filter((ev) => ev.ops.type === type && ev.probe).map((ev) => ev.probe!);
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
