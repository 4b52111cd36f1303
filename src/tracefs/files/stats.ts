/** per_cpu/cpuN/stats: the ring buffer counters of one CPU. */
import { secsUsecs } from '../../trace/output.js';
import type { TraceArray } from '../../trace/trace_array.js';
import type { FileOps } from '../node.js';
import { simpleRead, trFile } from './common.js';

/** tracing_stats_read(): formatted afresh by every read (reading `now ts` ticks the counter clock). */
function statsText(tr: TraceArray, cpu: number): string {
  const rb = tr.buffer;
  const cb = rb.cpus[cpu];
  let s = `entries: ${cb.numEntries}\n`;
  s += `overrun: ${cb.overrun}\n`;
  s += `commit overrun: ${cb.commitOverrun}\n`;
  s += `bytes: ${cb.bytes}\n`;
  if (tr.clock.inNs) {
    s += `oldest event ts: ${secsUsecs(cb.oldestEventTs())}\n`;
    s += `now ts: ${secsUsecs(rb.now())}\n`;
  } else {
    s += `oldest event ts: ${cb.oldestEventTs()}\n`;
    s += `now ts: ${rb.now()}\n`;
  }
  s += `dropped events: ${cb.dropped}\n`;
  s += `read events: ${cb.read}\n`;
  return s;
}

export function statsFile(tr: TraceArray, cpu: number): FileOps {
  return trFile(tr, simpleRead(() => statsText(tr, cpu)));
}
