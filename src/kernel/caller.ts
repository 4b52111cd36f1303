/** The real process behind an operation on the mount (from FUSE's request context), and how it becomes a task. */
import type { Kernel } from './kernel.js';
import type { Task } from './task.js';

export interface Caller {
  pid: number;
  uid: number;
  gid: number;
}

/** The daemon itself, for in-process use of the library API. */
export const SELF: Caller = { pid: process.pid, uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };

/**
 * The task a request runs in, as whoever drives the kernel maps its caller:
 * the host driver mirrors the machine's processes (src/host/driver.ts), the
 * library keeps a task per pid (pidTasks).
 */
export type TaskOf = (caller: Caller) => Task;

/**
 * A task per calling pid, added when first seen as a process that was
 * already there (no fork invented); nothing is read from the machine.
 */
export function pidTasks(kernel: Kernel): TaskOf {
  return (caller) => kernel.tasks.process(caller.pid) ?? kernel.procs.adopt({ pid: caller.pid, tgid: caller.pid, comm: '<...>', ppid: 1, cpu: 0, state: 'S' });
}
