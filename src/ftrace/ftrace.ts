/**
 * The ftrace core (kernel/trace/ftrace.c): the list of registered ftrace_ops,
 * the function records they are counted in, and the one dispatch made at each
 * patched __fentry__ site — straight to an ops' own trampoline when it is the
 * only user of the function, through the list function when several are.
 * It owns what hooks functions through it: fgraph, rethook, kprobes, fprobe,
 * the stack tracer, the function profiler, the graph hashes, the
 * set_ftrace_filter commands, and the ftrace state of each task.
 */
import { fail } from '../kernel/errno.js';
import type { Executor } from '../kernel/executor.js';
import type { Kernel } from '../kernel/kernel.js';
import type { PtRegs } from '../kernel/regs.js';
import type { KernelFunction } from '../kernel/symbols.js';
import type { Task } from '../kernel/task.js';
import {
  FTRACE_FL_DIRECT,
  FTRACE_FL_DIRECT_EN,
  FTRACE_FL_DISABLED,
  FTRACE_FL_ENABLED,
  FTRACE_FL_IPMODIFY,
  FTRACE_FL_MODIFIED,
  FTRACE_FL_REGS,
  FTRACE_FL_REGS_EN,
  FTRACE_FL_TOUCHED,
  FTRACE_FL_TRAMP,
  FTRACE_FL_TRAMP_EN,
  FTRACE_REF_MAX,
  FtraceRecords,
  RecordSet,
} from './dyn_ftrace.js';
import { Fgraph } from './fgraph.js';
import type { Fprobe } from './fprobe.js';
import { FprobeGraph } from './fprobe_fgraph.js';
import { FprobeRethook } from './fprobe_rethook.js';
import { FtraceHash, composeSubopsHash, hashContains, type FuncHash } from './ftrace_hash.js';
import {
  FTRACE_OPS_FL_ALLOC_TRAMP,
  FTRACE_OPS_FL_DELETED,
  FTRACE_OPS_FL_DIRECT,
  FTRACE_OPS_FL_DYNAMIC,
  FTRACE_OPS_FL_ENABLED,
  FTRACE_OPS_FL_IPMODIFY,
  FTRACE_OPS_FL_PID,
  FTRACE_OPS_FL_RCU,
  FTRACE_OPS_FL_RECURSION,
  FTRACE_OPS_FL_SAVE_REGS,
  FTRACE_OPS_FL_STUB,
  FTRACE_OPS_FL_SUBOP,
  FtraceOps,
} from './ftrace_ops.js';
import { FtraceCommands } from './ftrace_regex.js';
import { FunctionProfiler } from './function_profiler.js';
import { GraphHashes } from './graph_hash.js';
import { Kprobes } from './kprobes.js';
import { TRACE_LIST_START, traceClearRecursion, traceTestAndSetRecursion } from './recursion.js';
import { RethookCore } from './rethook.js';
import { RecordMatcher } from './record_match.js';
import { StackTracer } from './stack_tracer.js';
import { FtraceTasks } from './task_state.js';
import { ModuleDirectCalls } from './ftrace_direct.js';
import { TrampolineSpace } from './trampolines.js';

/** Records that keep their bits when their count drops to zero. */
const NOCLEAR_FLAGS = FTRACE_FL_DISABLED | FTRACE_FL_TOUCHED | FTRACE_FL_MODIFIED;

/** What a patched call site does: nothing, call one ops (through its trampoline), or the list function. */
const enum Site {
  Nop = 0,
  Ops = 1,
  List = 2,
}

