/** trace_clock and timestamp_mode. */
import type { TraceArray } from '../../trace/trace_array.js';
import type { FileOps } from '../node.js';
import { simpleRead, trFile, writeText } from './common.js';

export function traceClockFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    ...simpleRead(() => tr.showClock()),
    write(_f, data) {
      tr.setClock(writeText(data, 64).trim());
      return data.length;
    },
  });
}

export function timestampModeFile(tr: TraceArray): FileOps {
  return trFile(
    tr,
    simpleRead(() => (tr.timeStampAbs ? 'delta [absolute]\n' : '[delta] absolute\n')),
  );
}
