/**
 * What interrupts a busy thread on one CPU of the emulated kernel: the
 * scheduler tick (HZ=250, src/kernel/activity.ts) with the softirqs it
 * raises (the timer wheel, RCU callbacks), the per-CPU kernel threads the
 * kernel's activity wakes (kworkers, ksoftirqd, rcu_preempt), and now and
 * then time the machine took without an interrupt (a hypervisor, SMIs).
 * Every choice comes from the kernel's seed.
 */
import { TICK_NS } from '../../kernel/activity.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { Rng } from '../../kernel/rng.js';
import type { Task } from '../../kernel/task.js';

/** LOCAL_TIMER_VECTOR on x86, as irq_noise names it. */
const LOCAL_TIMER_VECTOR = 236;
const TIMER_SOFTIRQ = 1;
const SCHED_SOFTIRQ = 7;
const RCU_SOFTIRQ = 9;
/** Mean time between kernel-thread wakeups on one CPU of an idle machine (activity rate 1). */
const THREAD_WAKE_NS = 250_000_000;
/** Mean time between interrupt-less gaps (hardware noise). */
const HW_GAP_NS = 4_000_000_000;

export type NoiseKind = 'irq' | 'softirq' | 'thread' | 'hw';

export interface Noise {
  kind: NoiseKind;
  /** When it began (ns since boot). */
  start: number;
  duration: number;
  vector: number;
  /** irq_noise's desc. */
  desc?: string;
  /** thread_noise's task. */
  task?: Task;
}

/** One gap in a busy thread's run: back-to-back noises (a tick and its softirqs), seen as one. */
export interface Gap {
  start: number;
  noises: Noise[];
}

export class NoiseSources {
  /** Per CPU: the next tick (ns), the next thread wakeup, the next hardware gap. */
  private readonly nextTick: number[];
  private readonly nextThread: number[];
  private readonly nextHw: number[];
  private readonly rngs: Rng[];

  constructor(
    private readonly k: Kernel,
    rng: Rng,
  ) {
    this.rngs = k.cpus.map((c) => rng.fork(`cpu${c.id}`));
    this.nextTick = k.cpus.map(() => 0);
    this.nextThread = k.cpus.map(() => 0);
    this.nextHw = k.cpus.map(() => 0);
  }

  /** Noise durations: a floor and an exponential tail (ns). */
  private dur(cpu: number, floor: number, mean: number): number {
    return Math.round(floor + this.rngs[cpu]!.exp(mean));
  }

  /** The gaps a thread running on `cpu` from `from` to `to` (ns) suffers, in time order. */
  gaps(cpu: number, from: number, to: number): Gap[] {
    const rng = this.rngs[cpu]!;
    const rate = this.k.activity?.rate ?? 0;
    const out: Gap[] = [];
    if (this.nextTick[cpu]! < from) this.nextTick[cpu] = from + rng.next() * TICK_NS;
    let t = this.nextTick[cpu]!;
    for (; t < to; t += TICK_NS) {
      const irq: Noise = { kind: 'irq', start: Math.round(t), duration: this.dur(cpu, 900, 900), vector: LOCAL_TIMER_VECTOR, desc: 'local_timer' };
      const gap: Gap = { start: irq.start, noises: [irq] };
      let at = irq.start + irq.duration;
      const soft = (vector: number, floor: number, mean: number) => {
        const n: Noise = { kind: 'softirq', start: at, duration: this.dur(cpu, floor, mean), vector };
        gap.noises.push(n);
        at += n.duration;
      };
      if (rng.chance(0.5)) soft(TIMER_SOFTIRQ, 700, 1200);
      if (rng.chance(0.35)) soft(RCU_SOFTIRQ, 1200, 2500);
      if (rng.chance(0.05)) soft(SCHED_SOFTIRQ, 800, 1500);
      out.push(gap);
    }
    this.nextTick[cpu] = t;
    if (rate > 0) {
      const mean = THREAD_WAKE_NS / rate;
      if (this.nextThread[cpu]! < from) this.nextThread[cpu] = from + rng.exp(mean);
      const threads = this.threadsOf(cpu);
      let w = this.nextThread[cpu]!;
      for (; w < to; w += rng.exp(mean)) {
        const start = Math.round(w);
        if (threads.length) out.push({ start, noises: [{ kind: 'thread', start, duration: this.dur(cpu, 3000, 9000), vector: 0, task: rng.pick(threads) }] });
      }
      this.nextThread[cpu] = w;
    }
    if (this.nextHw[cpu]! < from) this.nextHw[cpu] = from + rng.exp(HW_GAP_NS);
    while (this.nextHw[cpu]! < to) {
      const h = Math.round(this.nextHw[cpu]!);
      out.push({ start: h, noises: [{ kind: 'hw', start: h, duration: this.dur(cpu, 1000, 1500), vector: 0 }] });
      this.nextHw[cpu] = h + rng.exp(HW_GAP_NS);
    }
    return out.sort((a, b) => a.start - b.start);
  }

  /** The kernel threads the activity wakes on `cpu`. */
  private threadsOf(cpu: number): Task[] {
    const t = this.k.tasks;
    return [...t.byRole('kworker', cpu).filter((w) => !w.comm.endsWith('H')), ...t.byRole('ksoftirqd', cpu), ...t.byRole('rcu_preempt')];
  }
}
