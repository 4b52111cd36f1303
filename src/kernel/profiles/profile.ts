/**
 * What sets one kernel series apart from another, entry by entry, each named
 * for the behaviour it selects. Code asks `kernel.profile.<entry>` (or
 * `tr.profile`, `env.profile`), never the series' name: a new series is a
 * new profile — usually an older one spread, with the entries that changed
 * overridden — and its data directory.
 */
import type { ModuleDef } from '../module.js';
import type { Series } from '../series.js';

/** The build a series reproduces, as its banner shows it (values from the real Debian kernels' /proc/version). */
export interface KernelBuild {
  /** uname -r. */
  readonly release: string;
  /** LINUX_COMPILE_BY@LINUX_COMPILE_HOST. */
  readonly compileBy: string;
  /** LINUX_COMPILER. */
  readonly compiler: string;
  /** uname -v. */
  readonly version: string;
}

/** dyn_ftrace_total_info of the real kernel: the emulator's pages and groups scale from it. */
interface FtracePages {
  /** Function records per ftrace page. */
  readonly perPage: number;
  /** Page groups. */
  readonly groups: number;
  /** `ftrace boot update time` (ns), where the file shows update times. */
  readonly bootNs?: number;
}

/** Type ids of the ftrace-internal records that differ between series. */
interface FtraceEntryIds {
  /** ftrace/print (trace_marker). */
  readonly print: number;
  /** ftrace/raw_data (trace_marker_raw). */
  readonly rawData: number;
  /** ftrace/func_repeats. */
  readonly funcRepeats: number;
}

export interface KernelProfile<S extends string = string> {
  /** The series' name (`--kernel`, `kernel.series`). */
  readonly series: S;
  /** Whose data the built-in model loads: data/kernel-<dataSeries>/ and data/events-<dataSeries>.json. */
  readonly dataSeries: Series;
  /** uname and /proc/version (linux_proc_banner, the latency header's release). */
  readonly build: KernelBuild;
  /** The sample modules of the series' source (samples/, built =m): what /lib/modules holds. */
  readonly sampleModules: readonly ModuleDef[];
  /** preempt_model_str(): the `M:` of the latency header. */
  readonly preemptModel: string;
  /** The trace remote interface (trace_remote.c): remotes/<name>/ for each remote that registers (a hypervisor's, remote_test's). */
  readonly traceRemotes: boolean;

  // ---- ftrace core and fprobe

  /** First ftrace_ops trampoline page, after the boot-time modules. */
  readonly trampolineBase: bigint;
  /** dyn_ftrace_total_info's figures. */
  readonly ftracePages: FtracePages;
  /** enabled_functions lists the users of a manager ops (`subops:`). */
  readonly showsSubops: boolean;
  /** fprobe runs on fgraph (entry data on the shadow stack, one shared ops) or on its own ftrace_ops and a rethook. */
  readonly fprobeBackend: 'fgraph' | 'rethook';
  /** register_fprobe() of an fprobe already registered. */
  readonly fprobeReregisterErrno: 'EEXIST' | 'EBUSY';
  /** register_fprobe() of a filter that matches nothing traceable (EINVAL: through ftrace_set_filter()). */
  readonly fprobeNoMatchErrno: 'ENOENT' | 'EINVAL';

  // ---- function tracers

  /** Function records can carry the arguments: func-args, funcgraph-args, the `args[]` fields. */
  readonly functionArgs: boolean;
  /** The funcgraph records' depth: `int`, or unsigned (unsigned long at entry, unsigned int at exit). */
  readonly graphDepth: 'int' | 'unsigned';
  /** What print_graph_retval() puts before the value (`ret=` or ` = `). */
  readonly graphRetvalLabel: string;
  /** The profiler's graph-time (with prof-text-offset) is a core option, not a function_graph option. */
  readonly profilerCoreOptions: boolean;

  // ---- trace arrays and markers

  /** Type ids of ftrace/print, raw_data and func_repeats. */
  readonly ftraceEntryIds: FtraceEntryIds;
  /**
   * How trace_marker(_raw) take the user's bytes: straight into the reserved
   * event, with room kept for `<faulted>`; or through a per-CPU buffer with
   * preemption off (raw writes capped at TRACE_MARKER_MAX_SIZE, files
   * released by tracing_mark_release).
   */
  readonly markerCopy: 'in-event' | 'per-cpu';
  /** Offset from tracing_mark_write of the ip a marker record carries. */
  readonly markWriteIpOffset: bigint;
  /** The copy_trace_marker option: top-level marker writes go to every array that has it. */
  readonly copyTraceMarker: boolean;
  /** The bitmask-list option. */
  readonly bitmaskList: boolean;
  /** common_flags bit 0x02 is NEED_RESCHED_LAZY (else IRQS_NOSUPPORT, shown `X`). */
  readonly lazyResched: boolean;
  /** tracing_max_latency at the top level even without a latency tracer. */
  readonly maxLatencyFile: boolean;
  /** osnoise/options has TIMERLAT_ALIGN and osnoise/ has timerlat_align_us (with the timerlat tracer). */
  readonly timerlatAlign: boolean;
  /** The osnoise:osnoise_sample and osnoise:timerlat_sample events (each period's summary as an event). */
  readonly osnoiseSampleEvents: boolean;

