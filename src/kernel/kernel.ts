/**
 * The emulated kernel: time, CPUs, tasks, and the call paths that operations
 * on the mount run. It knows nothing of the filesystem that drives it.
 */
import { availableParallelism } from 'node:os';
import type { Caller } from './caller.js';
import type { Btf } from './btf.js';
import type { CallSites } from './call_sites.js';
import { Clock } from './clock.js';
import type { InsnModel } from './insn_model.js';
import { loadCallSites, loadInsnModel, loadKprobeBlacklist, loadModuleTypes, loadSymbols, loadTypes, type SymbolSource } from './kernel_symbols.js';
import type { KprobeBlacklist } from './kprobe_blacklist.js';
import { DEFAULT_SERIES, type Series } from './series.js';
import type { KallsymsTable } from './symbol_table.js';
import type { Task } from './task.js';
import { TaskTable } from './tasks.js';
import { TracepointRegistry } from './tracepoint.js';

export interface KernelOptions {
  /** Kernel series to behave as (default 7.2). */
  series?: Series;
  /** Number of CPUs (default: the host's). */
  cpus?: number;
  /** Seed for everything random in the background activity. */
  seed?: number;
  /** Symbols and BTF: the built-in model of the series (default), or the machine's running kernel. */
  symbols?: SymbolSource;
}

/** A system call made on the mount, as the kernel path that serves it needs to know it. */
export interface Syscall {
  name: 'openat' | 'read' | 'write' | 'close' | 'getdents64' | 'newfstatat' | 'mkdir' | 'rmdir' | 'fchownat' | 'fchmodat' | 'poll' | 'truncate';
  /** Path relative to the tracefs root. */
  path: string;
  /** Bytes asked for (read/write). */
  count?: number;
}

export class Kernel {
  readonly series: Series;
  readonly nrCpus: number;
  readonly clock = new Clock();
  readonly tasks: TaskTable;
  readonly seed: number;
  readonly symbolSource: SymbolSource;
  private symtab?: KallsymsTable;
  private btf?: Btf;
  private insnModel?: InsnModel;
  private blacklist?: KprobeBlacklist;
  private calls?: CallSites;
  /** Static tracepoints kernel code fires (sched_switch, sys_enter, ...); the trace layer attaches probes. */
  readonly tracepoints = new TracepointRegistry();

  constructor(opts: KernelOptions = {}) {
    this.series = opts.series ?? DEFAULT_SERIES;
    this.symbolSource = opts.symbols ?? 'builtin';
    this.nrCpus = Math.max(1, opts.cpus ?? availableParallelism());
    this.seed = opts.seed ?? 1;
    this.tasks = new TaskTable(this.nrCpus);
  }

  /** kallsyms and the ftrace function list (loaded on first use, then shared by every kernel of the process). */
  get symbols(): KallsymsTable {
    return (this.symtab ??= loadSymbols(this.symbolSource, this.series));
  }

  /** Prototypes and struct layouts (vmlinux BTF). */
  get types(): Btf {
    return (this.btf ??= loadTypes(this.symbolSource, this.series));
  }

  /** A loaded module's BTF (split on vmlinux's), if it has one. */
  moduleTypes(module: string): Btf | undefined {
    return loadModuleTypes(this.symbolSource, this.series, module);
  }

  /** Where instructions start inside functions: kprobes at func+offs off a boundary get EILSEQ. */
  get insns(): InsnModel {
    return (this.insnModel ??= loadInsnModel(this.symbolSource, this.series));
  }

  /** /sys/kernel/debug/kprobes/blacklist: no kprobe inside these (EINVAL). */
  get kprobeBlacklist(): KprobeBlacklist {
    return (this.blacklist ??= loadKprobeBlacklist(this.symbolSource, this.series));
  }

  /** Return offsets of calls (`ksys_read+0x7b` after calling vfs_read). */
  get callSites(): CallSites {
    return (this.calls ??= loadCallSites(this.symbolSource, this.series, this.symbols, this.insns));
  }

  /** The task of a calling process. */
  taskOf(caller: Caller): Task {
    return this.tasks.fromCaller(caller, this.nrCpus);
  }

  /**
   * Runs `body` as the kernel side of `call` in the caller's task. The body
   * may return a promise (a read that sleeps); the call returns when it does.
   */
  syscall<T>(caller: Caller, call: Syscall, body: (task: Task) => T): T {
    void call;
    return body(this.taskOf(caller));
  }
}
