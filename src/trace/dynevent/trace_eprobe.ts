/**
 * Event probes at run time (trace_eprobe.c): enabling an eprobe in a trace
 * array puts a hidden trigger on the attached event's file there (in soft
 * mode, so the attached event fires without being recorded itself); each
 * record of that event, through the eprobe's `if` filter, becomes a record
 * of the eprobe built from the attached record's fields.
 */
import type { ExecContext } from '../../kernel/context.js';
import { fail } from '../../kernel/errno.js';
import { TRACE_ENTRY_SIZE, writeCommonHeader } from '../event_type.js';
import type { EventFile } from '../events/event_file.js';
import { applyTriggerFilter } from '../events/filter/event_filter.js';
import { ETT_EVENT_EPROBE, type RecTriggerCommand, type TriggerData } from '../events/triggers/trigger.js';
import { buildProbeRecord } from '../probe/fetch_exec.js';
import type { EprobeLocation, ProbeEvent, TraceProbe } from '../probe/trace_probe.js';
import type { DynEvents, ProbeRuntime } from './dyn_events.js';
import type { ProbeEventType } from './probe_event_type.js';
import { bumpPreempt } from './probe_context.js';
import { probeMemory } from './probe_memory.js';

/** The trigger an enabled eprobe leaves on its attached event (one per eprobe and trace array). */
interface EprobeTrigger extends TriggerData {
  eprobe: ProbeEvent;
  /** The eprobe's own event file in that array: where its records go. */
  own: EventFile;
}

export class EprobeRuntime implements ProbeRuntime {
  private readonly cmd: RecTriggerCommand;

  constructor(private readonly dyn: DynEvents) {
    this.cmd = {
      name: 'eprobe',
      type: ETT_EVENT_EPROBE,
      post: false,
      needsRec: true,
      hidden: true,
      parse: () => fail('EINVAL'),
      countFunc: () => true,
      trigger: () => {},
      triggerRec: (data, _file, ctx, rec) => this.fire(data as EprobeTrigger, ctx, rec),
      print: () => '',
    };
  }

  added(_tp: TraceProbe): void {}

  removed(_tp: TraceProbe): void {}

  enable(_ev: ProbeEvent, _type: ProbeEventType): void {}

  disable(_ev: ProbeEvent, _type: ProbeEventType): void {}

  /** enable_eprobe() / disable_eprobe(): the trigger on the attached event's file of that array. */
  fileEnabled(ev: ProbeEvent, _type: ProbeEventType, file: EventFile, on: boolean): void {
    const loc = ev.primary.loc as EprobeLocation;
    const te = this.dyn.events;
    const base = te.find(loc.system, loc.event);
    if (!base) {
      if (on) fail('ENODEV');
      return;
    }
    const bf = te.array(file.tr).file(base);
    if (on) {
      const data: EprobeTrigger = { cmd: this.cmd, count: -1, counted: false, paused: false, eprobe: ev, own: file };
      if (loc.filter !== undefined) {
        data.filter = applyTriggerFilter(bf, loc.filter);
        data.filterStr = loc.filter;
      }
      // appended: user triggers run first
      bf.triggers.push(data);
      bf.triggerModeRef(true);
      bf.updateCond();
    } else {
      const i = bf.triggers.findIndex((t) => (t as EprobeTrigger).eprobe === ev && (t as EprobeTrigger).own === file);
      if (i < 0) return;
      bf.triggers.splice(i, 1);
      bf.triggerModeRef(false);
      bf.updateCond();
    }
  }

  /** __eprobe_trace_func(): the eprobe's record from the attached one. */
  private fire(data: EprobeTrigger, ctx: ExecContext, rec: Buffer): void {
    const ev = data.eprobe;
    const tp = ev.primary;
    if (!tp || data.own.softDisabled) return;
    const type = this.dyn.typeOf(ev);
    if (!type) return;
    // the trigger runs while the attached record is being committed, preemption still off for it
    const rctx = bumpPreempt(ctx);
    const buf = buildProbeRecord(tp, TRACE_ENTRY_SIZE, { record: rec, comm: ctx.task.comm, mem: probeMemory(this.dyn.kernel, ctx.task) }, (b) =>
      writeCommonHeader(b, type.id, rctx),
    );
    data.own.commit(rctx, buf);
  }
}
