/** Builds the tracefs file tree over the tracing subsystem. */
import type { Caller, TaskOf } from '../kernel/caller.js';
import type { TraceArray } from '../trace/trace_array.js';
import type { Tracing } from '../trace/tracing.js';
import { addEventFiles } from './eventfs.js';
import { addCoreFiles, addTopFiles } from './files/index.js';
import { addRemotesDir } from './files/remotes.js';
import { Dir, type SuperBlock } from './node.js';
import { Tracefs } from './tracefs.js';

/** Files every trace array has, at the top and in each instance. */
function addInstanceFiles(dir: Dir, tr: TraceArray): void {
  addCoreFiles(dir, tr);
  addEventFiles(dir, tr);
}

function instancesDir(tracing: Tracing): Dir {
  return new Dir('instances', 0o750, {
    mkdir(dir: Dir, name: string, _caller: Caller) {
      const tr = tracing.createInstance(name);
      const idir = dir.add(new Dir(name, 0o750));
      addInstanceFiles(idir, tr);
    },
    rmdir(dir: Dir, name: string) {
      // EBUSY while the instance is held; else the tracing side undoes all of it
      tracing.removeInstance(name);
      dir.remove(name);
    },
  });
}

export function buildTracefs(tracing: Tracing, sb?: SuperBlock, taskOf?: TaskOf): Tracefs {
  const root = new Dir('', 0o700);
  addTopFiles(root, tracing);
  addInstanceFiles(root, tracing.top);
  root.add(instancesDir(tracing));
  addRemotesDir(root, tracing);
  return new Tracefs(root, tracing.kernel, sb, taskOf);
}
