/**
 * The dynamic-event control files at the tracefs root: dynamic_events (every
 * type), kprobe_events, uprobe_events, synthetic_events (one type each), and
 * kprobe_profile / uprobe_profile (hits and misses per probe).
 */
import type { DynEvents } from '../../trace/dynevent/dyn_events.js';
import type { DynEventFile } from '../../trace/dynevent/trace_dynevent.js';
import { kprobeProfile } from '../../trace/dynevent/trace_kprobe.js';
import { uprobeProfile } from '../../trace/dynevent/trace_uprobe.js';
import type { Tracing } from '../../trace/tracing.js';
import { Dir, File, O_TRUNC, type FileOps } from '../node.js';
import { seqRead } from '../seq_file.js';

/** A control file: open with O_TRUNC for writing removes its events (dyn_events_release_all()). */
function controlFile(dyn: DynEvents, file: DynEventFile): FileOps {
  return {
    open(f) {
      if (f.writable && f.flags & O_TRUNC) dyn.truncate(file);
    },
    ...seqRead(() => dyn.listing(file)),
    write(f, data) {
      return dyn.write(file, data, f.task);
    },
  };
}

export function addDynEventFiles(root: Dir, tracing: Tracing): void {
  const dyn = tracing.dynEvents;
  for (const file of ['dynamic_events', 'kprobe_events', 'uprobe_events', 'synthetic_events'] as const) {
    root.add(new File(file, 0o640, controlFile(dyn, file)));
  }
  root.add(new File('kprobe_profile', 0o440, seqRead(() => kprobeProfile(dyn.registry))));
  root.add(new File('uprobe_profile', 0o440, seqRead(() => uprobeProfile(dyn.registry))));
}
