/**
 * Runs call trees (call_paths.ts) on the executor, in a task: every node is
 * a real call with arguments taken from the path's environment by the
 * parameter names and types BTF gives (`struct file *file` gets the open
 * file, `size_t count` the byte count), and a return value by its type or,
 * for the functions the system call's result passes through, that result.
 * Holes are filled by the code that runs the path (the tracefs operation,
 * the path walk, sleeping). A failed operation ends the path there: the
 * remaining calls are skipped and every function on the way out returns the
 * error, as the kernel's error paths do.
 */
import { resolveType, type FuncProto } from './ctypes.js';
import type { Body, Call, Executor, Value } from './executor.js';
import { isHole, type CallPaths, type PathNode } from './call_paths.js';
import type { KernelFunction } from './symbols.js';
import { SubtreeIndex } from './subtree.js';
import type { Task } from './task.js';

/** Argument values of a path, by parameter name (`file`, `count`) or pointed-to type (`struct dentry`). */
export type PathEnv = Record<string, bigint | undefined>;

export type HoleFn = (ctx: RunCtx, px: Call | undefined) => Value | void | Promise<Value | void>;

export interface RunCtx {
  task: Task;
  env: PathEnv;
  flags: ReadonlySet<string>;
  holes: Readonly<Record<string, HoleFn>>;
  /** The system call's result, returned by the functions it passes through. */
  ret?: bigint;
  /** A failed operation: -errno from here on, nothing more is called. */
  err?: { errno: number; error: unknown };
  /** The task was switched out for good (sync schedule, exit): nothing more runs in this path. */
  stop?: boolean;
  /** The task a try_to_wake_up in this path wakes. */
  wakee?: Task;
}

/** Effects of particular functions: tracepoints they fire, locks they take, objects they return. */
export interface FnHook {
  enter?(x: Call, ctx: RunCtx, kids: readonly PathNode[] | undefined): void;
  /** May replace the return value. */
  exit?(x: Call, ctx: RunCtx): bigint | void;
  /**
   * What the hook does that someone could see, when its function runs
   * unobserved: the tracepoints it may fire, and what it adds to the task's
   * preempt count and interrupts-off depth. A hook without it changes state
   * that matters (a wake-up, a process's life): its function always runs.
   */
  effect?: HookEffect;
}

export interface HookEffect {
  readonly fires?: readonly string[];
  readonly preempt?: number;
  readonly irqs?: number;
}

type ArgPlan = ((env: PathEnv, x: RunCtx) => bigint)[];
interface RetPlan {
  kind: 'void' | 'int' | 'ptr';
  struct?: string;
}

/** What a file operation returns: the operation's value (read, write: bytes) or only its status (open, release: 0). */
type OpReturn = 'value' | 'status';

/** Functions through which the system call's result is returned. */
const CHAIN_RET = /^(__x64_sys_\w+|__do_sys_\w+|__se_sys_\w+|x64_sys_call|ksys_\w+|vfs_read|vfs_write|do_sys_openat2|do_sys_open|seq_read|seq_read_iter|simple_read_from_buffer|\$.*)$/;

/** Names the kernel gives clones of a function (`.isra.0`, `.constprop.0`, `.part.0`): BTF knows the original. */
function baseName(name: string): string {
  const i = name.indexOf('.');
  return i < 0 ? name : name.slice(0, i);
}

export interface RunnerDeps {
  exec: Executor;
  paths: CallPaths;
  resolve(name: string): KernelFunction | undefined;
  proto(name: string): FuncProto | undefined;
  hooks: ReadonlyMap<string, FnHook>;
  /** A stable address for a lock a function takes (its spinlock or mutex argument). */
  lockAddr(fn: KernelFunction): bigint;
  /** Called every so many calls: lets a due timer interrupt strike in the middle of a path. */
  poll?(task: Task, px: Call | undefined): void;
  /** Whether the tail call `parent → child` is how the kernel reaches `child` (no call site of its own). */
  isTail?(parent: KernelFunction, child: KernelFunction): boolean;
  /** Whether a tracepoint has probes that are not quiet (a hook that fires it is then observed). */
  tracepointSeen(name: string): boolean;
  /** Moves whenever tracepoint probes come or go, or turn quiet or loud. */
  tracepointGeneration(): number;
}

