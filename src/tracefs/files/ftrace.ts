/** The ftrace files of a trace array and of the top level, as ftrace_init_tracefs() and friends create them. */
import type { TraceArray } from '../../trace/trace_array.js';
import type { Tracing } from '../../trace/tracing.js';
import { Dir, File, type FileOps } from '../node.js';
import { ulongFile } from '../seq_file.js';
import { ftraceRegexFile, graphHashFile } from './ftrace_filter.js';
import { availableFilterFunctionsFile, dynFtraceTotalInfoFile, enabledFunctionsFile } from './ftrace_functions.js';
import { ftracePidFile } from './ftrace_pid.js';
import { functionProfileEnabledFile, traceStatDir } from './ftrace_profile.js';
import { stackMaxSizeFile, stackTraceFile, stackTraceFilterFile } from './ftrace_stack.js';

/** Files of every trace array: the function filters and pid lists. */
export function addFtraceFiles(dir: Dir, tr: TraceArray): void {
  const add = (name: string, perm: number, fops: FileOps) => dir.add(new File(name, perm, fops));
  add('set_ftrace_filter', 0o640, ftraceRegexFile(tr, 'filter'));
  add('set_ftrace_notrace', 0o640, ftraceRegexFile(tr, 'notrace'));
  add('set_ftrace_pid', 0o640, ftracePidFile(tr, 'pids'));
  add('set_ftrace_notrace_pid', 0o640, ftracePidFile(tr, 'noPids'));
}

/** Files only the top level has. */
export function addFtraceTopFiles(root: Dir, tracing: Tracing): void {
  const { kernel, ftrace } = tracing;
  const add = (name: string, perm: number, fops: FileOps) => root.add(new File(name, perm, fops));
  add('available_filter_functions', 0o440, availableFilterFunctionsFile(kernel, false));
  add('available_filter_functions_addrs', 0o440, availableFilterFunctionsFile(kernel, true));
  add('enabled_functions', 0o440, enabledFunctionsFile(ftrace, 'enabled'));
  add('touched_functions', 0o440, enabledFunctionsFile(ftrace, 'touched'));
  add('dyn_ftrace_total_info', 0o440, dynFtraceTotalInfoFile(ftrace));
  add('set_graph_function', 0o640, graphHashFile(tracing.top, 'function'));
  add('set_graph_notrace', 0o640, graphHashFile(tracing.top, 'notrace'));
  const g = tracing.graphGlobals;
  add('max_graph_depth', 0o640, ulongFile(() => g.maxDepth, (v) => (g.maxDepth = v >>> 0)));
  add('stack_max_size', 0o640, stackMaxSizeFile(ftrace));
  add('stack_trace', 0o440, stackTraceFile(ftrace));
  add('stack_trace_filter', 0o640, stackTraceFilterFile(ftrace));
  if (kernel.features.has('function-profiler')) {
    add('function_profile_enabled', 0o640, functionProfileEnabledFile(tracing));
    root.add(traceStatDir(tracing));
  }
}
