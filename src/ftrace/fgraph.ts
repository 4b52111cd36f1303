/**
 * The function-graph infrastructure (kernel/trace/fgraph.c): up to 16
 * fgraph_ops share one manager ftrace_ops (graph_ops, whose callback
 * ftrace_graph_func hooks the return of every traced call through
 * return_to_handler) and one shadow stack per task, on which each call
 * pushes a frame and each fgraph_ops may reserve data for its return
 * callback.
 */
import { fail } from '../kernel/errno.js';
import type { Kernel } from '../kernel/kernel.js';
import type { PtRegs } from '../kernel/regs.js';
import type { CountedCalls } from '../kernel/counted_calls.js';
import type { Task } from '../kernel/task.js';
import type { Ftrace } from './ftrace.js';
import { hashContains, type FuncHash } from './ftrace_hash.js';
import { FTRACE_OPS_FL_GRAPH, FTRACE_OPS_FL_PID, FtraceOps, type FtracePidFilter } from './ftrace_ops.js';
import { ftraceCallbackRunning, ftraceTestRecursionTrylock, ftraceTestRecursionUnlock } from './recursion.js';
import {
  FGRAPH_ARRAY_SIZE,
  FGRAPH_FRAME_OFFSET,
  FGRAPH_MAX_DATA_SIZE,
  FGRAPH_TYPE_DATA,
  SHADOW_STACK_MAX_OFFSET,
  SHADOW_STACK_SIZE,
  TASK_VARS,
  bitmapOf,
  bitmapWord,
  dataIndexOf,
  dataSizeOf,
  dataWord,
  metaAt,
  newShadowStack,
  RESERVED_WORD,
  setMeta,
  wordOffset,
  wordType,
} from './shadow_stack.js';
import type { FtraceTaskState, FtraceTasks } from './task_state.js';

/** struct ftrace_graph_ent. */
export interface FgraphEnt {
  func: bigint;
  depth: number;
  /** The traced function's id (-1 when unknown). */
  id: number;
}

/** struct ftrace_graph_ret. */
export interface FgraphRet {
  func: bigint;
  /** %ax at return (FUNCTION_GRAPH_RETVAL). */
  retval: bigint;
  depth: number;
  /** The task's count of calls lost to a full shadow stack. */
  overrun: number;
}

/** Entry callback: true to have the return callback called for this call. */
export type FgraphEntryFunc = (trace: FgraphEnt, gops: FgraphOps, regs: PtRegs, task: Task) => boolean;
export type FgraphRetFunc = (trace: FgraphRet, gops: FgraphOps, regs: PtRegs, task: Task) => void;

interface FgraphOpsInit {
  entryfunc: FgraphEntryFunc;
  retfunc: FgraphRetFunc;
  /** Kernel symbols of the two callbacks (enabled_functions' `subops: {ent:… ret:…}`). */
  entrySym: string;
  retSym: string;
  private?: unknown;
  /** Hashes shared with another ops (a trace array's function ops); own empty ones otherwise. */
  funcHash?: FuncHash;
  /** set_ftrace_pid filtering of the trace array it belongs to. */
  pids?: FtracePidFilter;
  /** How it takes calls in bulk, if all it does with a call is count it (counted_calls.ts). */
  count?: FgraphCount;
}

/** What an fgraph user that only counts calls does with many at once. */
export interface FgraphCount {
  /** Shadow-stack words its entry callback reserves per call (fgraph_reserve_data's and their header). */
  readonly words: number;
  /** Adds `times` runs of `calls` made by `task`, those of functions `takes` lets through. */
  add(task: Task, calls: CountedCalls, times: number, takes: (id: number) => boolean): void;
}

/** struct fgraph_ops: one user of the function graph. */
export class FgraphOps {
  entryfunc: FgraphEntryFunc;
  retfunc: FgraphRetFunc;
  entrySym: string;
  retSym: string;
  private: unknown;
  /** Its slot in the fgraph array (bit in the shadow-stack bitmap), -1 when not registered. */
  idx = -1;
  /** Its ftrace_ops, a sub-ops of graph_ops: what it filters on. */
  readonly ops: FtraceOps;
  savedFunc?: FgraphEntryFunc;
  savedSym?: string;
  readonly count?: FgraphCount;
  /** Whether its entry callback now declines every call and changes nothing (a tracer whose buffer records nothing). */
  quiet?: () => boolean;