export class Ftrace {
  readonly records: FtraceRecords;
  /** The kernel's call executor, whose __fentry__ sites this patches. */
  readonly exec: Executor;
  /** Registered ops, newest first (ftrace_ops_list); replaced, never mutated, so dispatch can iterate it. */
  opsList: readonly FtraceOps[] = [];
  readonly trampolines: TrampolineSpace;
  /** Per function id: what its call site does. */
  private readonly site: Uint8Array;
  /** Per function id: the ops a Site.Ops site calls. */
  private readonly siteOps: (FtraceOps | undefined)[];
  /** Listeners told when records change (enabled_functions readers need nothing, but stats may). */
  readonly onUpdate = new Set<() => void>();
  /** The ftrace fields of each task (recursion bits, shadow stack, sleep time). */
  readonly tasks = new FtraceTasks();
  /** The function-graph infrastructure (fgraph.c). */
  readonly fgraph: Fgraph;
  /** The return hooks' trampoline and the tasks' hooked returns (rethook.c). */
  readonly rethooks: RethookCore;
  /** kprobes and kretprobes (kprobes.c). */
  readonly kprobes: Kprobes;
  /** The fprobe implementation of the series (the profile's fprobeBackend). */
  readonly fprobeBackend: FprobeGraph | FprobeRethook;
  /** The fprobes registered now. */
  readonly fprobes = new Set<Fprobe>();
  /** The stack tracer (trace_stack.c). */
  readonly stackTracer: StackTracer;
  /** The function profiler (function_profile_enabled, trace_stat/). */
  readonly profiler: FunctionProfiler;
  /** set_graph_function / set_graph_notrace. */
  readonly graphHashes = new GraphHashes();
  /** Which records a filter word names. */
  readonly matcher: RecordMatcher;
  /** The commands set_ftrace_filter knows (ftrace_commands). */
  readonly commands = new FtraceCommands();
  /** Loaded modules' direct calls (register_ftrace_direct()). */
  readonly directCalls: ModuleDirectCalls;

  /** The ftrace core of a kernel: one per kernel (it takes over the executor's __fentry__ call). */
  constructor(readonly kernel: Kernel) {
    const table = kernel.symbols;
    this.exec = kernel.exec;
    this.records = new FtraceRecords(table.allTraceable(), table.functions.length);
    this.matcher = new RecordMatcher(this.records);
    // Records of modules not loaded wait disabled, as a module's do while it is coming.
    this.records.fns.forEach((f, r) => {
      if (!table.isLoaded(f)) this.records.flags[r] = FTRACE_FL_DISABLED;
    });
    kernel.modules.notifiers.add((mod, state) => {
      if (state === 'coming') this.moduleEnable(mod.def.name);
      else if (state === 'going') this.releaseMod(mod.def.name);
    });
    this.site = new Uint8Array(table.functions.length);
    this.siteOps = new Array(table.functions.length);
    this.trampolines = new TrampolineSpace(kernel.profile.trampolineBase);
    this.exec.fentry = (ip, parentIp, regs, task, fn) => this.fentry(ip, parentIp, regs, task, fn);
    this.fgraph = new Fgraph(this);
    this.exec.counting = { countsOnly: (id) => this.countsOnly(id), count: (task, calls, depth, times) => this.fgraph.count(task, calls, depth, times) };
    this.exec.quietness = {
      quiet: (id) => this.quiet(id),
      // No ops at all: whatever patched a site is not ftrace's, and not known to be quiet.
      all: () => this.opsList.length > 0 && this.opsList.every((op) => op.flags & FTRACE_OPS_FL_STUB || this.opQuiet(op)),
    };
    this.rethooks = new RethookCore(this);
    this.kprobes = new Kprobes(this);
    this.fprobeBackend = kernel.profile.fprobeBackend === 'rethook' ? new FprobeRethook(this) : new FprobeGraph(this);
    this.stackTracer = new StackTracer(this);
    this.profiler = new FunctionProfiler(this);
    this.directCalls = new ModuleDirectCalls(this);
  }

  // ------------------------------------------------------------------ dispatch

  private readonly byIp = new Map<bigint, number>();

