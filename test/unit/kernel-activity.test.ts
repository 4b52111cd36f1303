/**
 * The kernel's own activity: context switches on every CPU with plausible
 * previous and next tasks, wakeups, timers, RCU and slab events, a wide mix
 * of functions for the function tracer — reproducible with a seed.
 */
import { describe, expect, it } from 'vitest';
import { Task } from '../../src/kernel/task.js';
import { kernelEmu, recordCalls, recordEvents } from '../helpers/kernel.js';

const EVENTS = ['sched_switch', 'sched_waking', 'sched_wakeup', 'sched_stat_runtime', 'rcu_utilization', 'hrtimer_start', 'hrtimer_expire_entry', 'timer_expire_entry', 'softirq_entry', 'kmalloc', 'kfree', 'kmem_cache_alloc', 'kmem_cache_free', 'workqueue_execute_start'];

/** One virtual second of activity on `cpus` CPUs. */
function run(seed: number, cpus = 4, ms = 1000) {
  const e = kernelEmu({ cpus, seed, activity: 1, virtualClock: true });
  e.k.stop();
  const evs = recordEvents(e.k, EVENTS);
  for (let t = 0; t < ms; t += 5) {
    e.k.clock.advance(5_000_000);
    e.k.activity!.advance();
  }
  return { ...e, evs };
}

const show = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

describe('background activity', () => {
  it('switches tasks on every CPU within a second, each switch starting from the task the last one left running', () => {
    const { k, evs } = run(42, 4);
    const switches = evs.filter((e) => e.name === 'sched_switch');
    for (let cpu = 0; cpu < 4; cpu++) {
      const mine = switches.filter((e) => e.cpu === cpu);
      expect(mine.length).toBeGreaterThan(2);
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.args.prev_pid).toBe(mine[i - 1]!.args.next_pid);
      for (const s of mine) {
        expect(s.pid).toBe(s.args.prev_pid);
        const next = s.args.next_pid === 0 ? k.tasks.idle[cpu]! : k.tasks.get(s.args.next_pid as number)!;
        expect(next.comm).toBe(s.args.next_comm);
        if (next.pid !== 0) expect(next.kthread).toBe(true);
      }
    }
    const comms = new Set(switches.map((s) => s.args.next_comm as string));
    expect([...comms].some((c) => c.startsWith('swapper/'))).toBe(true);
    expect([...comms].some((c) => c.startsWith('kworker/') || c === 'rcu_preempt' || c.startsWith('ksoftirqd/'))).toBe(true);
    // A kernel thread goes to sleep idle (I) or interruptible (S); the idle task is always runnable.
    for (const s of switches) {
      if ((s.args.prev_comm as string).startsWith('swapper/')) expect(s.args.prev_state).toBe(0);
      else expect([0x1, 0x80]).toContain(s.args.prev_state);
    }
  });

  it('fires wakeups, ticks, timers, RCU and slab events along the way', () => {
    const { evs } = run(42, 2);
    const names = new Set(evs.map((e) => e.name));
    for (const n of ['sched_waking', 'sched_wakeup', 'rcu_utilization', 'hrtimer_start', 'hrtimer_expire_entry', 'softirq_entry', 'kmem_cache_alloc', 'kfree']) expect(names).toContain(n);
    const wake = evs.find((e) => e.name === 'sched_wakeup')!;
    expect(wake.ctx.flags & 1).toBe(1);
  });

  it('is the same for the same seed, and different for another', () => {
    const a = run(7, 2, 300).evs.map((e) => `${e.cpu} ${e.name} ${show(e.args)}`);
    const b = run(7, 2, 300).evs.map((e) => `${e.cpu} ${e.name} ${show(e.args)}`);
    const c = run(8, 2, 300).evs.map((e) => `${e.cpu} ${e.name} ${show(e.args)}`);
    expect(a.length).toBeGreaterThan(50);
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
  });

  it('runs a wide mix of functions: wide globs match many of them', () => {
    const e = kernelEmu({ cpus: 2, seed: 3, activity: 1, virtualClock: true });
    e.k.stop();
    const calls = recordCalls(e.k);
    for (let t = 0; t < 1000; t += 5) {
      e.k.clock.advance(5_000_000);
      e.k.activity!.advance();
    }
    const distinct = new Set(calls.map((c) => c.name));
    const counts = [/sched/, /lock/, /rcu/, /spin/, /timer/].map((g) => [...distinct].filter((n) => g.test(n)).length);
    for (const n of counts) expect(n).toBeGreaterThanOrEqual(10);
    expect(distinct.size).toBeGreaterThan(300);
  });

  it('costs nothing while nobody observes it, and keeps the CPUs\' state moving', () => {
    const e = kernelEmu({ cpus: 2, seed: 5, activity: 1, virtualClock: true });
    e.k.stop();
    const t0 = performance.now();
    for (let t = 0; t < 10_000; t += 5) {
      e.k.clock.advance(5_000_000);
      e.k.activity!.advance();
    }
    expect(performance.now() - t0).toBeLessThan(200);
  });

  it('wakes the RCU grace-period kthread when a reaped task is freed, on an idle CPU at once', () => {
    const e = kernelEmu({ cpus: 2, seed: 3, activity: 1, virtualClock: true });
    e.k.stop();
    const k = e.k;
    const parent = k.tasks.add(new Task(300, 300, 'sh', 1));
    const child = k.tasks.add(new Task(301, 301, 'ping', 300));
    for (const t of [parent, child]) t.cpu = 0;
    k.procs.fork(parent, child);
    k.sched.ensureRunning(child);
    const evs = recordEvents(k, ['rcu_utilization', 'sched_wakeup', 'sched_switch']);
    k.procs.exit(child);
    k.procs.reap(parent, child);
    const gp = k.tasks.byRole('rcu_preempt')[0]!;
    expect(k.sched.cpuOf(gp).curr).toBe(gp);
    expect(k.sched.cpuOf(gp).id).toBe(1);
    expect(evs.some((v) => v.name === 'sched_wakeup' && v.args.pid === gp.pid)).toBe(true);
    // The idle CPU's switch to it is seen in the idle task's context.
    expect(evs.some((v) => v.name === 'rcu_utilization' && v.pid === 0 && v.cpu === 1)).toBe(true);
    expect(evs.some((v) => v.name === 'sched_switch' && v.args.prev_pid === 0 && v.args.next_pid === gp.pid)).toBe(true);
  });
});
