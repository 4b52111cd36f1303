/** The task list: idle tasks, kernel threads, and every user process the kernel was told of. */
import { kernelThreads, type KthreadRole } from './kthreads.js';
import { Task } from './task.js';

export class TaskTable {
  private readonly byPid = new Map<number, Task>();
  /** The idle task of each CPU (pid 0, comm swapper/N). */
  readonly idle: Task[];
  /** Kernel threads (and init), in pid order. */
  readonly kthreads: Task[] = [];
  private readonly roles = new Map<Task, KthreadRole>();
  /** Lays out a new task in kernel memory (task_struct, stack); set by the kernel. */
  onAdd?: (t: Task) => void;
  /** Called when a task leaves the table (its memory can go). */
  onDelete?: (t: Task) => void;

  constructor(readonly nrCpus: number) {
    this.idle = Array.from({ length: nrCpus }, (_, cpu) => {
      const t = new Task(0, 0, `swapper/${cpu}`, 0, true);
      t.cpu = cpu;
      t.origin = 'kernel';
      return t;
    });
    for (const k of kernelThreads(nrCpus)) {
      const t = new Task(k.pid, k.pid, k.comm, k.ppid, k.role !== 'init');
      t.prio = k.prio;
      t.cpu = k.cpu >= 0 ? k.cpu : k.pid % nrCpus;
      t.state = k.role === 'init' ? 'S' : k.role.startsWith('kworker') || k.role === 'rescuer' ? 'I' : 'S';
      t.origin = 'kernel';
      this.kthreads.push(t);
      this.roles.set(t, k.role);
    }
  }

  /** The task with this pid: a user process first, then a kernel thread. */
  get(pid: number): Task | undefined {
    return this.byPid.get(pid) ?? this.kthreadByPid(pid);
  }

  /** A process known by its pid (not a kernel thread). */
  process(pid: number): Task | undefined {
    return this.byPid.get(pid);
  }

  private kthreadByPid(pid: number): Task | undefined {
    if (pid === 0) return this.idle[0];
    const k = this.kthreads;
    // Built-in pids are dense from 1.
    const t = k[pid - 1];
    if (t?.pid === pid) return t;
    return k.find((x) => x.pid === pid);
  }

  /** User processes (not kernel threads). */
  all(): IterableIterator<Task> {
    return this.byPid.values();
  }

  add(task: Task): Task {
    const old = this.byPid.get(task.pid);
    if (old && old !== task) this.onDelete?.(old);
    this.byPid.set(task.pid, task);
    this.onAdd?.(task);
    return task;
  }

  delete(pid: number): void {
    const t = this.byPid.get(pid);
    if (!t) return;
    this.byPid.delete(pid);
    this.onDelete?.(t);
  }

  /** kthread_create_on_cpu(): a new kernel thread bound to `cpu`, with a pid no task has. */
  spawnKthread(comm: string, cpu: number, prio: number): Task {
    let pid = 1;
    for (const t of this.kthreads) pid = Math.max(pid, t.pid + 1);
    for (const t of this.byPid.values()) pid = Math.max(pid, t.pid + 1);
    const t = new Task(pid, pid, comm, 2, true);
    t.cpu = cpu;
    t.prio = prio;
    t.state = 'S';
    t.origin = 'kernel';
    this.kthreads.push(t);
    this.roles.set(t, 'other');
    this.onAdd?.(t);
    return t;
  }

  /** A kernel thread made by spawnKthread() exited. */
  reapKthread(t: Task): void {
    const i = this.kthreads.indexOf(t);
    if (i < 0) return;
    this.kthreads.splice(i, 1);
    this.roles.delete(t);
    this.onDelete?.(t);
  }

  role(t: Task): KthreadRole | undefined {
    return this.roles.get(t);
  }

  /** Kernel threads of a role, optionally bound to a CPU. */
  byRole(role: KthreadRole, cpu?: number): Task[] {
    return this.kthreads.filter((t) => this.roles.get(t) === role && (cpu === undefined || t.cpu === cpu));
  }
}
