/** Builds the tracefs file tree over the tracing subsystem. */
import type { Caller } from '../kernel/caller.js';
import type { TraceArray } from '../trace/trace_array.js';
import type { Tracing } from '../trace/tracing.js';
import { Dir, File, type SuperBlock } from './node.js';
import { readmeText } from './readme.js';
import { seqRead, ulongFile } from './seq_file.js';
import { Tracefs } from './tracefs.js';

/** Files every trace array has, at the top and in each instance. */
export function addInstanceFiles(dir: Dir, tr: TraceArray): void {
  dir.add(
    new File('tracing_on', 0o640, ulongFile(
      () => (tr.tracingOn ? 1 : 0),
      (v) => {
        tr.tracingOn = v !== 0;
      },
    )),
  );
}

function instancesDir(tracing: Tracing): Dir {
  return new Dir('instances', 0o750, {
    mkdir(dir: Dir, name: string, _caller: Caller) {
      const tr = tracing.createInstance(name);
      const idir = dir.add(new Dir(name, 0o750));
      addInstanceFiles(idir, tr);
    },
    rmdir(dir: Dir, name: string) {
      tracing.removeInstance(name);
      dir.remove(name);
    },
  });
}

export function buildTracefs(tracing: Tracing, sb?: SuperBlock): Tracefs {
  const root = new Dir('', 0o700);
  root.add(new File('README', 0o440, seqRead(() => readmeText(tracing.kernel.series))));
  addInstanceFiles(root, tracing.top);
  root.add(instancesDir(tracing));
  return new Tracefs(root, tracing.kernel, sb);
}
