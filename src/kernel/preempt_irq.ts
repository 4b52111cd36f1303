/**
 * The kernel's interrupt-disabled and preemption-disabled sections as the
 * latency tracers see them (trace_preemptirq.c): local_irq_disable/enable
 * and preempt_disable/enable change the task's counts, and the transitions
 * into and out of a section (trace_hardirqs_off / _on, trace_preempt_off /
 * _on) reach the watcher the trace layer installs. Without one, only the
 * counts move.
 */
import type { Task } from './task.js';

/** What is told of each section's edges, with CALLER_ADDR0 / CALLER_ADDR1 of the call that made it. */
export interface PreemptIrqWatcher {
  hardirqsOff(task: Task, ip: bigint, parentIp: bigint): void;
  hardirqsOn(task: Task, ip: bigint, parentIp: bigint): void;
  preemptOff(task: Task, ip: bigint, parentIp: bigint): void;
  preemptOn(task: Task, ip: bigint, parentIp: bigint): void;
}

export class PreemptIrq {
  /** Set while a latency tracer (or a preemptirq event) watches the sections. */
  watcher?: PreemptIrqWatcher;

  /** local_irq_disable(): the first level off is a section's start. */
  irqDisable(task: Task, ip: bigint, parentIp: bigint): void {
    if (task.irqsOff++ === 0) this.watcher?.hardirqsOff(task, ip, parentIp);
  }

  /** local_irq_enable(): the last level on ends the section. */
  irqEnable(task: Task, ip: bigint, parentIp: bigint): void {
    if (task.irqsOff <= 0) return;
    if (task.irqsOff === 1) this.watcher?.hardirqsOn(task, ip, parentIp);
    task.irqsOff--;
  }

  /** preempt_disable() (preempt_count_add(1)): a section starts when the whole count was 0. */
  preemptDisable(task: Task, ip: bigint, parentIp: bigint, val = 1): void {
    task.preemptCount += val;
    if (task.preemptCount === val) this.watcher?.preemptOff(task, ip, parentIp);
  }

  /** preempt_enable() (preempt_count_sub(1)): the section ends as the count goes back to 0. */
  preemptEnable(task: Task, ip: bigint, parentIp: bigint, val = 1): void {
    if ((task.preemptCount & 0xff) === 0) return;
    if (task.preemptCount === val) this.watcher?.preemptOn(task, ip, parentIp);
    task.preemptCount -= val;
  }
}
