/**
 * eventfs: the events/ directory of a trace array — events/{enable,
 * header_page, header_event}, a directory per system (enable, filter) and per
 * event (enable, filter, trigger, format, id, hist; btf_ids in 7.3), as the kernel lays them
 * out (directories show one link). System and event directories are filled
 * on first lookup and then kept, so ownership changes stick; dynamic event
 * types come and go through the array's event-type listener.
 */
import { fail } from '../kernel/errno.js';
import { EVENT_FL_IGNORE_ENABLE, EVENT_FL_NO_REG, type TraceEventType } from '../trace/event_type.js';
import type { ArrayEvents } from '../trace/events/array_events.js';
import { subbufSize, updateBuffers } from '../trace/events/array_hooks.js';
import { applyEventFilter, applySystemFilter, showSystemFilter } from '../trace/events/filter/event_filter.js';
import { formatText } from '../trace/events/format_file.js';
import { enabledState, setClearEvents } from '../trace/events/set_event.js';
import type { TraceEvents } from '../trace/events/trace_events.js';
import { availableTriggers, processTrigger, showTriggers } from '../trace/events/triggers/trigger.js';
import { entryHeaderFormat, pageHeaderFormat } from '../trace/ring_buffer_event.js';
import type { TraceArray } from '../trace/trace_array.js';
import { addEventRootFiles } from './files/event_files.js';
import { histFileOps } from './files/hist_file.js';
import { Dir, File, type FileOps, type Node, O_TRUNC, type OpenFile } from './node.js';
import { parseUlong, seqRead, sliceAt } from './seq_file.js';

const PAGE_SIZE = 4096;
/** What the filter file of an event without a filter shows. */
const NO_FILTER = Buffer.from('none\n');

/** Which files an event directory has (event_callback()). */
function eventDirFiles(te: TraceEvents, type: TraceEventType): string[] {
  let flags = type.flags;
  if (flags === undefined && type.system === 'ftrace') {
    // An ftrace-internal type registered without flags: as the kernel has it.
    const spec = te.internal.get(type.name);
    flags = EVENT_FL_IGNORE_ENABLE | (spec && !spec.files.includes('id') ? EVENT_FL_NO_REG : 0);
  }
  const ignore = ((flags ?? 0) & EVENT_FL_IGNORE_ENABLE) !== 0;
  const reg = ((flags ?? 0) & EVENT_FL_NO_REG) === 0;
  const files = ['format'];
  if (!ignore && reg) files.push('enable');
  if (!ignore) files.push('filter');
  if (!ignore || type.name === 'print') files.push('trigger');
  if (reg) files.push('id');
  files.push('hist');
  if (type.btfIds) files.push('btf_ids');
  return files.sort();
}

/** events/header_page: the sub-buffer header (older series declared `overwrite` an int). */
function headerPage(tr: TraceArray): string {
  const text = pageHeaderFormat(subbufSize(tr));
  if (!tr.profile.headerPageIntOverwrite) return text;
  return text.replace('\tfield: char overwrite;\toffset:8;\tsize:1;\tsigned:0;', '\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;');
}

/** A file that holds its trace array while open (tracing_open_file_tr()), and refuses to be used once its event is gone. */
function held(ae: ArrayEvents, ops: FileOps, isAlive: () => boolean = () => true, opens?: Map<TraceEventType, number>, type?: TraceEventType): FileOps {
  const alive = () => !ae.dead && isAlive();
  return {
    ...ops,
    open(f: OpenFile) {
      if (!alive()) fail('ENODEV');
      ae.tr.refs++;
      if (opens && type) opens.set(type, (opens.get(type) ?? 0) + 1);
      return ops.open?.(f);
    },
    release(f: OpenFile) {
      ae.tr.refs--;
      if (opens && type) opens.set(type, (opens.get(type) ?? 1) - 1);
      ops.release?.(f);
    },
    read: ops.read && ((f, size, pos, abort) => (alive() ? ops.read!(f, size, pos, abort) : fail('ENODEV'))),
    write: ops.write && ((f, data, pos, task) => (alive() ? ops.write!(f, data, pos, task) : fail('ENODEV'))),
  };
}

/** A text made once per open, read from position 0 only (the kernel's simple one-shot reads). */
function oneShot(show: () => string): Pick<FileOps, 'read'> {
  return {
    read(f, size, pos) {
      const st = ((f.private as { text?: Buffer } | undefined) ??= {}) as { text?: Buffer };
      if (pos === 0 || !st.text) st.text = Buffer.from(show(), 'latin1');
      return sliceAt(st.text, size, pos);
    },
  };
}

/** An `enable` file: 0 / 1 written, EINVAL otherwise. */
function enableWrite(ae: ArrayEvents, apply: (on: boolean) => void): FileOps['write'] {
  return (_f, data) => {
    const v = parseUlong(data);
    updateBuffers(ae.tr);
    if (v !== 0 && v !== 1) fail('EINVAL');
    apply(v === 1);
    return data.length;
  };
}

