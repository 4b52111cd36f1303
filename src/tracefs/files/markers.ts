/** trace_marker and trace_marker_raw: user space writes records into the buffer. */
import type { TraceArray } from '../../trace/trace_array.js';
import { writeTraceMarker, writeTraceMarkerRaw } from '../../trace/trace_marker.js';
import type { FileOps } from '../node.js';
import { callerContext, trFile } from './common.js';

/** Preemption depth the writer's record shows: the per-CPU copy runs with preemption disabled. */
function markerPreempt(tr: TraceArray): number {
  return tr.profile.markerCopy === 'per-cpu' ? 1 : 0;
}

export function traceMarkerFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    write(_f, data, _pos, task) {
      return writeTraceMarker(tr, data, callerContext(tr, task, markerPreempt(tr)));
    },
  });
}

export function traceMarkerRawFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    write(_f, data, _pos, task) {
      return writeTraceMarkerRaw(tr, data, callerContext(tr, task, markerPreempt(tr)));
    },
  });
}
