/**
 * The emulated kernel: time, CPUs, tasks, and the call paths that operations
 * on the mount run. It knows nothing of the filesystem that drives it.
 */
import { availableParallelism } from 'node:os';
import type { Caller } from './caller.js';
import { Clock } from './clock.js';
import { DEFAULT_SERIES, type Series } from './series.js';
import type { Task } from './task.js';
import { TaskTable } from './tasks.js';

export interface KernelOptions {
  /** Kernel series to behave as (default 7.2). */
  series?: Series;
  /** Number of CPUs (default: the host's). */
  cpus?: number;
  /** Seed for everything random in the background activity. */
  seed?: number;
}

/** A system call made on the mount, as the kernel path that serves it needs to know it. */
export interface Syscall {
  name: 'openat' | 'read' | 'write' | 'close' | 'getdents64' | 'newfstatat' | 'mkdir' | 'rmdir' | 'fchownat' | 'fchmodat' | 'poll' | 'truncate';
  /** Path relative to the tracefs root. */
  path: string;
  /** Bytes asked for (read/write). */
  count?: number;
}

export class Kernel {
  readonly series: Series;
  readonly nrCpus: number;
  readonly clock = new Clock();
  readonly tasks: TaskTable;
  readonly seed: number;

  constructor(opts: KernelOptions = {}) {
    this.series = opts.series ?? DEFAULT_SERIES;
    this.nrCpus = Math.max(1, opts.cpus ?? availableParallelism());
    this.seed = opts.seed ?? 1;
    this.tasks = new TaskTable(this.nrCpus);
  }

  /** The task of a calling process. */
  taskOf(caller: Caller): Task {
    return this.tasks.fromCaller(caller, this.nrCpus);
  }

  /**
   * Runs `body` as the kernel side of `call` in the caller's task. The body
   * may return a promise (a read that sleeps); the call returns when it does.
   */
  syscall<T>(caller: Caller, call: Syscall, body: (task: Task) => T): T {
    void call;
    return body(this.taskOf(caller));
  }
}