  constructor(init: FgraphOpsInit) {
    this.count = init.count;
    this.entryfunc = init.entryfunc;
    this.retfunc = init.retfunc;
    this.entrySym = init.entrySym;
    this.retSym = init.retSym;
    this.private = init.private;
    this.ops = new FtraceOps({
      func: () => {},
      funcSym: 'ftrace_stub',
      flags: init.pids ? FTRACE_OPS_FL_PID : 0,
      funcHash: init.funcHash,
      private: this,
      pids: init.pids,
    });
  }
}

export class Fgraph {
  readonly kernel: Kernel;
  private readonly tasks: FtraceTasks;
  /** graph_ops: the one ftrace_ops through which every fgraph_ops traces. */
  readonly graphOps: FtraceOps;
  private readonly array: (FgraphOps | null)[] = new Array(FGRAPH_ARRAY_SIZE).fill(null);
  /** Free slots, least recently released first (the kernel's LRU index table). */
  private readonly lru: number[] = Array.from({ length: FGRAPH_ARRAY_SIZE }, (_, i) => i);
  private bitmask = 0;
  /** ftrace_graph_active: registered fgraph_ops. */
  active = 0;
  /** Tasks holding a shadow stack now. */
  private readonly stacks = new Set<Task>();
  /** Shadow stacks ever allocated (kmem_cache_alloc of fgraph_stack). */
  stacksAllocated = 0;
  private readonly returnToHandler: bigint;
  /** fgraph_no_sleep_time: users wanting sleep time left out of durations. */
  noSleepTime = 0;

  constructor(readonly ftrace: Ftrace) {
    const kernel = (this.kernel = ftrace.kernel);
    this.tasks = ftrace.tasks;
    this.returnToHandler = kernel.symbols.lookupName('return_to_handler')?.addr ?? 0xffffffff81000000n;
    this.graphOps = new FtraceOps({
      func: (ip, _parentIp, _op, regs, task, id) => this.graphFunc(ip, regs, task, id),
      funcSym: 'ftrace_graph_func',
    });
    this.ftrace.exec.trampolines.set(this.returnToHandler, (regs, task) => this.returnToHandlerCall(regs, task));
    const life = kernel.taskLifecycle;
    life.forked.add((child) => this.initTask(child));
    life.exited.add((task) => this.exitTask(task));
  }

  /** The address return hooks are diverted to. */
  get returnToHandlerAddr(): bigint {
    return this.returnToHandler;
  }

  /** The fgraph_ops in slot `idx`. */
  ops(idx: number): FgraphOps | null {
    return this.array[idx] ?? null;
  }

  // ------------------------------------------------------------------ registration

  /** register_ftrace_graph(): ENOSPC when all 16 slots are taken. */
  register(gops: FgraphOps): void {
    if (gops.ops.flags & FTRACE_OPS_FL_GRAPH) fail('EBUSY');
    const idx = this.lru.shift();
    if (idx === undefined) fail('ENOSPC');
    gops.idx = idx;
    this.bitmask |= 1 << idx;
    this.active++;
    gops.savedFunc = gops.entryfunc;
    gops.savedSym = gops.entrySym;
    this.applyPidFunc(gops);
    if (this.active === 1) this.startGraphTracing();
    else this.initTaskVars(idx);
    gops.ops.flags |= FTRACE_OPS_FL_GRAPH;
    try {
      this.ftrace.startupSubops(this.graphOps, gops.ops);
    } catch (e) {
      if (--this.active === 0) this.stopGraphTracing();
      this.bitmask &= ~(1 << idx);
      this.lru.push(idx);
      gops.ops.flags &= ~FTRACE_OPS_FL_GRAPH;
      gops.idx = -1;
      this.restoreFunc(gops);
      throw e;
    }
    this.array[idx] = gops;
    this.usersChanged();
  }

  /** unregister_ftrace_graph(). Shadow stacks stay with their tasks. */
  unregister(gops: FgraphOps): void {
    const idx = gops.idx;
    if (!(gops.ops.flags & FTRACE_OPS_FL_GRAPH) || idx < 0 || this.array[idx] !== gops) {
      gops.ops.flags &= ~FTRACE_OPS_FL_GRAPH;
      return;
    }
    this.array[idx] = null;
    this.bitmask &= ~(1 << idx);
    this.lru.push(idx);
    this.ftrace.shutdownSubops(this.graphOps, gops.ops);
    if (--this.active === 0) this.stopGraphTracing();
    this.restoreFunc(gops);
    gops.ops.flags &= ~FTRACE_OPS_FL_GRAPH;
    this.usersChanged();
  }

