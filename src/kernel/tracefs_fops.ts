/**
 * Which kernel functions the real kernel's tracefs files have as their
 * file_operations, by file name: what the emulated kernel calls when the
 * tracefs layer does not say (FileOps.names wins when it does).
 */
import type { KernelProfile } from './profiles/profile.js';
import type { FopNames } from './syscall.js';

const GENERIC_TR = { open: 'tracing_open_generic_tr', release: 'tracing_release_generic_tr' };
const FILE_TR = { open: 'tracing_open_file_tr', release: 'tracing_release_file_tr' };

const BY_NAME: Record<string, FopNames> = {
  trace: { open: 'tracing_open', read: 'seq_read', write: 'tracing_write_stub', release: 'tracing_release', fops: 'tracing_fops' },
  trace_pipe: { open: 'tracing_open_pipe', read: 'tracing_read_pipe', poll: 'tracing_poll_pipe', release: 'tracing_release_pipe', fops: 'tracing_pipe_fops' },
  trace_marker: { open: 'tracing_mark_open', write: 'tracing_mark_write', release: 'tracing_mark_release', fops: 'tracing_mark_fops' },
  trace_marker_raw: { open: 'tracing_mark_open', write: 'tracing_mark_raw_write', release: 'tracing_mark_release', fops: 'tracing_mark_raw_fops' },
  available_tracers: { open: 'show_traces_open', read: 'seq_read', release: 'tracing_seq_release', fops: 'show_traces_fops' },
  current_tracer: { ...GENERIC_TR, read: 'tracing_set_trace_read', write: 'tracing_set_trace_write', fops: 'set_tracer_fops' },
  README: { open: 'tracing_open_generic', read: 'tracing_readme_read', fops: 'tracing_readme_fops' },
  tracing_on: { ...GENERIC_TR, read: 'rb_simple_read', write: 'rb_simple_write', fops: 'rb_simple_fops' },
  buffer_size_kb: { ...GENERIC_TR, read: 'tracing_entries_read', write: 'tracing_entries_write', fops: 'tracing_entries_fops' },
  buffer_total_size_kb: { ...GENERIC_TR, read: 'tracing_total_entries_read', fops: 'tracing_total_entries_fops' },
  tracing_cpumask: { ...GENERIC_TR, read: 'tracing_cpumask_read', write: 'tracing_cpumask_write', fops: 'tracing_cpumask_fops' },
  set_event: { open: 'ftrace_event_set_open', read: 'seq_read', write: 'ftrace_event_write', release: 'ftrace_event_release', fops: 'ftrace_set_event_fops' },
  available_events: { open: 'ftrace_event_avail_open', read: 'seq_read', release: 'seq_release', fops: 'ftrace_avail_fops' },
  enable: { ...FILE_TR, read: 'event_enable_read', write: 'event_enable_write', fops: 'ftrace_enable_fops' },
  format: { open: 'trace_format_open', read: 'seq_read', release: 'seq_release', fops: 'ftrace_event_format_fops' },
  id: { read: 'event_id_read', fops: 'ftrace_event_id_fops' },
  filter: { ...FILE_TR, read: 'event_filter_read', write: 'event_filter_write', fops: 'ftrace_event_filter_fops' },
  trigger: { open: 'event_trigger_open', read: 'seq_read', write: 'event_trigger_write', release: 'event_trigger_release', fops: 'event_trigger_fops' },
  set_ftrace_filter: { open: 'ftrace_filter_open', read: 'seq_read', write: 'ftrace_filter_write', release: 'ftrace_regex_release', fops: 'ftrace_filter_fops' },
  set_ftrace_notrace: { open: 'ftrace_notrace_open', read: 'seq_read', write: 'ftrace_notrace_write', release: 'ftrace_regex_release', fops: 'ftrace_notrace_fops' },
  set_graph_function: { open: 'ftrace_graph_open', read: 'seq_read', write: 'ftrace_graph_write', release: 'ftrace_graph_release', fops: 'ftrace_graph_fops' },
  available_filter_functions: { open: 'ftrace_avail_open', read: 'seq_read', release: 'seq_release_private', fops: 'ftrace_avail_fops' },
  enabled_functions: { open: 'ftrace_enabled_open', read: 'seq_read', release: 'seq_release_private', fops: 'ftrace_enabled_fops' },
  dynamic_events: { open: 'dyn_event_open', read: 'seq_read', write: 'dyn_event_write', release: 'seq_release', fops: 'dynamic_events_ops' },
  kprobe_events: { open: 'probes_open', read: 'seq_read', write: 'probes_write', release: 'seq_release', fops: 'kprobe_events_ops' },
  stats: { ...GENERIC_TR, read: 'tracing_stats_read', fops: 'tracing_stats_fops' },
  saved_cmdlines: { open: 'tracing_saved_cmdlines_open', read: 'seq_read', release: 'seq_release', fops: 'tracing_saved_cmdlines_fops' },
  trace_pipe_raw: { open: 'tracing_buffers_open', read: 'tracing_buffers_read', poll: 'tracing_buffers_poll', release: 'tracing_buffers_release', fops: 'tracing_buffers_fops' },
  snapshot: { open: 'tracing_snapshot_open', read: 'seq_read', write: 'tracing_snapshot_write', release: 'tracing_snapshot_release', fops: 'snapshot_fops' },
  error_log: { open: 'tracing_err_log_open', read: 'seq_read', write: 'tracing_err_log_write', release: 'tracing_err_log_release', fops: 'tracing_err_log_fops' },
};

/** The f_op names of a tracefs file at `path` (relative to the mount). */
export function tracefsFops(path: string, profile: KernelProfile): FopNames | undefined {
  const parts = path.split('/');
  const name = parts[parts.length - 1]!;
  if (parts[parts.length - 2] === 'options') return { open: 'tracing_open_generic_tr', read: 'trace_options_core_read', write: 'trace_options_core_write', release: 'tracing_release_generic_tr', fops: 'trace_options_core_fops' };
  // A subsystem's (or all events') enable file: not events/<system>/<event>/enable.
  if (name === 'enable' && parts[parts.length - 4] !== 'events') {
    return { open: 'subsystem_open', read: 'system_enable_read', write: 'system_enable_write', release: 'subsystem_release', fops: 'ftrace_system_enable_fops' };
  }
  const f = BY_NAME[name];
  if (!f) return undefined;
  // Without the per-CPU copy buffer, trace_marker is released as any per-array file.
  if (profile.markerCopy === 'in-event' && f.release === 'tracing_mark_release') return { ...f, release: 'tracing_release_generic_tr' };
  return f;
}
