/**
 * Which call subtrees someone can see. The kernel patches an unhooked
 * function down to a nop and a tracepoint without probes to a jump over it:
 * running such code leaves nothing anyone can observe. The path runner asks
 * here before it runs a subtree; one with no hooked function (ftrace site
 * or breakpoint), no tracepoint with probes among those its functions fire,
 * and no function whose effect always matters (a wake-up, a hole where the
 * emulator's own work runs) is passed over, and only what it would leave
 * behind for the code after it — the preempt count and interrupt depth of a
 * lock it keeps — is applied.
 *
 * A subtree whose hooked functions are reached only by hooks that count
 * calls (counted_calls.ts: the function profiler) is passed over too, and
 * what its calls would add is given to those hooks at once.
 *
 * What each node holds is computed once; whether it is seen is kept until a
 * hook or a tracepoint probe comes or goes (a generation moves), so a check
 * costs two comparisons in the steady state.
 */
import { isHole, type PathNode } from './call_paths.js';
import { type CountedCalls, UNSEEN_CALL_NS } from './counted_calls.js';
import type { FnHook, RunCtx, RunnerDeps } from './path_runner.js';
import type { KernelFunction } from './symbols.js';

/** What one node is, whatever is hooked. */
interface NodeFacts {
  /** Its function (undefined: a hole, or a name this kernel lacks, whose kids run inline). */
  readonly fn: KernelFunction | undefined;
  /** The node or a node below always runs. */
  readonly pinned: boolean;
  /** Tracepoints its own hook may fire. */
  readonly fires: readonly string[];
  /** What one run of its own hook adds to the preempt count and interrupts-off depth. */
  readonly preempt: number;
  readonly irqs: number;
  /** Some node below runs only under a flag: the subtree's net effect depends on the path's flags. */
  readonly flagged: boolean;
  /** How many calls deep it goes, at most. */
  readonly depth: number;
  /** Who sees it, as of generation `gen`. */
  gen: number;
  seen: Visibility;
  /** Who sees anything in it, its pinned functions' own work aside, as of generation `reachGen`. */
  reachGen?: number;
  reach?: Visibility;
  /** Net effect of one unseen run: [preempt, irqs], by the path's flags when `flagged`. */
  net?: Map<string, readonly [number, number]>;
  /** What one run gives hooks that count, by the path's flags when `flagged`, as of generation `countedGen`. */
  counted?: Map<string, CountedCalls>;
  countedGen?: number;
}

/** Who can see a subtree: nobody, only hooks that count its calls, or someone who must see them run. */
export type Visibility = 'unseen' | 'counted' | 'seen';

const NO_FIRES: readonly string[] = [];

export class SubtreeIndex {
  private readonly facts = new WeakMap<PathNode, NodeFacts>();
  /** Function names whose hooks always run, whatever they declare (added by the kernel's own process paths). */
  private readonly pinnedNames = new Set<string>();
  /** Off: every subtree runs call by call (to compare what the skipping leaves visible). */
  skipping = true;
  private gen = 1;
  private execGen = -1;
  private tpGen = -1;

  constructor(
    private readonly deps: Pick<RunnerDeps, 'exec' | 'hooks' | 'tracepointSeen' | 'tracepointGeneration'>,
    private readonly resolve: (name: string) => KernelFunction | undefined,
  ) {}

  /** These functions always run (their hooks are swapped in at run time, so what they do cannot be declared). */
  pin(names: readonly string[]): void {
    for (const n of names) this.pinnedNames.add(n);
  }

  /** Who could see running `n` (and what is below it). */
  visibility(n: PathNode): Visibility {
    if (!this.skipping) return 'seen';
    const f = this.factsOf(n);
    if (f.pinned) return 'seen';
    this.sync();
    if (f.gen !== this.gen) {
      f.gen = this.gen;
      f.seen = this.compute(n, f);
    }
    return f.seen;
  }

  /**
   * Who could see anything `n` and what is below it do, what pinned
   * functions must run for aside: whether the work could be done without
   * running it at all, as long as nothing but its result is wanted.
   */
  reach(n: PathNode): Visibility {
    if (!this.skipping) return 'seen';
    const f = this.factsOf(n);
    this.sync();
    if (f.reachGen !== this.gen || !f.reach) {
      f.reachGen = this.gen;
      f.reach = this.compute(n, f, (k) => this.reach(k));
    }
    return f.reach;
  }

  /**
   * Gives the hooks that count them `times` runs of `n` (a 'counted'
   * subtree) and applies what the runs leave behind. False when they must
   * run call by call: the calls would reach `maxDepth` frames, or the hooks
   * cannot take them at once now.
   */
  countUnseen(n: PathNode, ctx: RunCtx, times: number, maxDepth: number): boolean {
    const counting = this.deps.exec.counting;
    const f = this.factsOf(n);
    if (!counting || ctx.task.frames.length + f.depth >= maxDepth) return false;
    if (!counting.count(ctx.task, this.countedCalls(n, f, ctx.flags), f.depth, times)) return false;
    this.applyUnseen(n, ctx, times);
    return true;
  }

