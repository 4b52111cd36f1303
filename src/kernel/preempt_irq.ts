/**
 * The kernel's interrupt-disabled and preemption-disabled sections as the
 * latency tracers and the preemptirq events see them (trace_preemptirq.c):
 * local_irq_disable/enable and preempt_disable/enable change the task's
 * counts, and the transitions into and out of a section (trace_hardirqs_off
 * / _on, trace_preempt_off / _on) reach the watchers the trace layer
 * installs and fire preemptirq:irq_disable ... preempt_enable. Without
 * either, only the counts move.
 */
import type { Task } from './task.js';

/** What is told of each section's edges, with CALLER_ADDR0 / CALLER_ADDR1 of the call that made it. */
export interface PreemptIrqWatcher {
  hardirqsOff(task: Task, ip: bigint, parentIp: bigint): void;
  hardirqsOn(task: Task, ip: bigint, parentIp: bigint): void;
  preemptOff(task: Task, ip: bigint, parentIp: bigint): void;
  preemptOn(task: Task, ip: bigint, parentIp: bigint): void;
}

/** The preemptirq tracepoints. */
export type PreemptIrqEvent = 'irq_disable' | 'irq_enable' | 'preempt_disable' | 'preempt_enable';

/** Fires a preemptirq tracepoint (a no-op while it has no probe). */
export type PreemptIrqTrace = (name: PreemptIrqEvent, task: Task, ip: bigint, parentIp: bigint) => void;

export class PreemptIrq {
  /** The latency tracers timing the sections now. */
  private watchers: PreemptIrqWatcher[] = [];

  constructor(private readonly trace: PreemptIrqTrace = () => {}) {}

  watch(w: PreemptIrqWatcher): void {
    if (!this.watchers.includes(w)) this.watchers.push(w);
  }

  unwatch(w: PreemptIrqWatcher): void {
    this.watchers = this.watchers.filter((x) => x !== w);
  }

  /** local_irq_disable(): the first level off is a section's start (tracer first, then the event). */
  irqDisable(task: Task, ip: bigint, parentIp: bigint): void {
    if (task.irqsOff++ !== 0) return;
    for (const w of this.watchers) w.hardirqsOff(task, ip, parentIp);
    this.trace('irq_disable', task, ip, parentIp);
  }

  /** local_irq_enable(): the last level on ends the section (the event first, then the tracer). */
  irqEnable(task: Task, ip: bigint, parentIp: bigint): void {
    if (task.irqsOff <= 0) return;
    if (task.irqsOff === 1) {
      this.trace('irq_enable', task, ip, parentIp);
      for (const w of this.watchers) w.hardirqsOn(task, ip, parentIp);
    }
    task.irqsOff--;
  }

  /** preempt_disable() (preempt_count_add(1)): a section starts when the whole count was 0. */
  preemptDisable(task: Task, ip: bigint, parentIp: bigint, val = 1): void {
    task.preemptCount += val;
    if (task.preemptCount !== val) return;
    this.trace('preempt_disable', task, ip, parentIp);
    for (const w of this.watchers) w.preemptOff(task, ip, parentIp);
  }

  /** preempt_enable() (preempt_count_sub(1)): the section ends as the count goes back to 0. */
  preemptEnable(task: Task, ip: bigint, parentIp: bigint, val = 1): void {
    if ((task.preemptCount & 0xff) === 0) return;
    if (task.preemptCount === val) {
      this.trace('preempt_enable', task, ip, parentIp);
      for (const w of this.watchers) w.preemptOn(task, ip, parentIp);
    }
    task.preemptCount -= val;
  }
}