export class PathRunner {
  /** What runs in each subtree, for skipping the ones nothing can observe (subtree.ts). */
  readonly subtrees: SubtreeIndex;
  /** By function id. */
  private readonly argPlans: (ArgPlan | undefined)[] = [];
  private readonly retPlans: (RetPlan | undefined)[] = [];
  private readonly fnCache = new Map<string, KernelFunction | null>();
  private counter = 0;
  /** Frames deeper than this are not entered (a runaway template). */
  maxDepth = 160;

  /** Subtrees passed over because nothing could see them. */
  skipped = 0;

  constructor(readonly deps: RunnerDeps) {
    this.subtrees = new SubtreeIndex(deps, (name) => this.fn(name));
  }

  fn(name: string): KernelFunction | undefined {
    let f = this.fnCache.get(name);
    if (f === undefined) {
      f = this.deps.resolve(name) ?? null;
      this.fnCache.set(name, f);
    }
    return f ?? undefined;
  }

  /** Runs a named block's nodes in ctx.task from frame px. */
  block(name: string, ctx: RunCtx, px?: Call): void | Promise<void> {
    const nodes = this.deps.paths.get(name);
    if (!nodes) return;
    return this.run(nodes, ctx, px);
  }

  /**
   * Runs nodes in order; returns a promise only if one of them sleeps. A
   * subtree in which no function is hooked, no breakpoint set, and no
   * tracepoint its functions fire has probes is not run call by call: only
   * what it leaves behind (the preempt count of a lock it keeps) is applied,
   * as a patched-out kernel would run it unseen. Nor is one whose hooked
   * functions only hooks that count calls see: they are given its calls.
   */
  run(nodes: readonly PathNode[], ctx: RunCtx, px?: Call, from = 0, rep = 0): void | Promise<void> {
    const subtrees = this.subtrees;
    for (let i = from; i < nodes.length; i++) {
      const n = nodes[i]!;
      if (n.flag && !ctx.flags.has(n.flag)) continue;
      // A path that failed or stopped goes no further, seen or not.
      if (ctx.err || ctx.stop) return;
      const seen = subtrees.visibility(n);
      if (seen !== 'seen') {
        const times = i === from ? n.rep - rep : n.rep;
        if (seen === 'unseen') subtrees.applyUnseen(n, ctx, times);
        if (seen === 'unseen' || subtrees.countUnseen(n, ctx, times, this.maxDepth)) {
          this.skipped++;
          continue;
        }
      }
      for (let r = i === from ? rep : 0; r < n.rep; r++) {
        if (ctx.err || ctx.stop) return;
        const v = this.node(n, ctx, px, i === nodes.length - 1 && r === n.rep - 1);
        if (v instanceof Promise) {
          return v.then(() => this.run(nodes, ctx, px, r + 1 < n.rep ? i : i + 1, r + 1 < n.rep ? r + 1 : 0));
        }
      }
    }
  }

  /** One node: a hole, or a call of the named function (its kids inline when this kernel lacks it). */
  node(n: PathNode, ctx: RunCtx, px: Call | undefined, last: boolean): Value | void | Promise<Value | void> {
    if (isHole(n)) {
      const h = ctx.holes[n.name];
      if (h) return h(ctx, px);
      return;
    }
    const fn = this.fn(n.name);
    if (!fn) return this.run(n.kids, ctx, px);
    return this.call(fn, n.kids, ctx, px, n.chain, last);
  }

