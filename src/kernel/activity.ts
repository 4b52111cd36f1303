/**
 * The kernel's own background work, on every CPU, all the time: the idle
 * loop with its timer interrupts and softirqs, kernel threads woken from
 * them (rcu_preempt, kworkers, ksoftirqd) that run and go back to sleep,
 * processes that stop running once they stop making calls — replayed from
 * real call trees (call_paths.ts), with the tracepoints their functions
 * fire. Work items run a sample of real functions by subsystem
 * (function_sampler.ts). Every choice comes from the seed; when nothing
 * observes the kernel (no hooked function, no enabled tracepoint) only the
 * scheduler state moves, which costs next to nothing.
 */
import type { PathNode } from './call_paths.js';
import { HARDIRQ_OFFSET, type Cpu } from './cpu.js';
import type { Call } from './executor.js';
import type { FunctionSampler } from './function_sampler.js';
import type { Kernel } from './kernel.js';
import type { RunCtx } from './path_runner.js';
import type { Rng } from './rng.js';
import type { Task } from './task.js';

export interface ActivityOptions {
  /** Multiplier of the event rate of an idle machine (1: about 25 context switches per CPU per second, as an idle machine). */
  rate?: number;
}

/** Mean time between steps of one CPU at rate 1 (ns): an idle CPU wakes about a dozen times a second. */
const STEP_NS = 80_000_000;
/** HZ=250: the scheduler tick while a CPU is busy. */
export const TICK_NS = 4_000_000;
/** A process that made no call for this long is asleep (it waits for input, or computes without us seeing it). */
export const USER_IDLE_NS = 20_000_000;
/** The most steps one CPU catches up in one go (after a pause of the event loop). */
const MAX_CATCHUP = 8;

const NO_FLAGS: ReadonlySet<string> = new Set();

/** Interned call nodes: the same call (name and kids) is one object, so what the runner learned of it (subtree.ts) is kept. */
class NodeCache {
  private readonly byKey = new Map<string, PathNode>();
  private readonly ids = new WeakMap<PathNode, number>();
  private next = 1;

  get(name: string, kids: readonly PathNode[]): PathNode {
    const key = kids.length ? `${name}(${kids.map((k) => this.idOf(k)).join(',')})` : name;
    let n = this.byKey.get(key);
    if (!n) {
      // Sampled work makes new combinations forever: a bounded cache, emptied when full.
      if (this.byKey.size >= 20_000) this.byKey.clear();
      n = { name, kids, rep: 1, chain: false };
      this.byKey.set(key, n);
    }
    return n;
  }

  private idOf(n: PathNode): number {
    let i = this.ids.get(n);
    if (i === undefined) this.ids.set(n, (i = this.next++));
    return i;
  }
}

export class Activity {
  readonly rate: number;
  private timer?: NodeJS.Timeout;
  private readonly rngs: Rng[];
  private readonly segs = new Map<string, number>();
  private readonly nodes = new NodeCache();
  /** Per CPU: when the next scheduler tick is due while it runs something (ns). */
  private readonly nextTick: number[];
  private ticking = false;

  constructor(
    private readonly k: Kernel,
    opts: ActivityOptions,
    rng: Rng,
    private readonly sampler: FunctionSampler,
  ) {
    this.rate = Math.max(0, opts.rate ?? 1);
    this.rngs = k.cpus.map((c) => rng.fork(`cpu${c.id}`));
    this.nextTick = k.cpus.map(() => 0);
  }

