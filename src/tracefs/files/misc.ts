/** Small attribute files: tracing_on, tracing_thresh, tracing_max_latency, printk_formats. */
import type { TraceArray } from '../../trace/trace_array.js';
import type { Tracing } from '../../trace/tracing.js';
import type { FileOps } from '../node.js';
import { printkFormatsText } from '../../trace/trace_printk.js';
import { seqRead } from '../seq_file.js';
import { simpleRead, trFile, writeUlong } from './common.js';

/** tracing_on (rb_simple_read/write): any non-zero value turns recording on. */
export function tracingOnFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    ...simpleRead(() => (tr.tracingOn ? '1\n' : '0\n')),
    write(_f, data) {
      tr.tracingOn = writeUlong(data) !== 0;
      return data.length;
    },
  });
}

/** tracing_thresh: latency threshold in microseconds (0 = off). */
export function tracingThreshFile(tracing: Tracing): FileOps {
  return {
    ...simpleRead(() => `${tracing.tracingThresh}\n`),
    write(_f, data) {
      tracing.tracingThresh = writeUlong(data);
      tracing.top.tracer.updateThresh?.(tracing.top);
      return data.length;
    },
  };
}

/** tracing_max_latency: the latency tracers' maximum, kept in ns and shown in microseconds (tracing_nsecs_read/write). */
export function tracingMaxLatencyFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    ...simpleRead(() => `${Math.floor(tr.maxLatency / 1000)}\n`),
    write(_f, data) {
      tr.maxLatency = writeUlong(data) * 1000;
      return data.length;
    },
  });
}

/** printk_formats: the trace_printk() format strings of the kernel (none built in) and of its loaded modules. */
export function printkFormatsFile(tracing: Tracing): FileOps {
  return seqRead(() => printkFormatsText(tracing));
}
