/**
 * trace_event_file: one event in one trace array — whether it is enabled
 * (and soft-disabled by triggers), its filter, its triggers — and the path a
 * fired event takes into that array's buffer: unconditional triggers, soft
 * disable, pid filtering, the filter, conditional and post triggers.
 */
import type { ExecContext } from '../../kernel/context.js';
import type { TraceEventType } from '../event_type.js';
import type { ArrayEvents } from './array_events.js';
import { recordingOn } from './array_hooks.js';
import type { FilterProgram } from './filter/filter_parser.js';
import { runFilter } from './filter/filter_parser.js';
import type { FilterInput } from './filter/predicate.js';
import { callPostTriggers, callTriggers, type TriggerData } from './triggers/trigger.js';

/** The filter an event file shows and runs. */
interface EventFilterState {
  /** What the filter file shows: the filter, or the filter followed by its error. */
  text: string;
  /** The program, when the filter compiled (FILTERED is set only then). */
  prog: FilterProgram | null;
}

/** A record being recorded: built once per tracepoint hit, shared by every trace array. */
export interface PendingRecord {
  ctx: ExecContext;
  /** Tracepoint arguments (for the scheduler events' pid filtering). */
  args?: Readonly<Record<string, unknown>>;
  /** Builds (once) the record bytes. */
  data(): Buffer;
}

export class EventFile {
  /** EVENT_FILE_FL_ENABLED: the tracepoint probe is attached for this array. */
  enabled = false;
  /** EVENT_FILE_FL_SOFT_DISABLED: attached for triggers, but records are discarded. */
  softDisabled = false;
  /** sm_ref: soft-mode users (triggers on this event, enable_event triggers pointing at it). */
  smRef = 0;
  /** tm_ref: triggers attached (TRIGGER_MODE while > 0). */
  tmRef = 0;
  /** TRIGGER_COND: some trigger needs the record (a filter, or a post trigger). */
  triggerCond = false;
  /** EVENT_FILE_FL_WAS_ENABLED (dynamic events): removing the event then resets this array's buffers. */
  wasEnabled = false;
  filter: EventFilterState | null = null;
  /** Newest first, as the kernel lists them. */
  triggers: TriggerData[] = [];

  constructor(
    readonly owner: ArrayEvents,
    readonly type: TraceEventType,
  ) {}

  get tr() {
    return this.owner.tr;
  }

  get filtered(): boolean {
    return this.filter?.prog != null;
  }

  /** __ftrace_event_enable_disable(). */
  enableDisable(enable: boolean, soft: boolean): void {
    let softMode = this.smRef !== 0;
    if (!enable) {
      let disable: boolean;
      if (soft) {
        if (--this.smRef > 0) return;
        this.smRef = Math.max(0, this.smRef);
        disable = this.softDisabled;
        softMode = false;
      } else disable = !softMode;
      if (disable && this.enabled) this.setEnabled(false);
      this.softDisabled = softMode;
      return;
    }
    if (!soft) this.softDisabled = false;
    else if (++this.smRef > 1) return;
    if (!this.enabled) {
      if (soft) this.softDisabled = true;
      this.setEnabled(true);
    }
  }

  private setEnabled(on: boolean): void {
    this.enabled = on;
    try {
      this.owner.events.fileEnabledChanged(this);
    } catch (e) {
      // the event's reg() refused (a probe that cannot register): the file stays as it was
      this.enabled = !on;
      throw e;
    }
  }

  /** trace_event_trigger_enable_disable(): triggers keep the event attached in soft mode. */
  triggerModeRef(on: boolean): void {
    if (on) {
      if (++this.tmRef > 1) return;
      this.owner.events.tracepoints.probesChanged();
      this.enableDisable(true, true);
    } else {
      if (--this.tmRef > 0) return;
      this.tmRef = 0;
      this.owner.events.tracepoints.probesChanged();
      this.enableDisable(false, true);
    }
  }

  /** update_cond_flag(). */
  updateCond(): void {
    this.triggerCond = this.triggers.some((t) => t.filter !== undefined || t.cmd.post || t.cmd.needsRec === true);
  }

  /** Whether an event fired now leaves nothing here: no trigger to run, and the array records nothing. */
  get quiet(): boolean {
    return this.tmRef === 0 && this.tr.silent;
  }

  private ignoredPid(p: PendingRecord): boolean {
    return this.owner.pids.ignoresEvent(this.type.name, p.ctx, p.args);
  }

  filterInput(data: Buffer, ctx: ExecContext): FilterInput {
    return this.owner.events.filterInput(data, ctx);
  }

  /** The way of one fired event into this array. */
  handle(p: PendingRecord): void {
    const pidFilter = this.owner.pids.active;
    if ((this.tmRef > 0 || this.softDisabled || pidFilter) && !this.triggerCond) {
      if (this.tmRef > 0) callTriggers(this, null, p.ctx);
      if (this.softDisabled) return;
      if (pidFilter && this.ignoredPid(p)) return;
    }
    if (pidFilter && this.ignoredPid(p)) return;
    const cpu = p.ctx.cpu;
    // Soft-disabled and filtered events, and those whose triggers need the record, are built in a side
    // buffer when the ring buffer is off, so their triggers run with tracing off too.
    if (!this.softDisabled && !this.filtered && !this.triggerCond && !recordingOn(this.tr, cpu)) return;
    const data = p.data();
    let post = 0;
    if (this.triggerCond) post = callTriggers(this, data, p.ctx);
    let discard = this.softDisabled;
    if (!discard && this.filter?.prog && !runFilter(this.filter.prog, this.filterInput(data, p.ctx))) discard = true;
    if (!discard) this.tr.record(cpu, data);
    if (post) callPostTriggers(this, post, p.ctx);
  }

  /** A record for this event made elsewhere (dynamic events, ftrace/print): the same path. */
  commit(ctx: ExecContext, data: Buffer): void {
    this.handle({ ctx, data: () => data });
  }
}