  /** A function id from its ftrace ip (when the executor did not say which function it is). */
  private idOfIp(ip: bigint): number {
    let id = this.byIp.get(ip);
    if (id === undefined) {
      const fn = this.records.fns.find((f) => FtraceRecords.ip(f) === ip);
      id = fn ? fn.id : -1;
      this.byIp.set(ip, id);
    }
    return id;
  }

  /** The patched __fentry__ call: ftrace_caller / an ops trampoline. */
  private fentry(ip: bigint, parentIp: bigint, regs: PtRegs, task: Task, fn?: KernelFunction): void {
    const id = fn ? fn.id : this.idOfIp(ip);
    if (id < 0) return;
    try {
      switch (this.site[id]) {
        case Site.Ops:
          this.callOps(this.siteOps[id]!, ip, parentIp, regs, task, id);
          return;
        case Site.List:
          this.listFunc(id, ip, parentIp, regs, task);
          return;
      }
    } catch (e) {
      this.hookFailed(e);
    }
  }

  /** Whether a call of function `id` reaches only fgraph's ops, and through it only fgraph users that count calls (counted_calls.ts). */
  private countsOnly(id: number): boolean {
    const graph = this.fgraph.graphOps;
    switch (this.site[id]) {
      case Site.Ops:
        if (this.siteOps[id] !== graph) return false;
        break;
      case Site.List:
        for (const op of this.opsList) if (op !== graph && !(op.flags & FTRACE_OPS_FL_STUB) && hashContains(op.funcHash, id)) return false;
        break;
      default:
        return false;
    }
    return this.fgraph.countsOnly(id);
  }

  /** Whether every ops a call of function `id` reaches now returns at once, leaving nothing anyone could see. */
  private quiet(id: number): boolean {
    switch (this.site[id]) {
      case Site.Ops:
        return this.opQuiet(this.siteOps[id]!, id);
      case Site.List:
        for (const op of this.opsList) if (!(op.flags & FTRACE_OPS_FL_STUB) && hashContains(op.funcHash, id) && !this.opQuiet(op, id)) return false;
        return true;
      default:
        return false;
    }
  }

  /** Whether `op` returns at once for a call of function `id` (of any function when not given). */
  private opQuiet(op: FtraceOps, id?: number): boolean {
    return op === this.fgraph.graphOps ? this.fgraph.quiet(id) : op.quiet?.() === true;
  }

  /** Callbacks that threw (a bug in a tracer): counted and logged, never passed on to the traced code. */
  hookErrors = 0;

  hookFailed(e: unknown): void {
    if (this.hookErrors++ < 10) console.error(`tracefs-emu: ftrace callback failed: ${(e as Error)?.stack ?? String(e)}`);
  }

  /** The trampoline's call: ops->func, or ftrace_ops_assist_func for ops that need recursion protection. */
  private callOps(ops: FtraceOps, ip: bigint, parentIp: bigint, regs: PtRegs, task: Task, id: number): void {
    if (!(ops.flags & (FTRACE_OPS_FL_RECURSION | FTRACE_OPS_FL_RCU))) {
      ops.func(ip, parentIp, ops, regs, task, id);
      return;
    }
    const bit = traceTestAndSetRecursion(this.tasks, task, TRACE_LIST_START);
    if (bit < 0) return;
    try {
      ops.func(ip, parentIp, ops, regs, task, id);
    } finally {
      traceClearRecursion(this.tasks, task, bit);
    }
  }

  /** arch_ftrace_ops_list_func(): every registered ops whose hashes take this function, in list order. */
  private listFunc(id: number, ip: bigint, parentIp: bigint, regs: PtRegs, task: Task): void {
    const bit = traceTestAndSetRecursion(this.tasks, task, TRACE_LIST_START);
    if (bit < 0) return;
    try {
      for (const op of this.opsList) {
        if (op.flags & FTRACE_OPS_FL_STUB) continue;
        if (hashContains(op.funcHash, id)) op.func(ip, parentIp, op, regs, task, id);
      }
    } finally {
      traceClearRecursion(this.tasks, task, bit);
    }
  }

