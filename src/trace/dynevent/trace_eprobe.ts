/**
 * Event probes (trace_eprobe.c): a TraceEprobe holds the event it is
 * attached to while it exists; enabling it in a trace array puts a hidden
 * trigger on the attached event's file there (in soft mode, so the attached
 * event fires without being recorded itself), and each record of that event,
 * through the eprobe's `if` filter, becomes a record of the eprobe built from
 * the attached record's fields. The parser half is trace_eprobe_parse.ts.
 */
import type { ExecContext } from '../../kernel/context.js';
import { fail } from '../../kernel/errno.js';
import { TRACE_ENTRY_SIZE, writeCommonHeader } from '../event_type.js';
import type { EventFile } from '../events/event_file.js';
import { applyTriggerFilter } from '../events/filter/event_filter.js';
import { ETT_EVENT_EPROBE, type RecTriggerCommand, type TriggerData } from '../events/triggers/trigger.js';
import { buildProbeRecord } from '../probe/fetch_exec.js';
import type { KRet } from '../probe/parse_context.js';
import type { EventView } from '../probe/probe_env.js';
import { ProbeDynEvent, type TraceProbe } from '../probe/trace_probe.js';
import { bumpPreempt } from './probe_context.js';
import { probeMemory } from './probe_memory.js';
import type { DynEventRegistry, DynEventRuntime } from './trace_dynevent.js';

interface EprobeLocation {
  system: string;
  event: string;
  /** The `if` filter, as rebuilt from argv (space-joined). */
  filter?: string;
  attached: EventView;
}

export class TraceEprobe extends ProbeDynEvent {
  readonly type = 'eprobe';
  /** The trigger it keeps on the attached event's file of each trace array where it is on, by its own file there. */
  private readonly triggers = new Map<EventFile, { base: EventFile; data: TriggerData }>();

  constructor(
    reg: DynEventRegistry,
    tp: TraceProbe,
    readonly loc: EprobeLocation,
  ) {
    super(reg, tp);
  }

  protected showHead(): string {
    const { tp, loc } = this;
    return `e:${tp.group}/${tp.name} ${loc.system}.${loc.event}`;
  }

  /** `SYSTEM/EVENT` or `SYSTEM.EVENT`. */
  protected matchHead(word: string): boolean {
    let slash = word.indexOf('/');
    if (slash < 0) slash = word.indexOf('.');
    if (slash < 0) return false;
    return word.slice(0, slash) === this.loc.system && word.slice(slash + 1) === this.loc.event;
  }

  /** A dynamic event it is attached to is held while the eprobe exists. */
  register(): KRet {
    const held = this.reg.event(this.loc.system, this.loc.event);
    if (held) held.refs++;
    return 0;
  }

  protected unregister(): void {
    const held = this.reg.event(this.loc.system, this.loc.event);
    if (held && held.refs > 0) held.refs--;
  }

  /** Eprobes attach per trace array (fileEnabled). */
  enable(): void {}

  disable(): void {}

  /** enable_eprobe() / disable_eprobe(): the trigger on the attached event's file of that array. */
  fileEnabled(file: EventFile, on: boolean): void {
    const te = this.reg.live().events;
    const base = te.find(this.loc.system, this.loc.event);
    if (!base) {
      if (on) fail('ENODEV');
      return;
    }
    const bf = te.array(file.tr).file(base);
    if (on) {
      const rt = this.reg.live();
      const cmd: RecTriggerCommand = {
        name: 'eprobe',
        type: ETT_EVENT_EPROBE,
        post: false,
        needsRec: true,
        hidden: true,
        parse: () => fail('EINVAL'),
        countFunc: () => true,
        trigger: () => {},
        triggerRec: (_data, _file, ctx, rec) => this.fire(rt, file, ctx, rec),
        print: () => '',
      };
      const data: TriggerData = { cmd, count: -1, counted: false, paused: false };
      if (this.loc.filter !== undefined) {
        data.filter = applyTriggerFilter(bf, this.loc.filter);
        data.filterStr = this.loc.filter;
      }
      this.triggers.set(file, { base: bf, data });
      // appended: user triggers run first
      bf.triggers.push(data);
      bf.triggerModeRef(true);
      bf.updateCond();
    } else {
      const t = this.triggers.get(file);
      if (!t) return;
      this.triggers.delete(file);
      const i = t.base.triggers.indexOf(t.data);
      if (i < 0) return;
      t.base.triggers.splice(i, 1);
      t.base.triggerModeRef(false);
      t.base.updateCond();
    }
  }

  /** __eprobe_trace_func(): the eprobe's record from the attached one, into its own file of that array. */
  private fire(rt: DynEventRuntime, own: EventFile, ctx: ExecContext, rec: Buffer): void {
    if (own.softDisabled) return;
    const ev = this.event;
    // the trigger runs while the attached record is being committed, preemption still off for it
    const rctx = bumpPreempt(ctx);
    const buf = buildProbeRecord(this.tp, TRACE_ENTRY_SIZE, { record: rec, comm: ctx.task.comm, mem: probeMemory(rt.kernel, ctx.task) }, (b) =>
      writeCommonHeader(b, ev.id, rctx),
    );
    own.commit(rctx, buf);
  }

  /** print_eprobe_event(). */
  printHead(): string {
    return `(${this.loc.system}.${this.loc.event})`;
  }
}