  // ---- events

  /** events/header_page declares `overwrite` as `int` (signed) rather than `char`. */
  readonly headerPageIntOverwrite: boolean;
  /** set_event takes `:mod:<module>` (kept for modules not loaded yet); README says so. */
  readonly setEventModules: boolean;
  /** show_event_filters and show_event_triggers at the root of each array. */
  readonly showEventFilters: boolean;
  /** Syscall events record the user memory of their arguments (syscall_user_buf_size) and print small values in decimal. */
  readonly syscallUserData: boolean;
  /** Bit of I_DIRTY_SYNC, the first of the inode state flags print fmts name. */
  readonly inodeDirtyFirstBit: number;
  /** The filter parser refuses a filter that ends after an operator (`a == 1 &&`). */
  readonly filterRejectsTrailingOp: boolean;

  // ---- dynamic events

  /** When an fprobe event's fprobe registers: at definition (disabled until enabled) or when enabled. */
  readonly fprobeRegisters: 'definition' | 'enable';
  /** `f<MAXACTIVE>` is taken and shown (else BAD_MAXACT). */
  readonly fprobeMaxactive: boolean;
  /** A failed fprobe event registration returns EINVAL whatever its cause (the error_log still says why). */
  readonly fprobeEventFailsEinval: boolean;
  /** Too many probe arguments logs TOO_MANY_ARGS besides failing with E2BIG. */
  readonly logsTooManyArgs: boolean;
  /** A dynamic_events command no probe type takes logs `dynevent: No matching dynamic event type`. */
  readonly logsNoMatchingDynevent: boolean;
  /**
   * Typecasts in probe arguments: none; `(struct)field->member` on eprobe
   * fields only; or BTF typecasts `(struct[,field])arg->member` (the field
   * option: container_of) on eprobes and function entry/exit probes, nested
   * like dereferences.
   */
  readonly probeTypecasts: 'none' | 'eprobe' | 'btf';
  /** MAX_ARGSTR_LEN: the longest argument expression (ARG_TOO_LONG). */
  readonly probeArgMaxLen: number;
  /**
   * TRACEPROBE_MAX_NESTED_LEVEL: dereferences, typecasts and this_cpu_*()
   * one inside another (TOO_MANY_NESTED past it); undefined: only the fetch
   * program's length bounds them (TOO_MANY_OPS).
   */
  readonly probeArgMaxNesting?: number;
  /** `$current` in kernel probe arguments: the task_struct's address, `$current->member` through BTF. */
  readonly probeCurrent: boolean;
  /** `this_cpu_read(<fetcharg>)` and `this_cpu_ptr(<fetcharg>)` in kernel probe arguments (not eprobes). */
  readonly probePerCpu: boolean;
  /** An eprobe argument without `$` names a field of the attached event (NO_EVENT_FIELD), rather than a BTF argument eprobes refuse. */
  readonly eprobeBareFields: boolean;
  /** A `$stackN` / `$argN` whose number kstrtoul() refuses fails with kstrtoul's errno (ERANGE on overflow), not EINVAL. */
  readonly probeVarNumberErrno: boolean;
  /**
   * parse_btf_field() moves the caret by `NULL - pointer` past the last
   * member of a path, so a later error in that argument has a garbage caret
   * (else the caret stays at the last member).
   */
  readonly btfFieldGarbageCaret: boolean;
  /** A register (`%reg`) in an eprobe or fprobe argument logs BAD_VAR, then BAD_FETCH_ARG too (else BAD_VAR alone). */
  readonly probeRegisterRefusalLogsTwice: boolean;
  /** The error_log text of FILE_ON_KPROBE (`@+offset` in a kernel probe). */
  readonly fileOnKprobeError: string;
  /** A kprobe symbol found in vmlinux is not looked for in modules too (number_of_same_symbols()). */
  readonly symbolCountVmlinuxFirst: boolean;
  /** Between the `name=fmt` pairs of a synthetic event's print fmt. */
  readonly synthFieldSeparator: string;

  // ---- README

  /** The file the README names for creating synthetic events. */
  readonly readmeSyntheticEvents: string;
}

/** Entries that switch something on or off: what a table row may depend on. */
export type ProfileSwitch = { [K in keyof KernelProfile]: KernelProfile[K] extends boolean ? K : never }[keyof KernelProfile];
