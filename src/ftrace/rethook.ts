/**
 * rethook (kernel/trace/rethook.c, arch/x86/kernel/rethook.c): the return
 * hook of kretprobes (both series) and of 6.12's fprobes. Each user owns a
 * pool of preallocated nodes; hooking a call takes one node, saves the real
 * return address and the frame in it, pushes it on the task's rethook list
 * and writes `arch_rethook_trampoline` into the return slot. When the call
 * returns there, every node of that frame runs its user's handler and goes
 * back to its pool, and execution goes on to the real return address. An
 * empty pool is a miss (the owner counts it): deep recursion or many tasks
 * inside one function at once.
 */
import type { Executor } from '../kernel/executor.js';
import type { PtRegs } from '../kernel/regs.js';
import type { Task } from '../kernel/task.js';
import type { Ftrace } from './ftrace.js';

/** struct rethook_node on x86_64: rcu_head 16, llist_node 8, ret_addr 8, frame 8, rethook* 8. */
export const RETHOOK_NODE_SIZE = 48;

/** One preallocated return hook. Owners extend it (kretprobe_instance, fprobe_rethook_node). */
export class RethookNode {
  /** The return address the hook replaced (what was in the slot: the caller, or another hook's trampoline). */
  retAddr = 0n;
  /** The return slot's address (regs->sp at entry). */
  frame = 0n;
  /** The task it hooks a call of, while in use. */
  hookedTask: Task | null = null;

  constructor(readonly rethook: RethookPool) {}
}

/**
 * A rethook as its nodes and the core see it, whatever its owner's node
 * type: what runs at a hooked return, where a node goes back, and the pool's
 * figures for stats.
 */
export interface RethookPool {
  /** Who owns it (for stats): `kretprobe:NAME`, `fprobe:NAME`. */
  readonly owner: string;
  /** Bytes per node. */
  readonly size: number;
  readonly allocated: number;
  readonly inUse: number;
  readonly misses: number;
  readonly bytes: number;
  /** Runs the owner's handler for a node hooked on a return (nothing once stopped). */
  run(node: RethookNode, correctRetAddr: bigint, regs: PtRegs, task: Task): void;
  recycle(node: RethookNode): void;
}

/** Called at the hooked return: the node, the real return address, the registers (ip set to it, ax the return value). */
type RethookHandler<N extends RethookNode> = (node: N, correctRetAddr: bigint, regs: PtRegs, task: Task) => void;

/**
 * struct rethook: a handler and its pool (an objpool of `num` nodes of
 * `size` bytes). `stop()` makes in-flight nodes return without calling the
 * handler; `free()` also lets them go when they come back.
 */
export class Rethook<N extends RethookNode = RethookNode> implements RethookPool {
  handler: RethookHandler<N> | null;
  /** Every node of the pool. */
  readonly nodes: N[] = [];
  private readonly freeList: N[] = [];
  /** tryGet() calls that found the pool empty (the owner's nmissed counts them too). */
  misses = 0;
  /** Nodes taken since allocation. */
  hooks = 0;
  freed = false;

  constructor(
    readonly core: RethookCore,
    handler: RethookHandler<N>,
    /** Bytes per node (the owner's struct plus its data). */
    readonly size: number,
    num: number,
    make: (rh: Rethook<N>) => N,
    /** Who owns it (for stats): `kretprobe:NAME`, `fprobe:NAME`. */
    readonly owner: string,
  ) {
    this.handler = handler;
    for (let i = 0; i < num; i++) {
      const n = make(this);
      this.nodes.push(n);
      this.freeList.push(n);
    }
    core.live.add(this);
  }

  get allocated(): number {
    return this.nodes.length;
  }

  get inUse(): number {
    return this.nodes.length - this.freeList.length;
  }

  /**
   * Bytes of the pool as objpool lays it out: the objects, aligned to longs,
   * and one slot per possible CPU with room for every object (a power of two).
   */
  get bytes(): number {
    return poolBytes(this.nodes.length, this.size, this.core.ftrace.kernel.nrCpus);
  }

  /** rethook_try_get(): a free node, or null (stopped, or the pool is dry). */
  tryGet(): N | null {
    if (!this.handler) return null;
    const n = this.freeList.pop();
    if (!n) {
      this.misses++;
      return null;
    }
    this.hooks++;
    return n;
  }

  run(node: N, correctRetAddr: bigint, regs: PtRegs, task: Task): void {
    this.handler?.(node, correctRetAddr, regs, task);
  }

  /** rethook_recycle(): back to the pool (dropped once the rethook is freed). */
  recycle(node: N): void {
    node.hookedTask = null;
    if (this.freed) return;
    this.freeList.push(node);
  }

  /** rethook_hook(): hooks the return of the call whose return slot is at regs.sp. */
  hook(node: N, regs: PtRegs, task: Task): void {
    this.core.hook(node, regs, task);
  }

  /** rethook_stop(): hooked returns no longer call the handler. */
  stop(): void {
    this.handler = null;
  }

