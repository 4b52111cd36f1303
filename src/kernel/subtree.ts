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
 * What each node holds is computed once; whether it is seen is kept until a
 * hook or a tracepoint probe comes or goes (a generation moves), so a check
 * costs two comparisons in the steady state.
 */
import { isHole, type PathNode } from './call_paths.js';
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
  /** Whether someone sees it, as of generation `gen`. */
  gen: number;
  seen: boolean;
  /** Net effect of one unseen run: [preempt, irqs], by the path's flags when `flagged`. */
  net?: Map<string, readonly [number, number]>;
}

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
    private readonly deps: Pick<RunnerDeps, 'exec' | 'hooks' | 'tracepointEnabled' | 'tracepointGeneration'>,
    private readonly resolve: (name: string) => KernelFunction | undefined,
  ) {}

  /** These functions always run (their hooks are swapped in at run time, so what they do cannot be declared). */
  pin(names: readonly string[]): void {
    for (const n of names) this.pinnedNames.add(n);
  }

  /** Whether running `n` (and what is below it) could be seen by anyone. */
  observed(n: PathNode): boolean {
    if (!this.skipping) return true;
    const f = this.factsOf(n);
    if (f.pinned) return true;
    this.sync();
    if (f.gen !== this.gen) {
      f.gen = this.gen;
      f.seen = this.compute(n, f);
    }
    return f.seen;
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

  private compute(n: PathNode, f: NodeFacts): boolean {
    if (f.fn && this.deps.exec.hooked(f.fn.id)) return true;
    for (const tp of f.fires) if (this.deps.tracepointEnabled(tp)) return true;
    for (const k of n.kids) if (this.observed(k)) return true;
    return false;
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
      gen: 0,
      seen: true,
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
