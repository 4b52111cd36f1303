/** Test helpers: an emulator whose trace arrays keep their records, and an ExecContext for any task. */
import type { ExecContext } from '../../src/kernel/context.js';
import type { Series } from '../../src/kernel/series.js';
import { Task } from '../../src/kernel/task.js';
import type { TraceArray } from '../../src/trace/trace_array.js';
import { testEmulator } from './emulator.js';
import { echo } from './tracefs.js';

export interface Captured {
  cpu: number;
  data: Buffer;
}

/** Replaces record() with a capture (until the ring buffer lands here). */
export function capture(tr: TraceArray): Captured[] {
  const out: Captured[] = [];
  tr.record = (cpu: number, data: Buffer) => {
    if (!tr.tracingOn) return false;
    out.push({ cpu, data: Buffer.from(data) });
    return true;
  };
  return out;
}

export function ctxOf(pid: number, comm: string, cpu = 0): ExecContext {
  const task = new Task(pid, pid, comm, 1);
  task.cpu = cpu;
  return { task, cpu, flags: 0, preemptCount: 0 };
}

export function emulator(series: Series = '7.2') {
  const e = testEmulator({ series });
  const w = (path: string, data: string, append = false) => echo(e.fs, path, data, append);
  const r = (path: string) => e.fs.readFile(path);
  const te = e.tracing.events;
  const top = capture(e.tracing.top);
  /** The text of captured records, "name: ..." as the trace file prints them. */
  const lines = (recs: Captured[] = top) =>
    recs.map((c) => e.tracing.eventTypes.byId(c.data.readUInt16LE(0))!.output({ cpu: c.cpu, ts: 0n, data: c.data }, { option: (n) => n === 'hash-ptr' }));
  return { ...e, w, r, te, top, lines, tp: e.kernel.tracepoints };
}

/** One scheduler switch from `prev` to `next`. */
export function fireSwitch(tp: ReturnType<typeof emulator>['tp'], prev: [number, string], next: [number, string], cpu = 0): void {
  tp.fire('sched_switch', ctxOf(prev[0], prev[1], cpu), {
    prev_comm: prev[1],
    prev_pid: prev[0],
    prev_prio: 120,
    prev_state: 1,
    next_comm: next[1],
    next_pid: next[0],
    next_prio: 120,
  });
}
