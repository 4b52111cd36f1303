/** The task list: kernel threads plus every real process seen using the mount. */
import type { Caller } from './caller.js';
import { readProcInfo, Task } from './task.js';

export class TaskTable {
  private readonly byPid = new Map<number, Task>();
  /** The idle task of each CPU (pid 0, comm swapper/N). */
  readonly idle: Task[];

  constructor(nrCpus: number) {
    this.idle = Array.from({ length: nrCpus }, (_, cpu) => {
      const t = new Task(0, 0, `swapper/${cpu}`, 0, true);
      t.cpu = cpu;
      return t;
    });
  }

  get(pid: number): Task | undefined {
    return this.byPid.get(pid);
  }

  all(): IterableIterator<Task> {
    return this.byPid.values();
  }

  add(task: Task): Task {
    this.byPid.set(task.pid, task);
    return task;
  }

  delete(pid: number): void {
    this.byPid.delete(pid);
  }

  /** The task mirroring the calling process, created from /proc on first sight. */
  fromCaller(caller: Caller, nrCpus: number): Task {
    const known = this.byPid.get(caller.pid);
    const info = readProcInfo(caller.pid);
    if (known && (!info || info.startTime === known.startTime)) {
      if (info) {
        known.comm = info.comm;
        known.cpu = info.cpu % nrCpus;
      }
      return known;
    }
    const t = new Task(caller.pid, info?.tgid ?? caller.pid, info?.comm ?? `<...>`, info?.ppid ?? 1);
    t.cpu = (info?.cpu ?? 0) % nrCpus;
    t.startTime = info?.startTime ?? 0;
    return this.add(t);
  }
}
