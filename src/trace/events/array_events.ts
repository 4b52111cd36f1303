/** The event side of one trace array: its event files, pid lists and module requests. */
import type { TraceEventType } from '../event_type.js';
import type { TraceArray } from '../trace_array.js';
import { EventFile } from './event_file.js';
import { PidFilter } from './pid_filter.js';
import type { ModRequest } from './set_event.js';
import type { EventTypeListener, TraceEvents } from './trace_events.js';
import { unregisterTrigger } from './triggers/trigger.js';

/** syscall_user_buf_size default (and its ceiling, SYSCALL_FAULT_USER_MAX). */
const SYSCALL_USER_BUF_DEFAULT = 63;
export const SYSCALL_USER_BUF_MAX = 165;

export class ArrayEvents {
  private readonly files = new Map<number, EventFile>();
  readonly pids = new PidFilter();
  /** `:mod:` requests of set_event for modules without events (7.2), newest first. */
  modRequests: ModRequest[] = [];
  /** syscall_user_buf_size (7.2): user memory bytes recorded per syscall argument. */
  syscallBufSize = SYSCALL_USER_BUF_DEFAULT;
  /** The instance was removed: its files answer ENODEV. */
  dead = false;
  /** This array's events/ tree (eventfs), following the event types as they come and go. */
  typeListener?: EventTypeListener;

  constructor(
    readonly events: TraceEvents,
    readonly tr: TraceArray,
  ) {}

  /** The event file of `type` here (made on first use: a fresh file is all off). */
  file(type: TraceEventType): EventFile {
    let f = this.files.get(type.id);
    if (!f || f.type !== type) {
      f = new EventFile(this, type);
      this.files.set(type.id, f);
    }
    return f;
  }

  /** The file if it was ever used (an unused one is off, unfiltered, trigger-less). */
  peek(type: TraceEventType): EventFile | undefined {
    const f = this.files.get(type.id);
    return f && f.type === type ? f : undefined;
  }

  usedFiles(): IterableIterator<EventFile> {
    return this.files.values();
  }

  /** ftrace_clear_events(): every event off (soft modes stay), module requests dropped. */
  clearEvents(): void {
    for (const f of this.files.values()) f.enableDisable(false, false);
    this.modRequests = [];
  }

  /** A type goes away (dynamic event removed): its file must be idle by then. */
  forget(type: TraceEventType): void {
    const f = this.peek(type);
    if (!f) return;
    if (f.enabled) f.enableDisable(false, false);
    this.files.delete(type.id);
  }

  /** Whether `type` is in use here (enabled, soft mode or triggers): it cannot be removed then. */
  busy(type: TraceEventType): boolean {
    const f = this.peek(type);
    return !!f && (f.enabled || f.smRef > 0 || f.triggers.length > 0);
  }

  /** The instance goes: triggers, events, pid lists and the events/ tree's listener are dropped. */
  teardown(): void {
    this.dead = true;
    for (const f of this.files.values()) {
      while (f.triggers.length) {
        const d = unregisterTrigger(f, (t) => t === f.triggers[0]);
        if (d?.target) d.target.enableDisable(false, true);
      }
    }
    for (const f of this.files.values()) {
      f.smRef = 0;
      f.enableDisable(false, false);
    }
    this.pids.pids = null;
    this.pids.noPids = null;
    this.events.pidListsChanged(this);
    this.typeListener = undefined;
  }
}
