/**
 * The function profiler's files (FUNCTION_PROFILER): function_profile_enabled
 * and trace_stat/function<cpu>.
 */
import type { ProfilerSettings } from '../../ftrace/function_profiler.js';
import type { Tracing } from '../../trace/tracing.js';
import { Dir, File, type FileOps } from '../node.js';
import { parseUlong, seqRead } from '../seq_file.js';
import { simpleRead } from './common.js';

/** What the profiler reads from the top-level options and tracing_thresh. */
function profilerSettings(tracing: Tracing): ProfilerSettings {
  const top = () => tracing.top;
  const graphOpt = (name: string) => top().tracerOptions.get('function_graph')?.has(name) ?? true;
  return {
    graphTime: () => (tracing.kernel.profile.profilerCoreOptions ? top().options.has('graph-time') : graphOpt('graph-time')),
    sleepTime: () => graphOpt('sleep-time'),
    threshNs: () => tracing.tracingThresh * 1000,
    textOffset: () => top().options.has('prof-text-offset'),
  };
}

export function functionProfileEnabledFile(tracing: Tracing): FileOps {
  const prof = tracing.ftrace.profiler;
  return {
    ...simpleRead(() => `${prof.enabled ? 1 : 0}\n`),
    write(_f, data) {
      const on = parseUlong(data, 10) !== 0;
      prof.setEnabled(on, tracing.top.ftrace.fa.ops.funcHash, profilerSettings(tracing));
      return data.length;
    },
  };
}

/** trace_stat/: one function<cpu> file per CPU. */
export function traceStatDir(tracing: Tracing): Dir {
  const dir = new Dir('trace_stat', 0o750);
  const prof = tracing.ftrace.profiler;
  const settings = profilerSettings(tracing);
  for (let cpu = 0; cpu < tracing.kernel.nrCpus; cpu++) {
    dir.add(new File(`function${cpu}`, 0o440, seqRead(() => prof.show(cpu, settings))));
  }
  return dir;
}