  /**
   * Calls fn with its arguments from the environment; its body runs `kids`
   * (or a custom body). `opRet`: fn is a file operation; it returns -errno
   * when the operation failed, and with 'value' what it returned (bytes).
   */
  call(fn: KernelFunction, kids: readonly PathNode[] | Body, ctx: RunCtx, px: Call | undefined, chain = false, last = false, opRet?: OpReturn): Value | Promise<Value> {
    const { task } = ctx;
    if (task.frames.length >= this.maxDepth) return 0n;
    if (this.deps.poll && (++this.counter & 15) === 0) this.deps.poll(task, px);
    const hook = this.deps.hooks.get(fn.name);
    const args = this.args(fn, ctx);
    const body: Body = (x) => {
      hook?.enter?.(x, ctx, typeof kids === 'function' ? undefined : kids);
      const r = typeof kids === 'function' ? kids(x) : this.run(kids, ctx, x);
      const done = (v?: unknown): Value => {
        const h = hook?.exit?.(x, ctx);
        if (ctx.err && (chain || opRet || CHAIN_RET.test(fn.name))) return BigInt.asUintN(64, BigInt(-ctx.err.errno));
        if (opRet === 'value' && ctx.ret !== undefined) return ctx.ret;
        if (typeof h === 'bigint') return h;
        if (typeof v === 'bigint' && typeof kids === 'function') return v;
        return this.ret(fn, ctx, chain);
      };
      if (r instanceof Promise) return r.then(done);
      return done(r);
    };
    if (last && px && this.deps.isTail?.(px.fn, fn)) return px.tail(fn, args, body);
    return this.deps.exec.call(task, fn, args, body);
  }

  /** Calls a function by name with a custom body (or its block `fop:NAME` / no kids); undefined when this kernel lacks it. */
  callNamed(name: string, ctx: RunCtx, px: Call | undefined, body?: Body | readonly PathNode[], opRet?: OpReturn): Value | Promise<Value> | undefined {
    const fn = this.fn(name);
    if (!fn) return undefined;
    return this.call(fn, body ?? [], ctx, px, false, false, opRet);
  }

  private args(fn: KernelFunction, ctx: RunCtx): bigint[] {
    let plan = this.argPlans[fn.id];
    if (!plan) {
      plan = this.planArgs(fn);
      this.argPlans[fn.id] = plan;
    }
    const out = new Array<bigint>(plan.length);
    for (let i = 0; i < plan.length; i++) out[i] = plan[i]!(ctx.env, ctx);
    return out;
  }

  private planArgs(fn: KernelFunction): ArgPlan {
    const proto = this.deps.proto(baseName(fn.name));
    if (!proto) return [];
    const lock = this.deps.lockAddr(fn);
    return proto.params.slice(0, 8).map((p) => {
      const t = resolveType(p.type);
      let struct: string | undefined;
      if (t.kind === 'ptr') {
        const target = resolveType(t.target);
        if (target.kind === 'struct' || target.kind === 'union') struct = target.name;
      }
      const name = p.name;
      const key = struct ? `struct ${struct}` : undefined;
      const lockish = struct !== undefined && /^(mutex|spinlock|raw_spinlock|rw_semaphore|rwlock|qspinlock|seqcount|wait_queue_head|swait_queue_head)$/.test(struct.replace(/^__/, ''));
      return (env: PathEnv) => env[name] ?? (key ? env[key] : undefined) ?? (lockish ? lock : 0n);
    });
  }

  private ret(fn: KernelFunction, ctx: RunCtx, chain: boolean): bigint {
    if (chain && ctx.ret !== undefined && CHAIN_RET.test(fn.name)) return ctx.ret;
    let plan = this.retPlans[fn.id];
    if (!plan) {
      plan = { kind: 'int' };
      const proto = this.deps.proto(baseName(fn.name));
      if (proto) {
        const r = resolveType(proto.ret);
        if (r.kind === 'void') plan = { kind: 'void' };
        else if (r.kind === 'ptr') {
          const target = resolveType(r.target);
          plan = { kind: 'ptr', struct: target.kind === 'struct' || target.kind === 'union' ? target.name : undefined };
        }
      }
      this.retPlans[fn.id] = plan;
    }
    if (plan.kind === 'ptr' && plan.struct) return ctx.env[`struct ${plan.struct}`] ?? 0n;
    return 0n;
  }
}
