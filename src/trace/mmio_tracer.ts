/**
 * The mmiotrace tracer (kernel/trace/trace_mmiotrace.c): memory-mapped I/O
 * of drivers being traced, which the emulated kernel has none of — it
 * records nothing. Selecting it does what enable_mmiotrace() does: every
 * CPU but the first goes offline (the header's #P counts one) until another
 * tracer is selected.
 */
import type { Tracer } from './tracer.js';
import type { Tracing } from './tracing.js';

function mmioTracer(tracing: Tracing): Tracer {
  /** The CPUs enter_uniprocessor() took down, for leave_uniprocessor(). */
  let downed: number[] = [];
  return {
    name: 'mmiotrace',
    init(tr) {
      tr.reset();
      const cpus = tracing.kernel.cpus;
      const first = cpus.find((c) => c.online);
      downed = cpus.filter((c) => c.online && c !== first).map((c) => c.id);
      for (const id of downed) cpus[id]!.online = false;
    },
    reset() {
      for (const id of downed) tracing.kernel.cpus[id]!.online = true;
      downed = [];
    },
    start(tr) {
      tr.reset();
    },
  };
}

export function registerMmioTracer(tracing: Tracing): void {
  tracing.tracers.register(mmioTracer(tracing));
}