  /** What the static ftrace_caller calls (update_ftrace_function()). */
  private traceFunctionSite(): { site: Site; ops?: FtraceOps } {
    const list = this.opsList;
    if (list.length === 0) return { site: Site.Nop };
    if (list.length === 1 && !(list[0].flags & (FTRACE_OPS_FL_DYNAMIC | FTRACE_OPS_FL_RCU))) return { site: Site.Ops, ops: list[0] };
    return { site: Site.List };
  }

  /** Re-points the call site of record `r` after its flags changed (ftrace_replace_code()). */
  private updateSite(r: number, caller: { site: Site; ops?: FtraceOps }): void {
    const id = this.records.ids[r]!;
    const flags = this.records.flags[r]!;
    let site = Site.Nop;
    let ops: FtraceOps | undefined;
    if (flags & FTRACE_FL_ENABLED) {
      if (flags & FTRACE_FL_TRAMP_EN) {
        ops = this.findTrampOps(id);
        site = ops ? Site.Ops : Site.Nop;
      } else {
        site = caller.site;
        ops = caller.ops;
      }
    }
    this.site[id] = site;
    this.siteOps[id] = ops;
    this.exec.patchFentry(id, site !== Site.Nop);
    if (site === Site.Nop) this.active.delete(r);
    else this.active.add(r);
  }

  /** The records whose call sites are patched (a few, mostly: a change of the static caller re-points only these). */
  private readonly active = new Set<number>();

  // ------------------------------------------------------------------ records

  /** ftrace_find_tramp_ops_any(): the first ops with a trampoline that traces this function. */
  findTrampOps(id: number, exclude?: FtraceOps): FtraceOps | undefined {
    for (const op of this.opsList) {
      if (op === exclude || !op.trampoline) continue;
      if (hashContains(op.funcHash, id)) return op;
    }
    return undefined;
  }

  /** Every ops with a trampoline that traces this function, in list order (enabled_functions' tramp: parts). */
  trampOpsOf(id: number): FtraceOps[] {
    return this.opsList.filter((op) => op.trampoline && hashContains(op.funcHash, id));
  }

  /** test_rec_ops_needs_regs(). */
  private recNeedsRegs(id: number): boolean {
    return this.opsList.some((op) => op.flags & FTRACE_OPS_FL_SAVE_REGS && hashContains(op.funcHash, id));
  }

  /** __ftrace_hash_rec_update(): counts `ops` in (or out of) the records it traces (all but the notrace ones when its filter is empty; of `only`, if given). */
  private recUpdate(ops: FtraceOps, inc: boolean, touched: RecordSet, only?: ReadonlySet<number>): void {
    if (!(ops.flags & FTRACE_OPS_FL_ENABLED)) return;
    const h = ops.funcHash;
    const { indexOf, ids } = this.records;
    const notrace = h.notrace.empty ? undefined : h.notrace;
    if (h.filter.empty) {
      for (let r = 0; r < ids.length; r++) {
        if (notrace?.has(ids[r]!)) continue;
        if (only && !only.has(r)) continue;
        this.recCount(ops, inc, r, touched);
      }
      return;
    }
    for (const id of h.filter) {
      const r = indexOf[id]!;
      if (r < 0 || notrace?.has(id)) continue;
      if (only && !only.has(r)) continue;
      this.recCount(ops, inc, r, touched);
    }
  }

