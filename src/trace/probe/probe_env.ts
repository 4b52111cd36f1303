/**
 * What the probe parsers need to know about the kernel around them. Pure
 * data queries, so parsing stays a pure function of (command, environment,
 * existing events); the file layer builds one from the emulated kernel.
 */
import type { CType, TypeDb } from '../../kernel/ctypes.js';
import type { ErrnoName } from '../../kernel/errno.js';
import type { KprobeSite } from '../../kernel/kprobe_site.js';
import type { KernelProfile } from '../../kernel/profiles/profile.js';
import type { EventField } from '../event_type.js';
import type { ErrorLogEntry } from './probe_log.js';

/** A kallsyms entry (text or data). */
export interface KsymView {
  name: string;
  addr: bigint;
  size: number;
  /** kallsyms type letter (t, T, d, D, b, r, ...). */
  type: string;
  /** Module name, undefined for vmlinux. */
  module?: string;
}

/** A text symbol as ftrace sees it. */
export interface KfuncView extends KsymView {
  /** Has an __fentry__ site (listed in available_filter_functions). */
  traceable: boolean;
  /** Offset of the __fentry__ call: 4 after an endbr64, else 0. */
  fentryOffset: number;
  /** Starts with endbr64. */
  endbr: boolean;
}

export interface KallsymsEnv {
  /** kallsyms_lookup_name(): the first symbol of that name; `mod:sym` looks in a module. */
  lookupName(name: string): KsymView | undefined;
  /** kallsyms_lookup_size_offset(): the symbol containing `addr`. */
  lookupAddr(addr: bigint): KsymView | undefined;
  /** How many symbols have this name: in vmlinux (module undefined), in that module, or in any module ('*'). */
  countName(name: string, module?: string): number;
  /** The function that starts at `addr`, with its ftrace view. */
  functionAt(addr: bigint): KfuncView | undefined;
  /** Is this module loaded. */
  moduleLoaded(name: string): boolean;
  /** Traceable functions whose name matches the glob (an fprobe's symbol pattern, glob_match()). */
  countTraceable(glob: string): number;
  /** Records ftrace_set_filter() would match with this word: a name, a filter glob, or a 1-based index into available_filter_functions. */
  countFtraceFilter(word: string): number;
}

interface TracepointView {
  name: string;
  /** The probe stub's function name (`__probestub_<name>`), whose BTF prototype gives the arguments. */
  probestub: string;
  module?: string;
}

/** A trace event that exists outside the dynamic-event registry (static, ftrace, ...). */
export interface EventView {
  system: string;
  name: string;
  /** Event fields (common fields excluded), as `format` shows them. */
  fields: readonly EventField[];
  /** Kind of event: eprobes refuse probe events and ftrace-internal ones. */
  kind: 'static' | 'ftrace' | 'kprobe' | 'uprobe' | 'eprobe' | 'fprobe' | 'synthetic';
}

export interface ProbeEnv {
  /** The kernel series' profile: where probe types differ between series. */
  readonly profile: KernelProfile;
  /** num_possible_cpus(): the default kretprobe maxactive is max(10, 2 x this). */
  readonly possibleCpus: number;
  readonly kallsyms: KallsymsEnv;
  /**
   * register_kprobe()'s verdict on an address (kernel/kprobe_site.ts), with
   * trace_kprobe's notrace-function check first when `notraceCheck`.
   */
  kprobeSite(addr: bigint, notraceCheck: boolean): KprobeSite;
  /** BTF (CONFIG_PROBE_EVENTS_BTF_ARGS); undefined when the kernel has none. */
  readonly btf?: TypeDb;
  /** A BTF type by id (the kernel sometimes reads a size as a type id; see btf_arg.ts). */
  btfTypeById?(id: number): CType | undefined;
  /** for_each_kernel_tracepoint + modules. */
  findTracepoint(name: string): TracepointView | undefined;
  /** Events outside the registry, by system and name. */
  findEvent(system: string, name: string): EventView | undefined;
  /** kern_path(LOOKUP_FOLLOW) + d_is_reg() for uprobes; `inode` identifies the file (symlinks resolved). */
  statPath(path: string): { kind: 'regular' | 'other'; inode: string } | ErrnoName;
  /**
   * create_event_filter() for eprobe `if` clauses: null when the filter
   * parses, else the error_log entry the filter parser leaves.
   */
  checkFilter?(event: EventView, filter: string): ErrorLogEntry | null;
}