/** Children made on the first look inside (most event directories are never opened). */
class LazyChildren extends Map<string, Node> {
  constructor(private readonly populate: () => void) {
    super();
  }
  override get(k: string): Node | undefined {
    this.populate();
    return super.get(k);
  }
  override has(k: string): boolean {
    this.populate();
    return super.has(k);
  }
  override get size(): number {
    this.populate();
    return super.size;
  }
  override keys(): MapIterator<string> {
    this.populate();
    return super.keys();
  }
  override values(): MapIterator<Node> {
    this.populate();
    return super.values();
  }
  override entries(): MapIterator<[string, Node]> {
    this.populate();
    return super.entries();
  }
  override [Symbol.iterator](): MapIterator<[string, Node]> {
    return this.entries();
  }
  override forEach(cb: (v: Node, k: string, m: Map<string, Node>) => void, thisArg?: unknown): void {
    this.populate();
    super.forEach(cb, thisArg);
  }
}

/** An eventfs directory whose children are made on the first look inside, then kept. */
class LazyDir extends Dir {
  private filled = false;

  constructor(name: string, fill: (d: LazyDir) => void) {
    super(name, 0o755);
    this.fixedNlink = 1;
    const lazy = new LazyChildren(() => {
      if (this.filled) return;
      this.filled = true;
      fill(this);
    });
    Object.defineProperty(this, 'children', { value: lazy });
  }

  /** Whether its children exist yet (looking at them makes them). */
  get populated(): boolean {
    return this.filled;
  }
}

class EventDir extends LazyDir {
  constructor(
    readonly eventType: TraceEventType,
    fill: (d: EventDir) => void,
  ) {
    super(eventType.name, fill as (d: LazyDir) => void);
  }
}

/**
 * A system's directory: its enable and filter files and a directory per
 * event, made when first looked into (an instance has a hundred systems and
 * thousands of events, most never looked at), in the order the events came.
 */
class SystemDir extends LazyDir {
  /** Its events, in the order they came. */
  readonly members: TraceEventType[] = [];
}

class EventsDir {
  readonly dir: Dir;
  private readonly systems = new Map<string, SystemDir>();
  private readonly opens = new Map<TraceEventType, number>();
  private readonly te: TraceEvents;
  private readonly ae: ArrayEvents;

  constructor(readonly tr: TraceArray) {
    this.te = tr.tracing.events;
    this.ae = this.te.array(tr);
    const ae = this.ae;
    const dir = (this.dir = new Dir('events', 0o755));
    dir.fixedNlink = 1;
    dir.add(
      new File('enable', 0o640, held(ae, {
        ...oneShot(() => `${enabledState(ae)}\n`),
        write: enableWrite(ae, (on) => setClearEvents(ae, {}, on)),
      })),
    );
    dir.add(new File('header_page', 0o440, held(ae, oneShot(() => headerPage(tr)))));
    dir.add(new File('header_event', 0o440, held(ae, oneShot(() => entryHeaderFormat()))));
    for (const t of this.te.types()) this.systemDir(t.system).members.push(t);
    for (const t of this.internalTypes()) this.systemDir(t.system).members.push(t);
  }

  /** The ftrace-internal types the core registered (not in the event list order). */
  private internalTypes(): TraceEventType[] {
    const listed = new Set(this.te.types());
    return [...this.tr.tracing.eventTypes.all()].filter((t) => !listed.has(t));
  }

  /** Whether the type's directory may go (no file of it open here). */
  canRemove(type: TraceEventType): boolean {
    return (this.opens.get(type) ?? 0) === 0;
  }

  private systemDir(system: string): SystemDir {
    let d = this.systems.get(system);
    if (d) return d;
    const sys = (d = new SystemDir(system, () => this.fillSystemDir(sys)));
    this.systems.set(system, d);
    this.dir.add(d);
    return d;
  }

  private fillSystemDir(d: SystemDir): void {
    const ae = this.ae;
    const system = d.name;
    if (system !== 'ftrace') {
      const alive = () => this.systems.get(system) === d;
      d.add(
        new File('enable', 0o640, held(ae, {
          ...oneShot(() => `${enabledState(ae, system)}\n`),
          write: enableWrite(ae, (on) => setClearEvents(ae, { system }, on)),
        }, alive)),
      );
      d.add(
        new File('filter', 0o640, held(ae, {
          ...oneShot(() => showSystemFilter()),
          write: (_f, data) => {
            if (data.length >= PAGE_SIZE) fail('EINVAL');
            applySystemFilter(ae, system, data.toString('latin1'));
            return data.length;
          },
        }, alive)),
      );
    }
    for (const type of d.members) d.add(this.eventDir(type));
  }