  /** One record of recUpdate(). */
  private recCount(ops: FtraceOps, inc: boolean, r: number, touched: RecordSet): void {
    const flags = this.records.flags;
    let f = flags[r]!;
    if (f & FTRACE_FL_DISABLED && !(f & FTRACE_FL_ENABLED)) return;
    if (inc) {
      if ((f & FTRACE_REF_MAX) === FTRACE_REF_MAX) return;
      f++;
      if (ops.flags & FTRACE_OPS_FL_DIRECT) f |= FTRACE_FL_DIRECT;
      if ((f & FTRACE_REF_MAX) === 1 && ops.trampoline) f |= FTRACE_FL_TRAMP;
      else f &= ~FTRACE_FL_TRAMP;
      if (ops.flags & FTRACE_OPS_FL_SAVE_REGS) f |= FTRACE_FL_REGS;
    } else {
      if ((f & FTRACE_REF_MAX) === 0) return;
      f--;
      if (ops.flags & FTRACE_OPS_FL_DIRECT) f &= ~FTRACE_FL_DIRECT;
      flags[r] = f >>> 0;
      const id = this.records.ids[r]!;
      if ((f & FTRACE_REF_MAX) > 0 && f & FTRACE_FL_REGS && ops.flags & FTRACE_OPS_FL_SAVE_REGS && !this.recNeedsRegs(id)) f &= ~FTRACE_FL_REGS;
      if ((f & FTRACE_REF_MAX) === 1 && this.findTrampOps(id, ops)) f |= FTRACE_FL_TRAMP;
      else f &= ~FTRACE_FL_TRAMP;
    }
    flags[r] = f >>> 0;
    touched.add(r);
  }

  /** ftrace_check_record() with update: the enabled/active bits follow the count and wanted bits. */
  private checkRecord(r: number): void {
    const flags = this.records.flags;
    let f = flags[r];
    if (f & FTRACE_FL_DISABLED && !(f & FTRACE_FL_ENABLED)) return;
    const count = f & FTRACE_REF_MAX;
    if (count) {
      f |= FTRACE_FL_ENABLED | FTRACE_FL_TOUCHED;
      f = f & FTRACE_FL_REGS ? f | FTRACE_FL_REGS_EN : f & ~FTRACE_FL_REGS_EN;
      f = f & FTRACE_FL_TRAMP ? f | FTRACE_FL_TRAMP_EN : f & ~FTRACE_FL_TRAMP_EN;
      if (f & (FTRACE_FL_DIRECT | FTRACE_FL_IPMODIFY)) f |= FTRACE_FL_MODIFIED;
      f = count === 1 && f & FTRACE_FL_DIRECT ? f | FTRACE_FL_DIRECT_EN : f & ~FTRACE_FL_DIRECT_EN;
    } else {
      f &= NOCLEAR_FLAGS;
    }
    flags[r] = f >>> 0;
  }

  /** A fresh set for the records an update touches. */
  private touched(): RecordSet {
    return new RecordSet(this.records.count);
  }

  /** What the static caller called at the last update. */
  private lastCaller: { site: Site; ops?: FtraceOps } = { site: Site.Nop };

  /**
   * ftrace_replace_code(): the records that changed get their call sites
   * re-pointed; when what the static caller calls changed (the list function
   * came or went), every enabled site is.
   */
  private commit(touched: RecordSet): void {
    const list = touched.list;
    const n = touched.size;
    for (let i = 0; i < n; i++) this.checkRecord(list[i]!);
    const caller = this.traceFunctionSite();
    const flags = this.records.flags;
    if (caller.site !== this.lastCaller.site || caller.ops !== this.lastCaller.ops) {
      const active = this.active;
      for (let i = 0; i < n; i++) if (flags[list[i]!]! & FTRACE_FL_ENABLED) active.add(list[i]!);
      // (updateSite() drops a record it unpatches from the set: deleting the current member is safe in a Set's loop)
      for (const r of active) this.updateSite(r, caller);
    } else {
      for (let i = 0; i < n; i++) this.updateSite(list[i]!, caller);
    }
    this.lastCaller = caller;
    // Sites may call other ops now without being patched or unpatched.
    this.exec.hooksChanged();
    for (const cb of this.onUpdate) cb();
  }

  // ------------------------------------------------------------------ modules

  /** Record indexes of a module's functions. */
  moduleRecords(module: string): Set<number> {
    const out = new Set<number>();
    this.records.fns.forEach((f, r) => {
      if (f.module === module) out.add(r);
    });
    return out;
  }

