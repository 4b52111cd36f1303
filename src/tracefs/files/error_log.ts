/** error_log: read the last errors; open for write with O_TRUNC (`echo > error_log`) clears them. */
import type { TraceArray } from '../../trace/trace_array.js';
import { O_TRUNC, type FileOps } from '../node.js';
import { seqRead } from '../seq_file.js';
import { trFile } from './common.js';

export function errorLogFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    open(f) {
      if (f.writable && f.flags & O_TRUNC) tr.tracing.errorLog.clear(tr);
    },
    ...seqRead(() => tr.tracing.errorLog.show(tr)),
    write(_f, data) {
      return data.length;
    },
  });
}