  /** A call of `name` with `kids` (interned). */
  private node(name: string, kids: readonly PathNode[] = []): PathNode {
    return this.nodes.get(name, kids);
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  /** Runs in real time: a few times per second per CPU, catching up to the clock. */
  start(): void {
    if (this.timer || this.rate <= 0) return;
    const period = Math.max(5, Math.min(50, STEP_NS / this.rate / 1e6));
    this.timer = setInterval(() => this.advance(), period);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Runs every CPU's due steps up to `toNs` (the kernel clock by default). */
  advance(toNs = this.k.clock.now()): void {
    if (this.rate <= 0) return;
    const gap = STEP_NS / this.rate;
    for (const cpu of this.k.cpus) {
      const rng = this.rngs[cpu.id]!;
      if (cpu.activityNs === 0) cpu.activityNs = toNs - rng.next() * gap;
      let n = 0;
      while (cpu.activityNs + gap <= toNs) {
        cpu.activityNs += rng.exp(gap);
        if (n++ < MAX_CATCHUP) this.step(cpu);
      }
      if (cpu.activityNs < toNs - gap * MAX_CATCHUP) cpu.activityNs = toNs - gap;
    }
  }

  /** One step of one CPU: whatever runs there does its next piece of work. */
  step(cpu: Cpu): void {
    const k = this.k;
    const curr = cpu.curr;
    const rng = this.rngs[cpu.id]!;
    if (!k.observed()) {
      this.quietStep(cpu, rng);
      return;
    }
    if (!k.deep()) {
      this.lightStep(cpu, rng);
      return;
    }
    if (curr.isIdle) {
      if (cpu.runqueue.length) k.sched.schedule(cpu, 'R');
      else this.idleRun(cpu, rng);
      this.runWoken(cpu, rng);
    } else if (curr.kthread) {
      this.kthreadRun(cpu, curr, rng);
      this.runWoken(cpu, rng);
    } else if (k.clock.now() - curr.lastSyscallNs > USER_IDLE_NS || curr.exited) {
      k.sched.schedule(cpu, curr.exited ? 'Z' : 'S');
      this.runWoken(cpu, rng);
    } else this.tick(cpu, curr, undefined);
  }

  /** Nobody looks: only who runs where changes. */
  private quietStep(cpu: Cpu, rng: Rng): void {
    const curr = cpu.curr;
    if (!curr.isIdle && !curr.kthread && this.k.clock.now() - curr.lastSyscallNs <= USER_IDLE_NS && !curr.exited) return;
    const next = cpu.runqueue[0];
    if (next) this.k.sched.schedule(cpu, curr.isIdle ? 'R' : curr.kthread ? 'I' : 'S', next);
    else if (!curr.isIdle) this.k.sched.schedule(cpu, curr.kthread ? 'I' : 'S', cpu.idle);
    void rng;
  }

  /**
   * Only scheduler and process events are seen: the same lives (a kernel
   * thread woken from an interrupt on an idle CPU runs, then sleeps), without
   * the calls nobody looks at.
   */
  private lightStep(cpu: Cpu, rng: Rng): void {
    const k = this.k;
    const curr = cpu.curr;
    if (!curr.isIdle && !curr.kthread) {
      if (k.clock.now() - curr.lastSyscallNs > USER_IDLE_NS || curr.exited) k.sched.schedule(cpu, curr.exited ? 'Z' : 'S');
      return;
    }
    if (curr.isIdle && !cpu.runqueue.length) {
      const cands = [...k.tasks.byRole('kworker', cpu.id).filter((t) => !t.comm.endsWith('H')), ...k.tasks.byRole('ksoftirqd', cpu.id), ...k.tasks.byRole('rcu_preempt')].filter((t) => k.sched.sleeping(t));
      if (cands.length) {
        const w = rng.pick(cands);
        if (k.tasks.role(w) === 'rcu_preempt') w.cpu = cpu.id;
        // Woken from the timer interrupt that ended the idle period.
        curr.preemptCount += HARDIRQ_OFFSET;
        curr.irqsOff += 1;
        k.sched.wakeEvents(curr, w);
        curr.preemptCount -= HARDIRQ_OFFSET;
        curr.irqsOff -= 1;
      }
    }
    for (let i = 0; i < 2; i++) {
      if (cpu.curr.isIdle && cpu.runqueue.length) k.sched.schedule(cpu, 'R');
      const t = cpu.curr;
      if (t.isIdle || !t.kthread) return;
      const role = k.tasks.role(t);
      k.sched.schedule(cpu, role === 'ksoftirqd' || role === 'migration' ? 'S' : 'I');
    }
  }

  /**
   * call_rcu() with no grace period under way (a reaped task's struct is
   * freed after one): the grace-period kthread is woken from `from` (if the
   * exit's calls did not already), and an idle CPU switches to it at once, as
   * its wakeup IPI makes it; it runs its grace period at that CPU's next
   * step. Only while call trees run: that is when its work can be seen.
   */
  startGracePeriod(from: Task): void {
    const k = this.k;
    if (this.rate <= 0 || !k.deep()) return;
    const gp = k.tasks.byRole('rcu_preempt')[0];
    if (!gp) return;
    if (k.sched.sleeping(gp)) {
      const idle = k.cpus.find((c) => c.curr.isIdle && !c.runqueue.length);
      if (idle) gp.cpu = idle.id;
      k.sched.wakeEvents(from, gp);
    }
    // Woken here or by the exit's own calls: an idle CPU does not wait for its next tick to run it.
    const cpu = k.sched.cpuOf(gp);
    if (cpu.curr.isIdle && cpu.runqueue[0] === gp) k.sched.schedule(cpu, 'R', gp);
  }

  /** Woken kernel threads run until they sleep again. */
  private runWoken(cpu: Cpu, rng: Rng): void {
    for (let i = 0; i < 2; i++) {
      const curr = cpu.curr;
      if (curr.isIdle && cpu.runqueue.length) this.k.sched.schedule(cpu, 'R');
      const now = cpu.curr;
      if (!now.kthread || now.isIdle) return;
      this.kthreadRun(cpu, now, rng);
    }
  }

  /** Picks the next recorded segment of a kind (run:<kind>:<i>), in turn from a seeded start. */
  private segment(kind: string, rng: Rng): readonly PathNode[] | undefined {
    let n = 0;
    while (this.k.paths.get(`run:${kind}:${n}`)) n++;
    if (!n) return undefined;
    const at = this.segs.get(kind) ?? rng.int(n);
    this.segs.set(kind, (at + 1) % n);
    return this.k.paths.get(`run:${kind}:${at}`);
  }

  private ctx(task: Task, cpu: Cpu, onSwitch: (c: RunCtx) => void): RunCtx {
    return {
      task,
      env: { task: task.addr, p: task.addr, 'struct task_struct': task.addr, 'struct rq': cpu.rq },
      flags: NO_FLAGS,
      holes: {
        $switch: (c) => {
          onSwitch(c);
          c.stop = true;
        },
      },
    };
  }

  /** The idle loop until something is woken (or the recorded loop ends). */
  private idleRun(cpu: Cpu, rng: Rng): void {
    const k = this.k;
    const seg = this.segment('idle', rng);
    if (!seg) return;
    const ctx = this.ctx(cpu.idle, cpu, () => {
      if (cpu.runqueue.length) k.sched.switchNow(cpu, 'R');
    });
    this.guard(cpu.idle, () => void k.runner.run(seg, ctx));
  }

  /** A kernel thread's run: its recorded work, a sampled work item for kworkers, then schedule(). */
  private kthreadRun(cpu: Cpu, t: Task, rng: Rng): void {
    const k = this.k;
    const role = k.tasks.role(t);
    const kind = role === 'rcu_preempt' ? 'rcu_preempt' : role === 'ksoftirqd' ? 'ksoftirqd' : 'kworker';
    const seg = this.segment(kind, rng) ?? this.segment('kworker', rng);
    const state = role === 'kworker' || role === 'rescuer' || role === 'kworker-unbound' || role === 'rcu_preempt' ? 'I' : 'S';
    const ctx = this.ctx(t, cpu, () => k.sched.switchNow(cpu, state));
    this.guard(t, () => {
      if (kind === 'kworker') {
        // Work items: a few sampled functions of the kernel's subsystems.
        for (let i = 1 + rng.int(3); i > 0; i--) {
          const f = this.sampler.next();
          if (f) void k.runner.run([this.node('process_one_work', [f])], { ...ctx, holes: {} });
        }
        if (rng.chance(0.6)) void k.runner.run([this.allocWork(rng)], { ...ctx, holes: {} });
      }
      if (seg) void k.runner.run(seg, ctx);
    });
    if (cpu.curr === t) k.sched.schedule(cpu, state);
  }

  /** rcu_do_batch: a few callbacks that free what readers may have still been using. */
  private rcuBatch(rng: Rng): PathNode {
    const cbs: PathNode[] = [];
    const kinds = [
      this.node('i_callback', [this.node('free_inode_nonrcu', [this.node('kmem_cache_free')])]),
      this.node('__d_free', [this.node('kmem_cache_free')]),
      this.node('delayed_put_pid', [this.node('put_pid', [this.node('kmem_cache_free')])]),
      this.node('kfree_rcu_work', [this.node('kfree'), this.node('kfree')]),
    ];
    for (let n = 1 + rng.int(4); n > 0; n--) cbs.push(this.node('rcu_cblist_dequeue'), rng.pick(kinds));
    return this.node('rcu_do_batch', cbs);
  }

  /** A work item that allocates and frees (most of them do). */
  private allocWork(rng: Rng): PathNode {
    const alloc = rng.chance(0.5) ? [this.node('kmem_cache_alloc_noprof'), this.node('kmem_cache_free')] : [this.node('__kmalloc_cache_noprof'), this.node('kfree')];
    return this.node('process_one_work', [this.node('vmstat_update', [this.node('refresh_cpu_vm_stats', [this.node('_raw_spin_lock'), ...alloc, this.node('_raw_spin_unlock')])])]);
  }

  /** A timer interrupt in whatever `task` does now (a hardirq, then the softirqs it raised). */
  tick(cpu: Cpu, task: Task, px: Call | undefined): void {
    const k = this.k;
    if (this.ticking) return;
    this.ticking = true;
    try {
      const timer = k.paths.get('irq_timer') ?? [];
      const soft = k.paths.get('softirqs') ?? [];
      const rng = this.rngs[cpu.id]!;
      const sirq = soft.length && rng.chance(0.5) ? [soft[rng.int(soft.length)]!] : [];
      // RCU callbacks whose grace period ended: objects freed from the RCU softirq.
      if (rng.chance(0.35)) sirq.push(this.node('handle_softirqs', [this.node('rcu_core_si', [this.node('rcu_core', [this.node('rcu_segcblist_extract_done_cbs'), this.rcuBatch(rng)])])]));
      const nodes: PathNode[] = [this.node('irq_enter_rcu'), ...timer, this.node('irq_exit_rcu', sirq), this.node('raw_irqentry_exit_cond_resched')];
      const ctx: RunCtx = { task, env: { task: task.addr, 'struct rq': cpu.rq }, flags: NO_FLAGS, holes: {} };
      this.guard(task, () => void k.runner.run(nodes, ctx, px));
    } finally {
      this.ticking = false;
    }
  }

  /** The runner's poll: a tick strikes in the middle of a path when one is due on that CPU. */
  maybeTick(task: Task, px: Call | undefined): void {
    if (this.rate <= 0 || this.ticking || task.isIdle) return;
    const now = this.k.clock.now();
    const cpu = this.k.sched.cpuOf(task);
    if (cpu.curr !== task) return;
    const due = this.nextTick[cpu.id]!;
    if (now < due) return;
    this.nextTick[cpu.id] = now + TICK_NS / this.rate;
    if (due === 0) return;
    this.tick(cpu, task, px);
  }

  /** Work that leaves the task's counts as it found them (a recorded tree may be unbalanced). */
  private guard(task: Task, f: () => void): void {
    const pc = task.preemptCount;
    const irq = task.irqsOff;
    try {
      f();
    } finally {
      task.preemptCount = pc;
      task.irqsOff = irq;
    }
  }
}
