/**
 * An event's `hist` file (event_hist_fops): the histograms of its hist
 * triggers, and a poll that reports new hits — POLLIN since this file was
 * last read, POLLPRI since it was last polled or read.
 */
import { histFileText, histHits, histPollWait } from '../../trace/events/hist/hist_trigger.js';
import type { EventFile } from '../../trace/events/event_file.js';
import type { Tracing } from '../../trace/tracing.js';
import { type FileOps, type OpenFile, POLLIN, POLLPRI, POLLRDNORM } from '../node.js';
import { seqRead } from '../seq_file.js';

/** struct hist_file_data: hit counts seen by this open file. */
interface Seen {
  lastRead: bigint;
  lastAct: bigint;
}

export function histFileOps(tracing: Tracing, eventFile: () => EventFile): FileOps {
  const seen = new WeakMap<OpenFile, Seen>();
  const { read } = seqRead((f) => {
    const file = eventFile();
    const text = histFileText(tracing, file);
    const s = seen.get(f);
    if (s) s.lastRead = s.lastAct = histHits(file);
    return text;
  });
  return {
    open(f) {
      seen.set(f, { lastRead: 0n, lastAct: histHits(eventFile()) });
    },
    read,
    poll(f, wake) {
      const s = seen.get(f)!;
      histPollWait(tracing, wake);
      const n = histHits(eventFile());
      let mask = 0;
      if (s.lastRead !== n) mask |= POLLIN | POLLRDNORM;
      if (s.lastAct !== n) {
        s.lastAct = n;
        mask |= POLLPRI;
      }
      return mask;
    },
  };
}
