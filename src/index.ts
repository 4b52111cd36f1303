/** tracefs-emu as a library: an emulated kernel, its tracing, and the tracefs over them. */
import { availableParallelism, cpus } from 'node:os';
import type { Ftrace } from './ftrace/ftrace.js';
import { pidTasks, type TaskOf } from './kernel/caller.js';
import { Kernel, type KernelOptions } from './kernel/kernel.js';
import { Tracing } from './trace/tracing.js';
import type { SuperBlock } from './tracefs/node.js';
import { buildDebugfs } from './tracefs/debugfs.js';
import { kprobesDebugView } from './ftrace/kprobes_debugfs.js';
import { buildTracefs } from './tracefs/tree.js';
import type { Tracefs } from './tracefs/tracefs.js';

export interface EmulatorOptions extends KernelOptions {
  /** Mount-wide owner defaults (the tracefs uid=/gid= options). */
  sb?: SuperBlock;
  /**
   * Who maps the process behind a request to its task, made once the kernel
   * is: by default a task per calling pid, nothing read from the machine
   * (pidTasks); the daemon's host driver mirrors the machine's processes.
   */
  callers?: (kernel: Kernel) => TaskOf;
}

export interface Emulator {
  kernel: Kernel;
  tracing: Tracing;
  /** The ftrace core (tracing's): kprobes, fprobes, fgraph, rethook. */
  ftrace: Ftrace;
  fs: Tracefs;
  /** The emulated debugfs (/sys/kernel/debug: kprobes/…), served beside the tracefs. */
  debugfs: Tracefs;
  /** The task a request of a caller runs in. */
  taskOf: TaskOf;
}

/**
 * An emulator with as many CPUs as the machine unless told: the machine's,
 * not the ones this process may run on (a daemon kept to one CPU still
 * mirrors processes running on the others).
 */
export function createEmulator(opts: EmulatorOptions = {}): Emulator {
  const kernel = new Kernel({ ...opts, cpus: opts.cpus ?? (cpus().length || availableParallelism()) });
  const taskOf = opts.callers?.(kernel) ?? pidTasks(kernel);
  const tracing = new Tracing(kernel);
  const fs = buildTracefs(tracing, opts.sb, taskOf);
  const { ftrace } = tracing;
  const debugfs = buildDebugfs(kernel, { kprobes: kprobesDebugView(ftrace), taskOf });
  return { kernel, tracing, ftrace, fs, debugfs, taskOf };
}

export { Kernel } from './kernel/kernel.js';
export { KernelError, errno } from './kernel/errno.js';
export type { Caller, TaskOf } from './kernel/caller.js';
export { Tracefs, Handle } from './tracefs/tracefs.js';
export { Tracing } from './trace/tracing.js';
export { Ftrace } from './ftrace/ftrace.js';
export { buildDebugfs, type KprobesDebugView } from './tracefs/debugfs.js';
export { Kprobe, type KprobeSpec } from './ftrace/kprobe.js';
export { Kprobes } from './ftrace/kprobes.js';
export { Kretprobe, type KretprobeInstance } from './ftrace/kretprobes.js';
export { Fprobe, registerFprobe, unregisterFprobe, enableFprobe, disableFprobe, type FprobeEntry, type FprobeExit } from './ftrace/fprobe.js';
export { collectHookStats, formatHookStats, type HookStats } from './ftrace/hook_stats.js';
export { DEFAULT_SERIES, isSeries, type Series } from './kernel/series.js';
