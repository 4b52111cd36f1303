/**
 * The core files of a trace array, as the kernel creates them at the top
 * level and in every instance (init_tracer_tracefs()), and the files only
 * the top level has.
 */
import type { TraceArray } from '../../trace/trace_array.js';
import type { Tracer } from '../../trace/tracer.js';
import type { Tracing } from '../../trace/tracing.js';
import { Dir, File } from '../node.js';
import { readmeText } from '../readme.js';
import { seqRead } from '../seq_file.js';
import {
  bufferPercentFile,
  bufferSizeFile,
  bufferSubbufSizeFile,
  bufferTotalSizeFile,
  freeBufferFile,
} from './buffer_size.js';
import { timestampModeFile, traceClockFile } from './clock.js';
import { savedCmdlinesFile, savedCmdlinesSizeFile, savedTgidsFile } from './cmdlines.js';
import { cpumaskFile } from './cpumask.js';
import { addDynEventFiles } from './dynevent_files.js';
import { errorLogFile } from './error_log.js';
import { addFtraceFiles, addFtraceTopFiles } from './ftrace.js';
import { hwlatDir, osnoiseDir } from './osnoise.js';
import { traceMarkerFile, traceMarkerRawFile } from './markers.js';
import { printkFormatsFile, tracingMaxLatencyFile, tracingOnFile, tracingThreshFile } from './misc.js';
import { addTracerOptionFiles, optionsDir, traceOptionsFile } from './options.js';
import { snapshotFile } from './snapshot.js';
import { statsFile } from './stats.js';
import { traceFile } from './trace.js';
import { tracePipeFile, tracePipeRawFile } from './trace_pipe.js';
import { availableTracersFile, currentTracerFile } from './tracer.js';

/** per_cpu/cpuN/. */
function perCpuDir(tr: TraceArray): Dir {
  const dir = new Dir('per_cpu', 0o750);
  for (let cpu = 0; cpu < tr.tracing.kernel.nrCpus; cpu++) {
    const d = dir.add(new Dir(`cpu${cpu}`, 0o750));
    d.add(new File('trace_pipe', 0o440, tracePipeFile(tr, cpu)));
    d.add(new File('trace', 0o640, traceFile(tr, { cpu })));
    d.add(new File('trace_pipe_raw', 0o440, tracePipeRawFile(tr, cpu)));
    d.add(new File('stats', 0o440, statsFile(tr, cpu)));
    d.add(new File('buffer_size_kb', 0o640, bufferSizeFile(tr, cpu)));
    d.add(new File('snapshot', 0o640, snapshotFile(tr, cpu)));
    d.add(new File('snapshot_raw', 0o440, tracePipeRawFile(tr, cpu, true)));
  }
  return dir;
}

/** Files every trace array has, at the top and in each instance. */
export function addCoreFiles(dir: Dir, tr: TraceArray): void {
  const add = (name: string, perm: number, fops: ConstructorParameters<typeof File>[2]) =>
    dir.add(new File(name, perm, fops));
  add('available_tracers', 0o440, availableTracersFile(tr));
  add('current_tracer', 0o640, currentTracerFile(tr));
  add('tracing_cpumask', 0o640, cpumaskFile(tr));
  add('trace_options', 0o640, traceOptionsFile(tr));
  add('trace', 0o640, traceFile(tr));
  add('trace_pipe', 0o440, tracePipeFile(tr));
  add('buffer_size_kb', 0o640, bufferSizeFile(tr));
  add('buffer_total_size_kb', 0o440, bufferTotalSizeFile(tr));
  add('free_buffer', 0o200, freeBufferFile(tr));
  add('trace_marker', 0o220, traceMarkerFile(tr));
  add('trace_marker_raw', 0o220, traceMarkerRawFile(tr));
  add('trace_clock', 0o640, traceClockFile(tr));
  if (!dir.get('tracing_on')) add('tracing_on', 0o640, tracingOnFile(tr));
  add('timestamp_mode', 0o440, timestampModeFile(tr));
  add('buffer_percent', 0o640, bufferPercentFile(tr));
  add('buffer_subbuf_size_kb', 0o640, bufferSubbufSizeFile(tr));
  add('snapshot', 0o640, snapshotFile(tr));
  add('error_log', 0o640, errorLogFile(tr));
  // Every array has it with the latency tracers (CONFIG_TRACER_MAX_TRACE); Debian's 6.12 only at the top.
  const latency = tr.tracing.kernel.features.has('latency-tracers');
  if (latency || (tr.profile.maxLatencyFile && tr.isTop)) add('tracing_max_latency', 0o640, tracingMaxLatencyFile(tr));
  addFtraceFiles(dir, tr);
  const options = dir.add(optionsDir(tr));
  tr.tracerWatchers.add((t: Tracer) => addTracerOptionFiles(options, tr, t));
  dir.add(perCpuDir(tr));
}

/** Files only the top level has. */
export function addTopFiles(root: Dir, tracing: Tracing): void {
  const add = (name: string, perm: number, fops: ConstructorParameters<typeof File>[2]) =>
    root.add(new File(name, perm, fops));
  add('README', 0o440, seqRead(() => readmeText(tracing.kernel.profile, tracing.features)));
  add('tracing_thresh', 0o640, tracingThreshFile(tracing));
  add('saved_cmdlines', 0o440, savedCmdlinesFile(tracing));
  add('saved_cmdlines_size', 0o640, savedCmdlinesSizeFile(tracing));
  add('saved_tgids', 0o440, savedTgidsFile(tracing));
  add('printk_formats', 0o440, printkFormatsFile(tracing));
  addFtraceTopFiles(root, tracing);
  addDynEventFiles(root, tracing);
  if (tracing.hwlat) root.add(hwlatDir(tracing.hwlat));
  if (tracing.osnoise) root.add(osnoiseDir(tracing.osnoise, tracing.kernel.nrCpus));
}