  /** ftrace_module_enable(): a coming module's records are enabled and counted by the ops that trace them. */
  private moduleEnable(module: string): void {
    const recs = this.moduleRecords(module);
    const flags = this.records.flags;
    for (const r of recs) flags[r] = (flags[r] & ~FTRACE_FL_DISABLED) >>> 0;
    this.matcher.forget();
    const touched = this.touched();
    for (const op of this.opsList) this.recUpdate(op, true, touched, recs);
    this.commit(touched);
  }

  /**
   * ftrace_release_mod(): the module's functions leave every ops' hashes
   * (as dead entries) and its records go: unpatched, and disabled until the
   * module comes again.
   */
  private releaseMod(module: string): void {
    const recs = this.moduleRecords(module);
    const ids = [...recs].map((r) => this.records.fns[r].id);
    for (const op of this.opsList) {
      for (const o of [op, ...op.subops]) this.clearModFromHashes(o.funcHash, ids);
    }
    const caller = this.traceFunctionSite();
    for (const r of recs) {
      this.records.flags[r] = FTRACE_FL_DISABLED;
      this.updateSite(r, caller);
    }
    this.matcher.forget();
    for (const cb of this.onUpdate) cb();
  }

  /** clear_mod_from_hashes() for one hash pair. */
  clearModFromHashes(h: FuncHash, ids: readonly number[]): void {
    h.filter.killIds(ids);
    h.notrace.killIds(ids);
  }

  // ------------------------------------------------------------------ ipmodify

  /** __ftrace_hash_update_ipmodify(): only one IPMODIFY ops per function (EBUSY). */
  private updateIpmodify(ops: FtraceOps, oldHash: FtraceHash, newHash: FtraceHash): void {
    if (!(ops.flags & FTRACE_OPS_FL_ENABLED) || !(ops.flags & FTRACE_OPS_FL_IPMODIFY)) return;
    const { indexOf, flags } = this.records;
    const set: number[] = [];
    for (const id of newHash) {
      const r = indexOf[id];
      if (r < 0 || oldHash.has(id)) continue;
      if (flags[r] & FTRACE_FL_IPMODIFY) {
        for (const s of set) flags[s] = (flags[s] & ~FTRACE_FL_IPMODIFY) >>> 0;
        fail('EBUSY');
      }
      set.push(r);
    }
    for (const r of set) flags[r] = (flags[r] | FTRACE_FL_IPMODIFY) >>> 0;
    for (const id of oldHash) {
      const r = indexOf[id];
      if (r >= 0 && !newHash.has(id)) flags[r] = (flags[r] & ~FTRACE_FL_IPMODIFY) >>> 0;
    }
  }

  // ------------------------------------------------------------------ matching

  /**
   * match_records(): adds to `hash` every record whose name matches `func`
   * (and whose module matches `mod`, `:mod:` syntax; `!` inverts it), or
   * removes them when `func` starts with `!`. Returns how many matched (0: none).
   */
  matchRecords(hash: FtraceHash, func: string | undefined, mod?: string): number {
    return this.matcher.match(hash, func, mod);
  }

  // ------------------------------------------------------------------ registration

  /** register_ftrace_function(). */
  register(ops: FtraceOps): void {
    if (ops.flags & FTRACE_OPS_FL_SUBOP) fail('EINVAL');
    this.startup(ops);
  }

  /** unregister_ftrace_function(). */
  unregister(ops: FtraceOps): void {
    this.shutdown(ops);
  }