  /** Who fgraph calls changed: what is known of who sees a call, or a switch, is stale. */
  private usersChanged(): void {
    this.kernel.quietnessChanged();
  }

  /** Whether every fgraph user a call of function `id` reaches only counts it, with no pid filter before it. */
  countsOnly(id: number): boolean {
    let any = false;
    for (let i = 0; i < FGRAPH_ARRAY_SIZE; i++) {
      const g = this.bitmask & (1 << i) ? this.array[i] : null;
      if (!g || !this.takes(g, id)) continue;
      if (!g.count || g.entryfunc !== g.savedFunc) return false;
      any = true;
    }
    return any;
  }

  /** Whether every fgraph user a call of function `id` (of any function when not given) reaches declines it now, leaving nothing behind. */
  quiet(id?: number): boolean {
    for (const g of this.array) if (g && (id === undefined || this.takes(g, id)) && !g.quiet?.()) return false;
    return true;
  }

  /**
   * Gives `times` runs of `calls` (each nesting at most `depth` calls) made
   * by `task` to the users that count them, as their entries and returns
   * would have. False when some would not have reached them now: a
   * callback runs in this context, or the shadow stack could fill.
   */
  count(task: Task, calls: CountedCalls, depth: number, times: number): boolean {
    const st = this.taskState(task);
    if (!st.retStack || ftraceCallbackRunning(this.tasks, task)) return false;
    let words = FGRAPH_FRAME_OFFSET + 1;
    for (const g of this.array) if (g?.count) words += g.count.words;
    if (st.currRetStack + depth * words >= SHADOW_STACK_MAX_OFFSET) return false;
    for (const g of this.array) if (g?.count) g.count.add(task, calls, times, (id) => this.takes(g, id));
    return true;
  }

  /** Whether fgraph passes a call of function `id` to `gops` (with one user, every call it is given). */
  private takes(gops: FgraphOps, id: number): boolean {
    return this.active === 1 || hashContains(gops.ops.funcHash, id);
  }

  /** fgraph_update_pid_func(): set_ftrace_pid changed. */
  updatePidFunc(): void {
    for (const g of this.array) if (g) this.applyPidFunc(g);
  }

  private applyPidFunc(gops: FgraphOps): void {
    this.ftrace.exec.hooksChanged();
    const op = gops.ops;
    if (!(op.flags & FTRACE_OPS_FL_PID) || !op.pids || !gops.savedFunc) return;
    if (op.pids.pidsEnabled()) {
      const saved = gops.savedFunc;
      const pids = op.pids;
      gops.entryfunc = (trace, g, regs, task) => !pids.ignores(task) && saved(trace, g, regs, task);
      gops.entrySym = 'fgraph_pid_func';
    } else this.restoreFunc(gops);
  }

  private restoreFunc(gops: FgraphOps): void {
    if (gops.savedFunc) gops.entryfunc = gops.savedFunc;
    if (gops.savedSym) gops.entrySym = gops.savedSym;
  }

  /** Changes the entry callback of a registered fgraph_ops (e.g. funcgraph-args), keeping pid filtering. */
  setEntry(gops: FgraphOps, entryfunc: FgraphEntryFunc, entrySym: string): void {
    gops.savedFunc = entryfunc;
    gops.savedSym = entrySym;
    gops.entryfunc = entryfunc;
    gops.entrySym = entrySym;
    this.applyPidFunc(gops);
  }

  // ------------------------------------------------------------------ shadow stacks

  /** start_graph_tracing(): every task (idle ones included) gets a shadow stack; switches are watched for sleep time. */
  private startGraphTracing(): void {
    for (const t of this.kernel.tasks.idle) this.giveStack(t);
    for (const t of this.kernel.tasks.all()) this.giveStack(t);
    if (!this.watchingSwitches) {
      // Sleep time counts only inside calls some user takes: while every user declines, switches need not be watched.
      this.kernel.tracepoints.register('sched_switch', this.onSwitch, undefined, () => this.quiet());
      this.watchingSwitches = true;
    }
  }

