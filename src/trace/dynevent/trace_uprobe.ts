/**
 * uprobe events at run time (trace_uprobe.c): defined, listed, enabled and
 * disabled; the emulator probes no user code, so they never hit.
 */
import type { ProbeEvent, TraceProbe } from '../probe/trace_probe.js';
import type { DynEvents, ProbeRuntime } from './dyn_events.js';
import type { ProbeEventType } from './probe_event_type.js';

export class UprobeRuntime implements ProbeRuntime {
  constructor(readonly dyn: DynEvents) {}
  added(_tp: TraceProbe): void {}
  removed(_tp: TraceProbe): void {}
  enable(_ev: ProbeEvent, _type: ProbeEventType): void {}
  disable(_ev: ProbeEvent, _type: ProbeEventType): void {}
}
