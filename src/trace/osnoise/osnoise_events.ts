/**
 * The osnoise:* trace events (include/trace/events/osnoise.h): each noise the
 * osnoise workload sees (NMI, IRQ, softirq, thread), every noise over the
 * threshold, and — where the series has them — each period's summary.
 * Built in when the osnoise tracer is; the workload fires them by name.
 */
import { loadCatalogue } from '../events/catalogue.js';
import { splitDecl } from '../events/field_layout.js';
import { type PrintEnvSource, StaticEventType } from '../events/static_event.js';
import type { TraceEvents } from '../events/trace_events.js';
import type { EventField } from '../event_type.js';

type Decl = [decl: string, offset: number, size: number, signed?: boolean];

/** `__print_ns_to_secs(REC->f), __print_ns_without_secs(REC->f)` as the format file spells them. */
const ns = (f: string) => `(REC->${f}) / 1000000000UL, (REC->${f}) % 1000000000UL`;

interface OsnoiseEventDef {
  name: string;
  fields: Decl[];
  printFmt: string;
}

function defs(softirqNames: string, sampleEvents: boolean, timerlat: boolean): OsnoiseEventDef[] {
  const out: OsnoiseEventDef[] = [];
  if (sampleEvents) {
    out.push({
      name: 'osnoise_sample',
      fields: [['u64 runtime', 8, 8], ['u64 noise', 16, 8], ['u64 max_sample', 24, 8], ['int hw_count', 32, 4, true], ['int irq_count', 36, 4, true], ['int nmi_count', 40, 4, true], ['int softirq_count', 44, 4, true], ['int thread_count', 48, 4, true]],
      printFmt: '"runtime=%llu noise=%llu max_sample=%llu hw_count=%d irq_count=%d nmi_count=%d softirq_count=%d thread_count=%d", REC->runtime, REC->noise, REC->max_sample, REC->hw_count, REC->irq_count, REC->nmi_count, REC->softirq_count, REC->thread_count',
    });
    if (timerlat) {
      out.push({
        name: 'timerlat_sample',
        fields: [['u64 timer_latency', 8, 8], ['unsigned int seqnum', 16, 4], ['int context', 20, 4, true]],
        printFmt: '"timer_latency=%llu seqnum=%u context=%d", REC->timer_latency, REC->seqnum, REC->context',
      });
    }
  }
  out.push(
    {
      name: 'thread_noise',
      fields: [['char comm[16]', 8, 16], ['u64 start', 24, 8], ['u64 duration', 32, 8], ['pid_t pid', 40, 4, true]],
      printFmt: `"%8s:%d start %llu.%09u duration %llu ns", REC->comm, REC->pid, ${ns('start')}, REC->duration`,
    },
    {
      name: 'softirq_noise',
      fields: [['u64 start', 8, 8], ['u64 duration', 16, 8], ['int vector', 24, 4, true]],
      printFmt: `"%8s:%d start %llu.%09u duration %llu ns", ${softirqNames}, REC->vector, ${ns('start')}, REC->duration`,
    },
    {
      name: 'irq_noise',
      fields: [['u64 start', 8, 8], ['u64 duration', 16, 8], ['__data_loc char[] desc', 24, 4], ['int vector', 28, 4, true]],
      printFmt: `"%s:%d start %llu.%09u duration %llu ns", __get_str(desc), REC->vector, ${ns('start')}, REC->duration`,
    },
    {
      name: 'nmi_noise',
      fields: [['u64 start', 8, 8], ['u64 duration', 16, 8]],
      printFmt: `"start %llu.%09u duration %llu ns", ${ns('start')}, REC->duration`,
    },
    {
      name: 'sample_threshold',
      fields: [['u64 start', 8, 8], ['u64 duration', 16, 8], ['u64 interference', 24, 8]],
      printFmt: `"start %llu.%09u duration %llu ns interference %llu", ${ns('start')}, REC->duration, REC->interference`,
    },
  );
  return out;
}

/** show_softirq_name(REC->vector): irq:softirq_entry's table of the series, on this event's field. */
function softirqNames(events: TraceEvents): string {
  const entry = loadCatalogue(events.profile.dataSeries).events.find((e) => e.system === 'irq' && e.name === 'softirq_entry');
  const at = entry?.printFmt.indexOf('__print_symbolic(') ?? -1;
  if (!entry || at < 0) throw new Error('irq:softirq_entry has no softirq names in the event catalogue');
  return entry.printFmt.slice(at).replace('REC->vec', 'REC->vector');
}

/** Adds the osnoise system's events (in the header's order) when the kernel has the osnoise tracer. */
export function addOsnoiseEvents(events: TraceEvents, env: PrintEnvSource): void {
  const { features } = events.kernel;
  if (!features.has('osnoise-tracer') && !features.has('timerlat-tracer')) return;
  const list = defs(softirqNames(events), events.profile.osnoiseSampleEvents, features.has('timerlat-tracer'));
  for (const d of list.reverse()) {
    const fields: EventField[] = d.fields.map(([decl, offset, size, signed]) => ({ ...splitDecl(decl), offset, size, signed: signed === true }));
    const type = new StaticEventType({ system: 'osnoise', name: d.name, id: events.allocEventId(), fields, printFmt: d.printFmt }, env);
    events.addEventType(type, events.tracepointRegistration(type));
  }
}
