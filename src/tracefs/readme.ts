/**
 * The README file: a mini-HOWTO whose feature lines tools and selftests grep
 * for. Its paragraphs (readme_text.ts) appear as subsystems land: a
 * subsystem adds its key to `tracing.features`:
 *
 *   dynamic_ftrace, function, function_graph, stacktrace, stack_tracer,
 *   dynamic_events, kprobe_events, uprobe_events, fprobe_events,
 *   probe_btf_args, events, event_triggers, hist_triggers, synth_events
 *
 * The core paragraphs (trace, trace_pipe, buffers, clocks, markers,
 * instances, options, snapshot) are always there.
 */
import type { KernelProfile } from '../kernel/profiles/profile.js';
import { README_CHUNKS } from './readme_text.js';

export function readmeText(profile: KernelProfile, features: ReadonlySet<string> = new Set()): string {
  let out = '';
  for (const c of README_CHUNKS) {
    if (!c.when(features, profile)) continue;
    out += typeof c.text === 'string' ? c.text : c.text(profile);
  }
  return out;
}