  private watchingSwitches = false;

  /** The last user is gone: switches are no longer watched, so an idle kernel is unobserved again. */
  private stopGraphTracing(): void {
    if (!this.watchingSwitches) return;
    this.kernel.tracepoints.unregister('sched_switch', this.onSwitch);
    this.watchingSwitches = false;
  }

  /** ftrace_graph_probe_sched_switch(): how long traced tasks were switched out (sleep-time off). */
  private readonly onSwitch = (_ctx: unknown, args: { prev_pid?: number; next_pid?: number }): void => {
    if (!this.noSleepTime) return;
    const now = this.kernel.clock.now();
    const prev = args.prev_pid !== undefined ? this.kernel.tasks.get(args.prev_pid) : undefined;
    const next = args.next_pid !== undefined ? this.kernel.tasks.get(args.next_pid) : undefined;
    if (prev) this.tasks.of(prev).ftraceTimestamp = now;
    if (!next) return;
    const st = this.tasks.of(next);
    if (!st.ftraceTimestamp) return;
    st.ftraceSleeptime += now - st.ftraceTimestamp;
  };

  private giveStack(task: Task): void {
    const st = this.tasks.of(task);
    if (st.retStack) return;
    const stack = newShadowStack();
    st.retStack = stack.words;
    st.retMeta = stack.meta;
    st.retVals = [];
    st.currRetStack = 0;
    st.currRetDepth = -1;
    st.traceOverrun = 0;
    st.ftraceTimestamp = 0;
    this.stacks.add(task);
    this.stacksAllocated++;
  }

  /** init_task_vars(): a new fgraph_ops starts with its task variable zeroed everywhere. */
  private initTaskVars(idx: number): void {
    for (const t of this.stacks) {
      const s = this.tasks.peek(t)?.retStack;
      if (s) s[TASK_VARS + idx] = 0n;
    }
  }

  /** ftrace_graph_init_task(): a forked task gets a stack while fgraph is in use. */
  initTask(task: Task): void {
    const st = this.tasks.of(task);
    st.retStack = null;
    st.retMeta = null;
    st.retVals = [];
    st.currRetStack = 0;
    st.currRetDepth = -1;
    if (this.active) this.giveStack(task);
  }

  /** ftrace_graph_exit_task(): the stack is freed with its task. */
  exitTask(task: Task): void {
    const st = this.tasks.peek(task);
    if (st) {
      st.retStack = null;
      st.retMeta = null;
      st.retVals = [];
    }
    this.stacks.delete(task);
    this.exited.add(task);
  }

  /** Tasks with a shadow stack, and the bytes they hold. */
  stackUsage(): { tasks: number; bytes: number } {
    return { tasks: this.stacks.size, bytes: this.stacks.size * SHADOW_STACK_SIZE };
  }

  /** The task's fgraph state, giving it a stack if it was never seen while fgraph was active. */
  private taskState(task: Task): FtraceTaskState {
    const st = this.tasks.of(task);
    if (!st.retStack && this.active && !this.stacks.has(task) && !this.exited.has(task)) this.giveStack(task);
    return st;
  }

  private readonly exited = new WeakSet<Task>();

  // ------------------------------------------------------------------ entry

  /** ftrace_graph_func(): graph_ops' callback at a traced function's entry. */
  private graphFunc(ip: bigint, regs: PtRegs, task: Task, id: number): void {
    const mem = this.ftrace.exec.memory;
    const slot = regs.sp;
    const ret = mem.readU64(slot);
    if (ret === undefined) return;
    if (this.enter(ret, ip, slot, regs, task, id) === 0) mem.writeU64(slot, this.returnToHandler);
  }