  /** ftrace_startup(). */
  private startup(ops: FtraceOps): void {
    if (ops.flags & FTRACE_OPS_FL_DELETED) fail('EINVAL');
    if (ops.flags & FTRACE_OPS_FL_ENABLED) fail('EBUSY');
    this.opsList = [ops, ...this.opsList];
    ops.savedFunc = ops.func;
    ops.savedFuncSym = ops.funcSym;
    this.applyPidFunc(ops);
    if (!ops.trampoline) {
      ops.trampoline = this.trampolines.alloc();
      ops.flags |= FTRACE_OPS_FL_ALLOC_TRAMP;
    }
    ops.flags |= FTRACE_OPS_FL_ENABLED;
    try {
      this.updateIpmodify(ops, new FtraceHash(), ops.filterHash);
    } catch (e) {
      this.opsList = this.opsList.filter((o) => o !== ops);
      ops.flags &= ~FTRACE_OPS_FL_ENABLED;
      this.restoreFunc(ops);
      this.freeTrampoline(ops);
      throw e;
    }
    const touched = this.touched();
    this.recUpdate(ops, true, touched);
    this.commit(touched);
  }

  /** ftrace_shutdown(). */
  private shutdown(ops: FtraceOps): void {
    if (!(ops.flags & FTRACE_OPS_FL_ENABLED) || !this.opsList.includes(ops)) fail('EBUSY');
    this.opsList = this.opsList.filter((o) => o !== ops);
    this.updateIpmodify(ops, ops.filterHash, new FtraceHash());
    const touched = this.touched();
    // Counted out while still flagged enabled, as the kernel does.
    this.recUpdate(ops, false, touched);
    ops.flags &= ~FTRACE_OPS_FL_ENABLED;
    this.restoreFunc(ops);
    this.commit(touched);
    this.freeTrampoline(ops);
  }

  private freeTrampoline(ops: FtraceOps): void {
    if (ops.flags & FTRACE_OPS_FL_DYNAMIC && ops.flags & FTRACE_OPS_FL_ALLOC_TRAMP && ops.trampoline) {
      this.trampolines.free(ops.trampoline);
      ops.trampoline = 0n;
      ops.flags &= ~FTRACE_OPS_FL_ALLOC_TRAMP;
    }
  }

  // ------------------------------------------------------------------ pid filtering

  /** With set_ftrace_pid in effect, a PID ops is called through ftrace_pid_func. */
  private applyPidFunc(ops: FtraceOps): void {
    if (!(ops.flags & FTRACE_OPS_FL_PID) || !ops.pids) return;
    const saved = ops.savedFunc ?? ops.func;
    if (ops.pids.pidsEnabled()) {
      const pids = ops.pids;
      ops.func = (ip, parentIp, op, regs, task, id) => {
        if (pids.ignores(task)) return;
        saved(ip, parentIp, op, regs, task, id);
      };
      ops.funcSym = 'ftrace_pid_func';
    } else {
      ops.func = saved;
      ops.funcSym = ops.savedFuncSym ?? ops.funcSym;
    }
  }

  private restoreFunc(ops: FtraceOps): void {
    if (ops.savedFunc) ops.func = ops.savedFunc;
    if (ops.savedFuncSym) ops.funcSym = ops.savedFuncSym;
  }

  /** ftrace_update_pid_func(): pid lists changed; PID ops switch between their function and the pid filter. */
  updatePidFunc(): void {
    for (const op of this.opsList) this.applyPidFunc(op);
  }

  /** Sets a new callback on an ops (registered or not), keeping pid filtering in place. */
  setFunc(ops: FtraceOps, func: FtraceOps['func'], funcSym: string): void {
    ops.savedFunc = func;
    ops.savedFuncSym = funcSym;
    ops.func = func;
    ops.funcSym = funcSym;
    if (ops.flags & FTRACE_OPS_FL_ENABLED) this.applyPidFunc(ops);
  }

  // ------------------------------------------------------------------ sub-ops (a manager ops tracing for several users)