  /** What `times` unseen runs of `n` leave behind, applied to the task. */
  applyUnseen(n: PathNode, ctx: RunCtx, times: number): void {
    const [preempt, irqs] = this.net(n, ctx.flags);
    if (preempt === 0 && irqs === 0) return;
    const t = ctx.task;
    t.preemptCount = Math.max(0, t.preemptCount + preempt * times);
    t.irqsOff = Math.max(0, t.irqsOff + irqs * times);
  }

  private sync(): void {
    const e = this.deps.exec.generation;
    const t = this.deps.tracepointGeneration();
    if (e !== this.execGen || t !== this.tpGen) {
      this.execGen = e;
      this.tpGen = t;
      this.gen++;
    }
  }

  private compute(n: PathNode, f: NodeFacts, below: (k: PathNode) => Visibility = (k) => this.visibility(k)): Visibility {
    const { exec } = this.deps;
    let v: Visibility = 'unseen';
    if (f.fn && exec.seen(f.fn.id)) {
      if (exec.hasBreakpoint(f.fn.id) || !exec.counting?.countsOnly(f.fn.id)) return 'seen';
      v = 'counted';
    }
    for (const tp of f.fires) if (this.deps.tracepointSeen(tp)) return 'seen';
    for (const k of n.kids) {
      const kv = below(k);
      if (kv === 'seen') return 'seen';
      if (kv === 'counted') v = 'counted';
    }
    return v;
  }

  /** What one run of `n` under `flags` gives the hooks that count its calls (its hooked functions'). */
  private countedCalls(n: PathNode, f: NodeFacts, flags: ReadonlySet<string>): CountedCalls {
    const key = f.flagged ? [...flags].sort().join(',') : '';
    if (f.countedGen !== this.gen || !f.counted) {
      f.counted = new Map();
      f.countedGen = this.gen;
    }
    let c = f.counted.get(key);
    if (!c) f.counted.set(key, (c = this.collect(n, flags)));
    return c;
  }

  private collect(n: PathNode, flags: ReadonlySet<string>): CountedCalls {
    const at = new Map<number, number>();
    const out = { ips: [] as bigint[], ids: [] as number[], counts: [] as number[], incl: [] as number[], incl2: [] as number[] };
    const { exec } = this.deps;
    // Returns how long one run of `node` lasts; `mult`: how many runs one run of `n` makes.
    const walk = (node: PathNode, mult: number): number => {
      let d = 0;
      for (const k of node.kids) {
        if (k.flag && !flags.has(k.flag)) continue;
        d += k.rep * walk(k, mult * k.rep);
      }
      const fn = this.factsOf(node).fn;
      if (!fn) return d;
      d += UNSEEN_CALL_NS;
      if (exec.hooked(fn.id)) {
        let i = at.get(fn.id);
        if (i === undefined) {
          at.set(fn.id, (i = out.ids.length));
          out.ips.push(fn.addr + BigInt(fn.fentryOffset));
          out.ids.push(fn.id);
          out.counts.push(0);
          out.incl.push(0);
          out.incl2.push(0);
        }
        out.counts[i]! += mult;
        out.incl[i]! += mult * d;
        out.incl2[i]! += mult * d * d;
      }
      return d;
    };
    walk(n, 1);
    return out;
  }

  private factsOf(n: PathNode): NodeFacts {
    let f = this.facts.get(n);
    if (f) return f;
    const kids = n.kids.map((k) => this.factsOf(k));
    let fn: KernelFunction | undefined;
    let hook: FnHook | undefined;
    let pinned = isHole(n);
    if (!pinned) {
      fn = this.resolve(n.name);
      hook = fn ? this.deps.hooks.get(fn.name) : undefined;
      if (fn && (this.pinnedNames.has(fn.name) || (hook && !hook.effect))) pinned = true;
    }
    const effect = hook?.effect;
    f = {
      fn,
      pinned: pinned || kids.some((k) => k.pinned),
      fires: effect?.fires ?? NO_FIRES,
      preempt: effect?.preempt ?? 0,
      irqs: effect?.irqs ?? 0,
      flagged: n.kids.some((k, i) => k.flag !== undefined || kids[i]!.flagged),
      depth: (fn ? 1 : 0) + kids.reduce((m, k) => Math.max(m, k.depth), 0),
      gen: 0,
      seen: 'seen',
    };
    this.facts.set(n, f);
    return f;
  }

  /** Net [preempt, irqs] of one run of `n` under `flags`. */
  private net(n: PathNode, flags: ReadonlySet<string>): readonly [number, number] {
    const f = this.factsOf(n);
    const key = f.flagged ? [...flags].sort().join(',') : '';
    f.net ??= new Map();
    let v = f.net.get(key);
    if (!v) {
      let p = f.preempt;
      let i = f.irqs;
      for (const k of n.kids) {
        if (k.flag && !flags.has(k.flag)) continue;
        const [kp, ki] = this.net(k, flags);
        p += kp * k.rep;
        i += ki * k.rep;
      }
      v = [p, i] as const;
      f.net.set(key, v);
    }
    return v;
  }
}