  private eventDir(type: TraceEventType): EventDir {
    return new EventDir(type, (d) => this.fillEventDir(d));
  }

  addType(type: TraceEventType): void {
    const sys = this.systemDir(type.system);
    if (sys.members.includes(type)) return;
    sys.members.push(type);
    if (sys.populated && !sys.children.has(type.name)) sys.add(this.eventDir(type));
  }

  removeType(type: TraceEventType): void {
    const sys = this.systems.get(type.system);
    if (!sys) return;
    const i = sys.members.indexOf(type);
    if (i >= 0) sys.members.splice(i, 1);
    if (sys.populated) sys.remove(type.name);
    this.opens.delete(type);
    if (!sys.members.length) {
      this.dir.remove(type.system);
      this.systems.delete(type.system);
    }
  }

  private fillEventDir(d: EventDir): void {
    const type = d.eventType;
    const ae = this.ae;
    const te = this.te;
    const alive = () => te.find(type.system, type.name) === type;
    const hold = (ops: FileOps) => held(ae, ops, alive, this.opens, type);
    // Files of built-in events: removed only with their instance, which their opens hold (counted by a cache too).
    const stable = !type.module && !te.isRuntime(type);
    const holds = ae.tr.isTop ? undefined : ae.tr;
    for (const name of eventDirFiles(te, type)) {
      switch (name) {
        case 'enable':
          d.add(
            new File('enable', 0o640, hold({
              ...oneShot(() => {
                const f = ae.peek(type);
                return `${f?.enabled && !f.softDisabled ? '1' : '0'}${f && f.smRef !== 0 ? '*' : ''}\n`;
              }),
              write: enableWrite(ae, (on) => ae.file(type).enableDisable(on, false)),
            })),
          );
          break;
        case 'filter':
          d.add(
            new File('filter', 0o640, hold({
              ...oneShot(() => {
                const f = ae.peek(type)?.filter;
                return f ? `${f.text}\n` : 'none\n';
              }),
              snapshot: stable ? () => (ae.peek(type)?.filter || ae.dead ? undefined : { text: NO_FILTER, valid: () => !ae.dead && !ae.peek(type)?.filter, holds }) : undefined,
              write: (_f, data) => {
                if (data.length >= PAGE_SIZE) fail('EINVAL');
                applyEventFilter(ae.file(type), data.toString('latin1'));
                return data.length;
              },
            })),
          );
          break;
        case 'trigger':
          d.add(
            new File('trigger', 0o640, hold({
              open(f) {
                // an O_TRUNC open for writing drops what each command's unreg_all drops (hist triggers)
                if (f.writable && f.flags & O_TRUNC) for (const c of te.triggerCommands.all()) c.unregAll?.(ae.file(type));
              },
              ...seqRead(() => {
                const f = ae.peek(type);
                return f ? showTriggers(f) : showTriggers(ae.file(type));
              }),
              snapshot: stable
                ? () => {
                    // (cached when looked up: an event file is made only once something is set on it)
                    const f = ae.peek(type);
                    if (f?.triggers.length || ae.dead) return undefined;
                    const text = f ? showTriggers(f) : availableTriggers(te.triggerCommands);
                    return { text: Buffer.from(text, 'latin1'), valid: () => !ae.dead && !ae.peek(type)?.triggers.length, holds };
                  }
                : undefined,
              write: (_f, data) => {
                if (data.length === 0) return 0;
                if (data.length >= PAGE_SIZE) fail('EINVAL');
                processTrigger(ae.file(type), data.toString('latin1'));
                return data.length;
              },
            })),
          );
          break;
        case 'format':
          d.add(new File('format', 0o440, hold(seqRead(() => formatText(type)))));
          break;
        case 'id':
          d.add(new File('id', 0o440, hold(oneShot(() => `${type.id}\n`))));
          break;
        case 'hist':
          d.add(new File('hist', 0o440, hold(histFileOps(ae.tr.tracing, () => ae.file(type)))));
          break;
        case 'btf_ids': {
          const ids = type.btfIds!;
          d.add(new File('btf_ids', 0o440, hold(oneShot(() => `btf_obj_id: ${ids.obj}\nraw_btf_id: ${ids.raw}\ntp_btf_id: ${ids.tp}\n`))));
          break;
        }
      }
    }
  }
}

/**
 * Gives a trace array's directory its events/ tree and root event files, and
 * keeps the tree in step with event types added and removed later.
 */
export function addEventFiles(dir: Dir, tr: TraceArray): EventsDir {
  const te = tr.tracing.events;
  const events = new EventsDir(tr);
  dir.add(events.dir);
  addEventRootFiles(dir, te, tr);
  te.array(tr).typeListener = {
    added: (t) => events.addType(t),
    removed: (t) => events.removeType(t),
    canRemove: (t) => events.canRemove(t),
  };
  return events;
}