  /** ftrace_startup_subops(): `subops` traces through `manager`, which traces the union of its sub-ops. */
  startupSubops(manager: FtraceOps, subops: FtraceOps): void {
    if (subops.flags & FTRACE_OPS_FL_ENABLED) fail('EBUSY');
    if (manager.subops.length === 0) {
      manager.subops.unshift(subops);
      manager.funcHash = composeSubopsHash(manager.subops);
      try {
        this.startup(manager);
      } catch (e) {
        manager.subops.shift();
        manager.funcHash = { filter: new FtraceHash(), notrace: new FtraceHash() };
        throw e;
      }
    } else {
      manager.subops.unshift(subops);
      this.updateOps(manager, composeSubopsHash(manager.subops));
    }
    subops.flags |= FTRACE_OPS_FL_ENABLED | FTRACE_OPS_FL_SUBOP;
    subops.managed = manager;
  }

  /** ftrace_shutdown_subops(). */
  shutdownSubops(manager: FtraceOps, subops: FtraceOps): void {
    if (!(subops.flags & FTRACE_OPS_FL_ENABLED)) fail('EINVAL');
    const i = manager.subops.indexOf(subops);
    if (i >= 0) manager.subops.splice(i, 1);
    if (manager.subops.length === 0) {
      this.shutdown(manager);
      manager.funcHash = { filter: new FtraceHash(), notrace: new FtraceHash() };
    } else {
      this.updateOps(manager, composeSubopsHash(manager.subops));
    }
    subops.flags &= ~(FTRACE_OPS_FL_ENABLED | FTRACE_OPS_FL_SUBOP);
    subops.managed = undefined;
  }

  /** ftrace_update_ops(): gives an enabled ops new hashes, recounting the records. */
  private updateOps(ops: FtraceOps, next: FuncHash): void {
    const cur = ops.funcHash;
    if (cur.filter.equals(next.filter) && cur.notrace.equals(next.notrace)) return;
    const touched = this.touched();
    this.recUpdate(ops, false, touched);
    this.updateIpmodify(ops, cur.filter, next.filter);
    ops.funcHash = next;
    this.recUpdate(ops, true, touched);
    this.commit(touched);
  }

  // ------------------------------------------------------------------ hash changes

  /**
   * ftrace_hash_move_and_update_ops(): replaces the filter (or notrace) hash
   * of a hash pair, and recounts every enabled ops using that pair —
   * directly, or as a sub-ops through its manager.
   */
  setHash(funcHash: FuncHash, which: 'filter' | 'notrace', hash: FtraceHash): void {
    const users = this.opsList.filter((op) => op.funcHash === funcHash);
    const managers = new Set<FtraceOps>();
    for (const op of this.opsList) {
      if (op.subops.some((s) => s.funcHash === funcHash && s.flags & FTRACE_OPS_FL_ENABLED)) managers.add(op);
    }
    const touched = this.touched();
    if (which === 'filter') for (const op of users) this.updateIpmodify(op, funcHash.filter, hash);
    for (const op of users) this.recUpdate(op, false, touched);
    funcHash[which] = hash;
    for (const op of users) this.recUpdate(op, true, touched);
    this.commit(touched);
    for (const m of managers) this.updateOps(m, composeSubopsHash(m.subops));
  }

  /** ftrace_set_filter_ips() / ftrace_set_notrace(): adds (or removes) functions to an ops' hash. */
  setFilterIds(ops: FtraceOps, ids: Iterable<number>, opts: { remove?: boolean; reset?: boolean; notrace?: boolean } = {}): void {
    const which = opts.notrace ? 'notrace' : 'filter';
    const next = opts.reset ? new FtraceHash() : ops.funcHash[which].copy();
    for (const id of ids) {
      if (!this.records.isTraceable(id)) fail('EINVAL');
      if (opts.remove) next.delete(id);
      else next.add(id);
    }
    if (ops.flags & FTRACE_OPS_FL_SUBOP && ops.managed) {
      ops.funcHash[which] = next;
      this.updateOps(ops.managed, composeSubopsHash(ops.managed.subops));
      return;
    }
    this.setHash(ops.funcHash, which, next);
  }
}