  /** rethook_free(): stops it; nodes still hooked are released as their calls return. */
  free(): void {
    this.stop();
    this.freed = true;
    this.freeList.length = 0;
    this.core.live.delete(this);
  }
}

/** objpool_init()'s footprint: objects plus a per-CPU ring of pointers sized to a power of two. */
function poolBytes(num: number, size: number, cpus: number): number {
  const objsz = Math.ceil(size / 8) * 8;
  let cap = 1;
  while (cap < num) cap <<= 1;
  // struct objpool_slot: head, tail, last, mask (4 x u32) then the entries.
  return num * objsz + cpus * (16 + cap * 8);
}

/** The per-kernel side of rethook: the trampoline, the tasks' rethook lists, task exit. */
export class RethookCore {
  readonly trampoline: bigint;
  /** current->rethooks of each task: innermost (list head) last. */
  private readonly lists = new WeakMap<Task, RethookNode[]>();
  /** Rethooks alive (for stats). */
  readonly live = new Set<RethookPool>();
  /** Nodes dropped because their frame was left without returning through the trampoline. */
  stale = 0;
  /** Return hooks put on a slot another hook had already replaced (a call hooked twice). */
  stackedHooks = 0;

  private readonly exec: Executor;

  constructor(readonly ftrace: Ftrace) {
    const kernel = ftrace.kernel;
    this.trampoline = kernel.symbols.lookupName('arch_rethook_trampoline')?.addr ?? 0xffffffff81000100n;
    const exec = (this.exec = ftrace.exec);
    exec.trampolines.set(this.trampoline, (regs, task) => this.trampolineHandler(regs, task));
    kernel.taskLifecycle.exited.add((task) => this.flushTask(task));
  }

  /** The rethook list of a task, innermost last. */
  listOf(task: Task): readonly RethookNode[] {
    return this.lists.get(task) ?? [];
  }

  /** arch_rethook_prepare() + the push on current->rethooks. */
  hook(node: RethookNode, regs: PtRegs, task: Task): void {
    const mem = this.exec.memory;
    const slot = regs.sp;
    node.retAddr = mem.readU64(slot) ?? 0n;
    if (this.exec.trampolines.has(node.retAddr)) this.stackedHooks++;
    node.frame = slot;
    node.hookedTask = task;
    mem.writeU64(slot, this.trampoline);
    let l = this.lists.get(task);
    if (!l) this.lists.set(task, (l = []));
    l.push(node);
  }

  /**
   * rethook_trampoline_handler(): runs the handlers of every node hooked on
   * this frame, innermost first, then unlinks and recycles them; returns the
   * real return address (the first saved one that is not the trampoline).
   */
  private trampolineHandler(regs: PtRegs, task: Task): bigint {
    const l = this.lists.get(task);
    const frame = regs.sp - 8n;
    if (!l || !l.length) return 0n;
    // Frames below this one that never came back (a body that threw): drop them.
    while (l.length && l[l.length - 1].frame < frame) {
      const n = l.pop()!;
      this.stale++;
      n.rethook.recycle(n);
    }
    let correct = 0n;
    let last = -1;
    for (let i = l.length - 1; i >= 0; i--) {
      if (l[i].retAddr !== this.trampoline) {
        correct = l[i].retAddr;
        last = i;
        break;
      }
    }
    if (last < 0) return 0n;
    regs.ip = correct;
    for (let i = l.length - 1; i >= last; i--) {
      const n = l[i];
      if (n.frame !== frame) break;
      try {
        n.rethook.run(n, correct, regs, task);
      } catch (e) {
        this.ftrace.hookFailed(e);
      }
    }
    const done = l.splice(last);
    for (const n of done) n.rethook.recycle(n);
    return correct;
  }

  /**
   * rethook_find_ret_addr(): the real return address of the hooked call whose
   * return slot is `frame` (what stack walkers print instead of the trampoline); 0 if none.
   */
  findRetAddr(task: Task, frame: bigint): bigint {
    const l = this.lists.get(task);
    if (!l) return 0n;
    let found = false;
    for (let i = l.length - 1; i >= 0; i--) {
      const n = l[i];
      if (n.frame === frame) found = true;
      if (found && n.retAddr !== this.trampoline) return n.retAddr;
    }
    return 0n;
  }

  /** Stack-walker recovery: `ret` as found in the slot at `frame`, the real address if it is the trampoline. */
  recoverRetAddr(task: Task, ret: bigint, frame: bigint): bigint {
    if (ret !== this.trampoline) return ret;
    return this.findRetAddr(task, frame) || ret;
  }

  /** rethook_flush_task(): a task that exits gives its nodes back. */
  flushTask(task: Task): void {
    const l = this.lists.get(task);
    if (!l) return;
    this.lists.delete(task);
    for (const n of l) n.rethook.recycle(n);
  }

  /** Nodes hooked now, over every task that has some. */
  inFlight(tasks: Iterable<Task>): number {
    let n = 0;
    for (const t of tasks) n += this.lists.get(t)?.length ?? 0;
    return n;
  }
}
