/**
 * What the ftrace core needs from the emulated kernel beyond symbols: the call
 * executor whose __fentry__ sites it patches, the context a hook runs in, and
 * task fork/exit notifications (shadow stacks, function-fork). Kernel code
 * that provides these (`kernel.exec`, `kernel.taskLifecycle`) is used when
 * present; otherwise this makes them, so the core works on a bare Kernel.
 */
import type { ExecContext } from '../kernel/context.js';
import { Executor } from '../kernel/executor.js';
import type { Kernel } from '../kernel/kernel.js';
import { AddressSpace } from '../kernel/memory.js';
import type { Task } from '../kernel/task.js';

/** Fork and exit notifiers (sched_process_fork / do_exit's hooks). */
export interface TaskLifecycle {
  readonly forked: Set<(child: Task, parent: Task | undefined) => void>;
  readonly exited: Set<(task: Task) => void>;
}

interface KernelSide {
  exec?: Executor;
  taskLifecycle?: TaskLifecycle;
  /** The context a task runs in now (per-CPU state), when the kernel models it. */
  contextOf?(task: Task): ExecContext;
}

const executors = new WeakMap<Kernel, Executor>();
const lifecycles = new WeakMap<Kernel, TaskLifecycle>();

/** The kernel's call executor. */
export function executorOf(kernel: Kernel): Executor {
  const k = kernel as unknown as KernelSide;
  if (k.exec) return k.exec;
  let exec = executors.get(kernel);
  if (!exec) {
    const table = kernel.symbols;
    exec = new Executor({
      resolve: (name) => {
        const all = table.byName(name);
        return all.find((f) => !f.module) ?? all[0];
      },
      nrFunctions: table.functions.length,
      kernelMemory: new AddressSpace(),
    });
    executors.set(kernel, exec);
  }
  return exec;
}

/** Fork/exit notifications of the kernel. */
export function taskLifecycle(kernel: Kernel): TaskLifecycle {
  const k = kernel as unknown as KernelSide;
  if (k.taskLifecycle) return k.taskLifecycle;
  let l = lifecycles.get(kernel);
  if (!l) lifecycles.set(kernel, (l = { forked: new Set(), exited: new Set() }));
  return l;
}

/** Announces a new task (kernel_clone() done): hooks give it what it needs. */
export function notifyFork(kernel: Kernel, child: Task, parent?: Task): void {
  for (const f of taskLifecycle(kernel).forked) f(child, parent);
}

/** Announces a task's exit (do_exit()). */
export function notifyExit(kernel: Kernel, task: Task): void {
  for (const f of taskLifecycle(kernel).exited) f(task);
}

/** The context of `task` now: its CPU, flags and preemption depth, as an event recorded here shows them. */
export function contextOf(kernel: Kernel, task: Task): ExecContext {
  const k = kernel as unknown as KernelSide;
  if (k.contextOf) return k.contextOf(task);
  return { task, cpu: task.cpu % kernel.nrCpus, flags: 0, preemptCount: Math.min(task.preemptCount & 0xff, 0xf) };
}
