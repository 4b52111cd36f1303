/**
 * The preemptirq:* trace events (include/trace/events/preemptirq.h): the
 * edges of interrupt-disabled and preemption-disabled sections, the caller
 * and its parent kept as 32-bit offsets from _stext. The kernel has them
 * when the latency tracers are built (CONFIG_PREEMPTIRQ_TRACEPOINTS);
 * PreemptIrq fires them.
 */
import type { EventField } from '../event_type.js';
import { splitDecl } from './field_layout.js';
import { type PrintEnvSource, StaticEventType } from './static_event.js';
import type { TraceEvents } from './trace_events.js';

const NAMES = ['irq_disable', 'irq_enable', 'preempt_disable', 'preempt_enable'];

const FIELDS: EventField[] = [
  { ...splitDecl('s32 caller_offs'), offset: 8, size: 4, signed: true },
  { ...splitDecl('s32 parent_offs'), offset: 12, size: 4, signed: true },
];

const PRINT_FMT = '"caller=%pS parent=%pS", (void *)((unsigned long)(_stext) + REC->caller_offs), (void *)((unsigned long)(_stext) + REC->parent_offs)';

/** Adds the preemptirq system's events (in the header's order) when the kernel has the latency tracers. */
export function addPreemptIrqEvents(events: TraceEvents, env: PrintEnvSource): void {
  if (!events.kernel.features.has('latency-tracers')) return;
  for (const name of [...NAMES].reverse()) {
    const type = new StaticEventType({ system: 'preemptirq', name, id: events.allocEventId(), fields: FIELDS, printFmt: PRINT_FMT }, env);
    events.addEventType(type, events.tracepointRegistration(type));
  }
}
