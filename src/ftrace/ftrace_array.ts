/**
 * What ftrace keeps per trace array: its ftrace_ops (the top level's is
 * global_ops) whose hashes set_ftrace_filter / set_ftrace_notrace edit, the
 * `:mod:` filters waiting for their module, its function probes, and its
 * set_ftrace_pid / set_ftrace_notrace_pid lists (with function-fork).
 */
import type { Kernel } from '../kernel/kernel.js';
import type { ModuleNotifier } from '../kernel/module.js';
import type { Task } from '../kernel/task.js';
import type { Ftrace } from './ftrace.js';
import type { FtraceHash } from './ftrace_hash.js';
import { FTRACE_OPS_FL_DYNAMIC, FTRACE_OPS_FL_PID, FtraceOps, type FtracePidFilter } from './ftrace_ops.js';
import { FuncProbes } from './func_probe.js';

/** A `func:mod:module` filter for a module not loaded (struct ftrace_mod_load). */
export interface FtraceModLoad {
  func: string;
  module: string;
}

/**
 * A set_ftrace_filter command (`func:cmd[:param]`): may change the hash
 * being edited or act on the trace array (undefined for filter files of no
 * trace array: commands then fail with ENODEV). Throws a KernelError to fail the write.
 */
export type FtraceCommand = (fa: FtraceArray | undefined, hash: FtraceHash, func: string, cmd: string, param: string | undefined, enable: boolean) => void;

export class FtraceArray implements FtracePidFilter {
  readonly kernel: Kernel;
  /** tr->ops: the function tracer's ops, whose hashes the filter files edit. */
  readonly ops: FtraceOps;
  modTrace: FtraceModLoad[] = [];
  modNotrace: FtraceModLoad[] = [];
  readonly probes: FuncProbes;
  /** set_ftrace_pid (null: no list). */
  pids: Set<number> | null = null;
  /** set_ftrace_notrace_pid. */
  noPids: Set<number> | null = null;
  private following = false;
  private readonly onFork = (child: Task, parent: Task | undefined) => this.forked(child, parent);
  private readonly onExit = (task: Task) => this.exited(task);
  private readonly onModule: ModuleNotifier = (mod, state) => {
    if (state === 'coming') this.processCachedMods(mod.def.name);
    else if (state === 'going') this.ftrace.clearModFromHashes(this.ops.funcHash, [...this.ftrace.moduleRecords(mod.def.name)].map((r) => this.ftrace.records.fns[r].id));
  };

  constructor(
    readonly ftrace: Ftrace,
    /** The trace array this belongs to (opaque here). */
    readonly owner: unknown,
    top: boolean,
  ) {
    this.kernel = ftrace.kernel;
    this.ops = new FtraceOps({
      func: () => {},
      funcSym: 'ftrace_stub',
      flags: FTRACE_OPS_FL_PID | (top ? 0 : FTRACE_OPS_FL_DYNAMIC),
      private: owner,
      pids: this,
    });
    this.probes = new FuncProbes(this.ftrace, owner);
    this.kernel.modules.notifiers.add(this.onModule);
  }

  // ------------------------------------------------------------------ modules

  /** process_cached_mods(): `:mod:` filters waiting for this module are applied now and forgotten. */
  private processCachedMods(module: string): void {
    for (const [which, key] of [['filter', 'modTrace'], ['notrace', 'modNotrace']] as const) {
      const waiting = this[key].filter((m) => m.module === module);
      if (waiting.length === 0) continue;
      this[key] = this[key].filter((m) => m.module !== module);
      const hash = this.ops.funcHash[which].copy();
      for (const m of waiting) this.ftrace.matchRecords(hash, m.func, m.module);
      if (which === 'filter') hash.mod = this.modTrace.length > 0;
      this.ftrace.setHash(this.ops.funcHash, which, hash);
    }
  }

  // ------------------------------------------------------------------ pids

  pidsEnabled(): boolean {
    return this.pids !== null || this.noPids !== null;
  }

  /** trace_ignore_this_task(). */
  ignores(task: Task): boolean {
    return (this.pids !== null && !this.pids.has(task.pid)) || (this.noPids !== null && this.noPids.has(task.pid));
  }

  /** A pid list was written (pid_write()): PID ops switch to (or from) pid filtering. */
  setPids(which: 'pids' | 'noPids', list: Set<number> | null): void {
    this[which] = list && list.size ? list : null;
    this.pidsChanged();
  }

  private pidsChanged(): void {
    this.ftrace.updatePidFunc();
    this.ftrace.fgraph.updatePidFunc();
  }

  /** ftrace_pid_follow_fork(): function-fork adds children of listed tasks to the lists (and drops exiting ones). */
  followFork(on: boolean): void {
    if (on === this.following) return;
    this.following = on;
    const life = this.kernel.taskLifecycle;
    if (on) {
      life.forked.add(this.onFork);
      life.exited.add(this.onExit);
    } else {
      life.forked.delete(this.onFork);
      life.exited.delete(this.onExit);
    }
  }

  /** trace_filter_add_remove_task() at fork. */
  private forked(child: Task, parent: Task | undefined): void {
    if (!parent) return;
    for (const list of [this.pids, this.noPids]) if (list && list.has(parent.pid)) list.add(child.pid);
  }

  private exited(task: Task): void {
    this.pids?.delete(task.pid);
    this.noPids?.delete(task.pid);
  }

  // ------------------------------------------------------------------ teardown

  /** The instance goes away: probes off, ops off, pid lists and fork following dropped. */
  destroy(): void {
    this.probes.clear();
    this.kernel.modules.notifiers.delete(this.onModule);
    if (this.ftrace.opsList.includes(this.ops)) this.ftrace.unregister(this.ops);
    this.followFork(false);
    this.pids = null;
    this.noPids = null;
  }
}