  /** function_graph_enter_regs(): 0 when the return is to be hooked. `id` is the function's (-1: look it up). */
  enter(ret: bigint, func: bigint, retp: bigint, regs: PtRegs, task: Task, id = -1): number {
    const bit = ftraceTestRecursionTrylock(this.tasks, task);
    if (bit < 0) return -1;
    const st = this.taskState(task);
    try {
      if (id < 0) id = this.funcId(func);
      const trace: FgraphEnt = { func, depth: ++st.currRetDepth, id };
      const offset = this.push(st, ret, func, retp);
      if (offset < 0) {
        st.currRetDepth--;
        return -1;
      }
      let bitmap = 0;
      // The registered slots, lowest first (only set bits are visited).
      for (let rest = this.bitmask; rest; rest &= rest - 1) {
        const i = 31 - Math.clz32(rest & -rest);
        const gops = this.array[i];
        if (!gops) continue;
        const save = st.currRetStack;
        let want = false;
        try {
          want = (this.active === 1 || hashContains(gops.ops.funcHash, id)) && gops.entryfunc(trace, gops, regs, task);
        } catch (e) {
          this.ftrace.hookFailed(e);
        }
        if (want) bitmap |= 1 << i;
        else st.currRetStack = save;
      }
      if (!bitmap) {
        st.currRetStack -= FGRAPH_FRAME_OFFSET + 1;
        st.currRetDepth--;
        return -1;
      }
      setMeta(st.retMeta!, offset, bitmapWord(bitmap | 1));
      return 0;
    } finally {
      ftraceTestRecursionUnlock(this.tasks, task, bit);
    }
  }

  private funcId(ip: bigint): number {
    const hit = this.kernel.symbols.lookup(ip);
    return hit && 'id' in hit.sym ? (hit.sym as { id: number }).id : -1;
  }

  /** ftrace_push_return_trace(): the frame's top-word offset, or -1 (stack full: the overrun grows). */
  private push(st: FtraceTaskState, ret: bigint, func: bigint, retp: bigint): number {
    const stack = st.retStack;
    if (!stack) return -1;
    if (st.currRetStack + FGRAPH_FRAME_OFFSET + 1 >= SHADOW_STACK_MAX_OFFSET) {
      st.traceOverrun++;
      return -1;
    }
    const frame = st.currRetStack;
    const offset = frame + FGRAPH_FRAME_OFFSET;
    stack[frame] = ret;
    stack[frame + 1] = func;
    stack[frame + 2] = retp;
    st.retVals[frame] = ret;
    st.retVals[frame + 1] = func;
    setMeta(st.retMeta!, offset, RESERVED_WORD);
    st.currRetStack = offset + 1;
    return offset;
  }

  // ------------------------------------------------------------------ per-call data

  /**
   * fgraph_reserve_data(): `bytes` (at most 256) on the shadow stack for the
   * fgraph_ops in slot `idx`, from its entry callback. Returns the index of
   * the first long in the task's stack, or -1 when it does not fit.
   */
  reserveData(task: Task, idx: number, bytes: number): number {
    if (bytes > FGRAPH_MAX_DATA_SIZE) return -1;
    const st = this.tasks.of(task);
    const meta = st.retMeta;
    if (!meta) return -1;
    const words = Math.max(1, (bytes + 7) >> 3);
    const curr = st.currRetStack;
    const next = curr + words + 1;
    if (next >= SHADOW_STACK_MAX_OFFSET) return -1;
    setMeta(meta, next - 1, dataWord(idx, words, wordOffset(metaAt(meta, curr - 1)) + words + 1));
    st.currRetStack = next;
    return curr;
  }

  /** fgraph_retrieve_data(): the data slot `idx` reserved for the call returning now. */
  retrieveData(task: Task, idx: number): { index: number; bytes: number } | null {
    return this.retrieveParentData(task, idx, 0);
  }

  /** fgraph_retrieve_parent_data(): the same for the call `depth` levels out. */
  retrieveParentData(task: Task, idx: number, depth: number): { index: number; bytes: number } | null {
    const st = this.tasks.of(task);
    const meta = st.retMeta;
    let offset = st.currRetStack;
    if (!meta || offset <= 0) return null;
    let frame = -1;
    for (;;) {
      frame = this.frameBelow(meta, offset);
      if (frame < 0 || --depth < 0) break;
      offset = frame;
    }
    if (frame < 0) return null;
    let top = offset - 1;
    let val = metaAt(meta, top);
    while (wordType(val) === FGRAPH_TYPE_DATA) {
      const size = dataSizeOf(val);
      if (dataIndexOf(val) === idx) return { index: top - size, bytes: size * 8 };
      top -= size + 1;
      val = metaAt(meta, top);
    }
    return null;
  }

  /** The shadow stack of a task (where reserved data lives), if it has one. */
  stackOf(task: Task): BigUint64Array | null {
    return this.tasks.peek(task)?.retStack ?? null;
  }

