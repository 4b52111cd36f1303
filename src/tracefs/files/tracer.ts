/** current_tracer and available_tracers. */
import type { TraceArray } from '../../trace/trace_array.js';
import type { FileOps } from '../node.js';
import { simpleRead, trFile } from './common.js';

/** MAX_TRACER_SIZE: longer writes are cut. */
const MAX_TRACER_SIZE = 100;

export function currentTracerFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    ...simpleRead(() => `${tr.tracer.name}\n`),
    write(_f, data) {
      const name = data.subarray(0, MAX_TRACER_SIZE).toString('latin1').trim();
      tr.setTracer(name);
      return data.length;
    },
  });
}

export function availableTracersFile(tr: TraceArray): FileOps {
  return trFile(
    tr,
    simpleRead(() => `${tr.tracing.tracers.available(tr).map((t) => t.name).join(' ')}\n`),
  );
}
