/**
 * set_event_pid / set_event_notrace_pid of one trace array: which tasks'
 * events are recorded, and how the scheduler events decide (a switch counts
 * for both tasks, a wakeup for the waker and the woken).
 */
import type { ExecContext } from '../../kernel/context.js';

export class PidFilter {
  /** set_event_pid (null: no list). */
  pids: Set<number> | null = null;
  /** set_event_notrace_pid (null: no list). */
  noPids: Set<number> | null = null;

  get active(): boolean {
    return this.pids !== null || this.noPids !== null;
  }

  /** trace_ignore_this_task(). */
  ignores(pid: number, pids = this.pids, noPids = this.noPids): boolean {
    if (!pids && !noPids) return false;
    return (pids !== null && !pids.has(pid)) || (noPids !== null && noPids.has(pid));
  }

  /**
   * Whether an event of `name` fired now is left out: by the current task,
   * except sched_switch (kept if either side is traced) and the wakeups
   * (kept if the waker or the woken task is traced).
   */
  ignoresEvent(name: string, ctx: ExecContext, args: Readonly<Record<string, unknown>> | undefined): boolean {
    if (!this.active) return false;
    const cur = ctx.task.pid;
    if (args) {
      if (name === 'sched_switch') {
        const prev = Number(args.prev_pid ?? cur);
        const next = Number(args.next_pid ?? cur);
        const notrace = this.ignores(prev, null, this.noPids) && this.ignores(next, null, this.noPids);
        return notrace || (this.ignores(prev, this.pids, null) && this.ignores(next, this.pids, null));
      }
      if (name === 'sched_wakeup' || name === 'sched_wakeup_new' || name === 'sched_waking') {
        return this.ignores(cur) && this.ignores(Number(args.pid ?? cur));
      }
    }
    return this.ignores(cur);
  }

  /** A fork with event-fork on: the child joins each list its parent is on. */
  fork(parent: number, child: number): void {
    for (const l of [this.pids, this.noPids]) if (l && l.has(parent)) l.add(child);
  }

  /** A freed task leaves the lists. */
  exit(pid: number): void {
    this.pids?.delete(pid);
    this.noPids?.delete(pid);
  }
}