  /** Its 32-bit view (shadow_stack.ts): where fgraph users build their own meta words. */
  metaOf(task: Task): Uint32Array | null {
    return this.tasks.peek(task)?.retMeta ?? null;
  }

  /** fgraph_get_task_var(): the fgraph_ops' own long in the task's stack. */
  taskVar(task: Task, gops: FgraphOps): bigint {
    return this.stackOf(task)?.[TASK_VARS + gops.idx] ?? 0n;
  }

  setTaskVar(task: Task, gops: FgraphOps, v: bigint): void {
    const s = this.stackOf(task);
    if (s) s[TASK_VARS + gops.idx] = BigInt.asUintN(64, v);
  }

  /** get_ret_stack(): the frame below the top word at offset-1, or -1. */
  private frameBelow(meta: Uint32Array, offset: number): number {
    if (offset <= 0) return -1;
    const offs = wordOffset(metaAt(meta, offset - 1));
    if (offs <= 0 || offs > offset - 1) return -1;
    return offset - 1 - offs;
  }

  // ------------------------------------------------------------------ return

  /** return_to_handler: pops the frame, runs the return callbacks, goes on to the real return address. */
  private returnToHandlerCall(regs: PtRegs, task: Task): bigint {
    const st = this.tasks.of(task);
    const stack = st.retStack;
    const meta = st.retMeta;
    const frame = meta ? this.frameBelow(meta, st.currRetStack) : -1;
    if (!stack || !meta || frame < 0) {
      // A hooked return with no frame: the kernel would WARN and stop graph tracing.
      return 0n;
    }
    const offset = frame + FGRAPH_FRAME_OFFSET;
    const ret = st.retVals[frame]!;
    const trace: FgraphRet = { func: st.retVals[frame + 1]!, retval: regs.ax, depth: st.currRetDepth, overrun: st.traceOverrun };
    regs.ip = ret;
    const bit = ftraceTestRecursionTrylock(this.tasks, task);
    if (bit >= 0) {
      try {
        for (let rest = bitmapOf(metaAt(meta, offset)); rest; rest &= rest - 1) {
          const i = 31 - Math.clz32(rest & -rest);
          const gops = this.array[i];
          try {
            if (gops) gops.retfunc(trace, gops, regs, task);
          } catch (e) {
            this.ftrace.hookFailed(e);
          }
        }
      } finally {
        ftraceTestRecursionUnlock(this.tasks, task, bit);
      }
    }
    st.currRetStack = frame;
    st.currRetDepth--;
    return ret;
  }

  // ------------------------------------------------------------------ unwinding

  /** ftrace_graph_ret_addr(): the real return address behind a return_to_handler found at `retp`. */
  graphRetAddr(task: Task, ret: bigint, retp: bigint): bigint {
    if (ret !== this.returnToHandler) return ret;
    const st = this.tasks.of(task);
    const stack = st.retStack;
    const meta = st.retMeta;
    if (!stack || !meta) return ret;
    let i = st.currRetStack;
    while (i > 0) {
      const frame = this.frameBelow(meta, i);
      if (frame < 0) break;
      if (stack[frame + 2] === retp && stack[frame] !== this.returnToHandler) return stack[frame];
      i = frame;
    }
    return ret;
  }

  /** ftrace_graph_top_ret_addr(): the innermost real return address saved. */
  topRetAddr(task: Task): bigint {
    const st = this.tasks.of(task);
    const stack = st.retStack;
    const meta = st.retMeta;
    if (!stack || !meta) return 0n;
    let i = st.currRetStack;
    while (i > 0) {
      const frame = this.frameBelow(meta, i);
      if (frame < 0) return 0n;
      if (stack[frame] !== this.returnToHandler) return stack[frame];
      i = frame;
    }
    return 0n;
  }

  /** Frames on a task's shadow stack, innermost first: function and saved return address. */
  frames(task: Task): { func: bigint; ret: bigint }[] {
    const st = this.tasks.of(task);
    const stack = st.retStack;
    const meta = st.retMeta;
    const out: { func: bigint; ret: bigint }[] = [];
    if (!stack || !meta) return out;
    let i = st.currRetStack;
    while (i > 0) {
      const frame = this.frameBelow(meta, i);
      if (frame < 0) break;
      out.push({ func: stack[frame + 1], ret: stack[frame] });
      i = frame;
    }
    return out;
  }
}
