/**
 * The scheduler as tracing sees it: which task runs on each CPU, wakeups
 * (try_to_wake_up with sched_waking / sched_wakeup) and context switches
 * (schedule() → sched_switch with the previous task's state). Kernel threads
 * and the idle task switch synchronously; a task that sleeps inside a system
 * call (a waiting trace_pipe read) stays inside schedule() until it is woken
 * and switched back in.
 */
import type { ExecContext } from './context.js';
import type { Cpu } from './cpu.js';
import type { Call } from './executor.js';
import type { PathRunner, RunCtx } from './path_runner.js';
import type { Rng } from './rng.js';
import { TASK_REPORT_MAX, TASK_STATE_BITS, type Task, type TaskState } from './task.js';
import type { TaskTable } from './tasks.js';
import type { TracepointRegistry } from './tracepoint.js';

/** A task's first slice: one scheduler tick at HZ=250. */
const SLICE_NS = 4_000_000;

interface SchedHost {
  readonly cpus: readonly Cpu[];
  readonly tasks: TaskTable;
  readonly runner: PathRunner;
  readonly tracepoints: TracepointRegistry;
  context(task: Task): ExecContext;
  nowNs(): bigint;
  /** Whether anything can see calls or events now (else only the state changes). */
  observed(): boolean;
  /** Whether call trees run now (else only the events). */
  deep(): boolean;
  /** Calls a hole-free function with the runner in `task` (for finish_task_switch and friends). */
  readonly rng: Rng;
}

/** The state a switched-out task had: a TaskState, or preempted while runnable. */
type PrevState = TaskState | 'R+';

const NO_FLAGS: ReadonlySet<string> = new Set();

export class Scheduler {
  /** The CPUs a task may run on (sched_setaffinity), as the host tells; undefined: every CPU. */
  affinity: (task: Task) => readonly number[] | undefined = () => undefined;

  constructor(private readonly h: SchedHost) {}

  cpuOf(task: Task): Cpu {
    return this.h.cpus[task.cpu % this.h.cpus.length]!;
  }

  /** Makes a task runnable on its CPU (the effect of try_to_wake_up). */
  wake(task: Task): void {
    if (task.exited) return;
    const cpu = this.cpuOf(task);
    task.state = 'R';
    if (cpu.curr === task || cpu.runqueue.includes(task)) return;
    cpu.runqueue.push(task);
    cpu.needResched = true;
  }

  /**
   * set_task_cpu(): the task runs on CPU `cpu` from now on (its host
   * process moved, or the scheduler chose). Waiting on another CPU's
   * runqueue, it moves to this one's (else that CPU would switch it in
   * there). Running on another CPU, it stays until it next has to run here
   * (ensureRunning switches it out there).
   */
  migrate(task: Task, cpu: number): void {
    const to = this.h.cpus[cpu % this.h.cpus.length]!;
    let queued = false;
    for (const c of this.h.cpus) {
      const i = c !== to ? c.runqueue.indexOf(task) : -1;
      if (i < 0) continue;
      c.runqueue.splice(i, 1);
      queued = true;
    }
    task.cpu = to.id;
    if (queued && to.curr !== task && !to.runqueue.includes(task)) {
      to.runqueue.push(task);
      to.needResched = true;
    }
  }

  /** The task blocks now (`state`: S, D): switched out if it runs, else taken off its runqueue. */
  blocked(task: Task, state: TaskState & PrevState): void {
    const cpu = this.cpuOf(task);
    if (cpu.curr === task) this.schedule(cpu, state);
    else this.dequeue(task, state);
  }

  /** A runnable task found asleep without having been seen to run (a host process blocked meanwhile): off its runqueue, no event. */
  dequeue(task: Task, state: TaskState): void {
    const cpu = this.cpuOf(task);
    const i = cpu.runqueue.indexOf(task);
    if (i >= 0) cpu.runqueue.splice(i, 1);
    task.state = state;
  }

  /** Whether try_to_wake_up would wake it (it sleeps). */
  sleeping(task: Task): boolean {
    const cpu = this.cpuOf(task);
    return cpu.curr !== task && !cpu.runqueue.includes(task) && !task.exited;
  }

  /** The task a wakeup in this call chain is for, as the caller chain tells (RCU's kthread, a kworker, ksoftirqd...). */
  wakeeFor(x: Call, ctx: RunCtx): Task | undefined {
    if (ctx.wakee) return this.sleeping(ctx.wakee) ? this.placed(ctx.wakee, x.task) : undefined;
    const f = x.task.frames;
    let why = '';
    for (let i = f.lastIndexOf(x) - 1, n = 0; i >= 0 && n < 10; i--, n++) {
      const name = f[i]!.fn.name;
      if (/^(rcu_gp_kthread_wake|rcu_report_qs_rnp|swake_up_one|rcu_gp\w*|invoke_rcu_core_kthread)$/.test(name)) {
        why = 'rcu';
        break;
      }
      if (/^(kick_pool|__queue_work|queue_work_on|wake_up_worker|insert_work|delayed_work_timer_fn)$/.test(name)) {
        why = 'kworker';
        break;
      }
      if (/^(wakeup_softirqd|raise_softirq\w*)$/.test(name)) {
        why = 'ksoftirqd';
        break;
      }
    }
    const cpu = x.task.cpu;
    const t = this.h.tasks;
    let cands: Task[];
    if (why === 'rcu') cands = t.byRole('rcu_preempt');
    else if (why === 'ksoftirqd') cands = t.byRole('ksoftirqd', cpu);
    else if (why === 'kworker') cands = t.byRole('kworker', cpu).filter((k) => !k.comm.endsWith('H'));
    else cands = [...t.byRole('kworker', cpu).filter((k) => !k.comm.endsWith('H')), ...t.byRole('rcu_preempt'), ...t.byRole('ksoftirqd', cpu)];
    const sleepers = cands.filter((c) => this.sleeping(c));
    if (!sleepers.length) return undefined;
    return this.placed(this.h.rng.pick(sleepers), x.task);
  }

  /** select_task_rq: an unbound task goes to an idle CPU if there is one, else the waker's. */
  private placed(task: Task, waker: Task): Task {
    if (task.kthread && this.h.tasks.role(task) === 'rcu_preempt') {
      const idle = this.h.cpus.find((c) => c.curr.isIdle && !c.runqueue.length);
      task.cpu = idle ? idle.id : waker.cpu;
    }
    return task;
  }

  /** The next task for a CPU: the first one woken there, else its idle task. */
  pickNext(cpu: Cpu): Task {
    return cpu.runqueue.shift() ?? cpu.idle;
  }

  /** What the switch itself changes. */
  private commit(cpu: Cpu, prev: Task, next: Task, state: PrevState): void {
    const now = Number(this.h.nowNs());
    prev.state = state === 'R+' ? 'R' : state;
    if (state === 'R+' || (state === 'R' && !prev.isIdle)) {
      if (!cpu.runqueue.includes(prev) && prev !== next) cpu.runqueue.push(prev);
    }
    const i = cpu.runqueue.indexOf(next);
    if (i >= 0) cpu.runqueue.splice(i, 1);
    cpu.curr = next;
    cpu.currSince = now;
    cpu.needResched = cpu.runqueue.length > 0 && next.isIdle;
    next.state = 'R';
    next.cpu = cpu.id;
    next.lastRanNs = now;
  }

  /** sched_switch as __schedule fires it: rq locked, interrupts off (after the outgoing task's runtime, when no tree does it). */
  private switchEvent(prev: Task, next: Task, state: PrevState): void {
    const tp = this.h.tracepoints;
    if (!this.h.deep() && !prev.isIdle && tp.enabled('sched_stat_runtime')) {
      const now = Number(this.h.nowNs());
      const delta = Math.max(1000, now - (prev.lastRanNs || now - 50_000));
      prev.sumExecNs += delta;
      prev.lastRanNs = now;
      prev.vruntime += BigInt(delta);
      prev.irqsOff += 1;
      prev.preemptCount += 1;
      tp.fire('sched_stat_runtime', this.h.context(prev), { comm: prev.comm, pid: prev.pid, runtime: BigInt(delta), vruntime: prev.vruntime });
      prev.irqsOff -= 1;
      prev.preemptCount -= 1;
    }
    if (!tp.enabled('sched_switch')) return;
    // __schedule clears the need-resched flag before it switches.
    const cpu = this.cpuOf(prev);
    const resched = cpu.needResched;
    cpu.needResched = false;
    const pc = prev.preemptCount;
    prev.irqsOff += 1;
    // __schedule: preemption off, the runqueue locked.
    prev.preemptCount = (pc & ~0xff) | 2;
    try {
      const fn = this.h.deep() ? this.h.runner.fn('__traceiter_sched_switch') : undefined;
      const fire = (): void =>
        tp.fire('sched_switch', this.h.context(prev), {
          prev_comm: prev.comm,
          prev_pid: prev.pid,
          prev_prio: prev.prio,
          prev_state: state === 'R+' ? TASK_REPORT_MAX : TASK_STATE_BITS[state],
          next_comm: next.comm,
          next_pid: next.pid,
          next_prio: next.prio,
        });
      if (fn) this.h.runner.call(fn, () => fire(), { task: prev, env: {}, flags: NO_FLAGS, holes: {} }, undefined);
      else fire();
    } finally {
      prev.irqsOff -= 1;
      prev.preemptCount = pc;
      cpu.needResched = resched;
    }
  }

  /**
   * The running task of `cpu` calls schedule() and gives the CPU to `next`
   * (by default the first runnable task, else idle). Synchronous: the
   * previous task's schedule() returns at once (it runs again later from a
   * fresh start), the next task resumes in finish_task_switch.
   */
  schedule(cpu: Cpu, state: PrevState, next: Task = cpu.runqueue[0] ?? cpu.idle, px?: Call, resume = true): void {
    if (next.exited) next = cpu.idle;
    const prev = cpu.curr;
    if (next === prev) return;
    if (!this.h.deep()) {
      this.switchEvent(prev, next, state);
      this.commit(cpu, prev, next, state);
      return;
    }
    const ctx: RunCtx = {
      task: prev,
      env: { prev: prev.addr, next: next.addr, 'struct rq': cpu.rq },
      flags: NO_FLAGS,
      holes: {
        $switch: (c) => {
          this.switchEvent(prev, next, state);
          this.commit(cpu, prev, next, state);
          c.stop = true;
        },
      },
    };
    const pc = prev.preemptCount;
    const irqs = prev.irqsOff;
    const r = this.h.runner.block(prev.isIdle ? 'schedule_idle' : 'schedule', ctx, px);
    void r;
    // The runqueue lock the block took is released by the next task (finish_task_switch): prev leaves as it came.
    prev.preemptCount = pc;
    prev.irqsOff = irqs;
    if (cpu.curr === prev) {
      // The block had no switch point: switch anyway.
      this.switchEvent(prev, next, state);
      this.commit(cpu, prev, next, state);
    }
    if (resume) this.resumeIn(next, cpu);
  }

  /**
   * The switch itself, from inside a schedule() path that is already running
   * (a recorded tree's switch point): sched_switch, then the next task
   * resumes.
   */
  switchNow(cpu: Cpu, state: PrevState, next: Task = cpu.runqueue[0] ?? cpu.idle): void {
    if (next.exited) next = cpu.idle;
    const prev = cpu.curr;
    if (next === prev) return;
    this.switchEvent(prev, next, state);
    this.commit(cpu, prev, next, state);
    this.resumeIn(next, cpu);
  }

  /** The next task's first steps after the switch. */
  private resumeIn(next: Task, cpu: Cpu): void {
    if (!this.h.deep()) return;
    const pc = next.preemptCount;
    const irqs = next.irqsOff;
    const r = this.h.runner.block('finish_task_switch', { task: next, env: { prev: 0n, 'struct rq': cpu.rq }, flags: NO_FLAGS, holes: {} });
    void r;
    next.preemptCount = pc;
    next.irqsOff = irqs;
  }

  /**
   * A task that must run now (a process making a system call, or one woken
   * from a sleep): woken if it sleeps, then switched in on its CPU, the
   * running task preempted (or idle leaving).
   */
  ensureRunning(task: Task): void {
    // A task that exited (switched out as a zombie) never runs again.
    if (task.exited) return;
    const cpu = this.cpuOf(task);
    if (cpu.curr === task) return;
    // Last seen running on another CPU: it went to sleep there (it runs here now).
    for (const other of this.h.cpus) {
      if (other !== cpu && other.curr === task) {
        task.cpu = other.id;
        this.schedule(other, 'S', other.runqueue.find((t) => t !== task) ?? other.idle);
        task.cpu = cpu.id;
      }
      const i = other !== cpu ? other.runqueue.indexOf(task) : -1;
      if (i >= 0) other.runqueue.splice(i, 1);
    }
    const waker = cpu.curr;
    if (this.sleeping(task)) this.wakeFrom(waker, task);
    this.schedule(cpu, waker.isIdle ? 'R' : 'R+', task);
  }

  /**
   * select_task_rq() for a task about to run: its CPU if it runs there or
   * that CPU is idle; else an idle CPU it may run on; else, while the task
   * running here has not had its first tick (CFS lets a task that merely
   * became runnable wait for it), another CPU whose task has. Busy processes
   * then share the CPUs a tick at a time, not a switch at every call.
   */
  selectCpu(task: Task, allowed: (cpu: number) => boolean): void {
    const here = this.cpuOf(task);
    if (here.curr === task || here.curr.isIdle) return;
    const others = this.h.cpus.filter((c) => c !== here && allowed(c.id));
    const idle = others.find((c) => c.curr.isIdle && !c.runqueue.length);
    if (idle) {
      this.migrate(task, idle.id);
      return;
    }
    const now = Number(this.h.nowNs());
    const inSlice = (c: Cpu): boolean => !c.curr.kthread && now - c.currSince < SLICE_NS;
    if (!inSlice(here)) return;
    const other = others.find((c) => !inSlice(c));
    if (other) this.migrate(task, other.id);
  }

  /** try_to_wake_up(task) run by `waker`. */
  wakeFrom(waker: Task, task: Task): void {
    if (!this.h.deep()) {
      this.wakeEvents(waker, task);
      return;
    }
    const ctx: RunCtx = { task: waker, env: { p: task.addr, 'struct task_struct': task.addr }, flags: NO_FLAGS, holes: {}, wakee: task };
    const kids = this.h.runner.deps.paths.get('try_to_wake_up') ?? [];
    const fn = this.h.runner.fn('try_to_wake_up');
    if (fn) void this.h.runner.call(fn, kids, ctx, undefined);
    else this.wake(task);
  }

  /** sched_waking and sched_wakeup as try_to_wake_up fires them, without the calls around (nobody sees those). */
  wakeEvents(waker: Task, task: Task): void {
    const tp = this.h.tracepoints;
    const fire = (name: 'sched_waking' | 'sched_wakeup', preempt: number): void => {
      if (!tp.enabled(name)) return;
      const pc = waker.preemptCount;
      waker.irqsOff += 1;
      waker.preemptCount = (pc & ~0xff) | preempt;
      tp.fire(name, this.h.context(waker), { comm: task.comm, pid: task.pid, prio: task.prio, target_cpu: task.cpu });
      waker.irqsOff -= 1;
      waker.preemptCount = pc;
    };
    if (!this.sleeping(task)) return;
    // p->pi_lock held for sched_waking; the runqueue's lock too for sched_wakeup (one level less from an interrupt).
    const inIrq = (waker.preemptCount & 0xf0000) !== 0;
    fire('sched_waking', inIrq ? 1 : 2);
    this.wake(task);
    fire('sched_wakeup', inIrq ? 2 : 4);
  }

  /**
   * A task in a system call goes to sleep until `until` settles: schedule()
   * is entered and stays open; when woken, the task is switched back in and
   * schedule() returns in its context.
   */
  sleep(task: Task, until: Promise<unknown>, px: Call | undefined, state: TaskState = 'S'): Promise<void> {
    const cpu = this.cpuOf(task);
    const back = (): Promise<void> =>
      until.then(
        () => this.wakeUp(task),
        () => this.wakeUp(task),
      );
    if (cpu.curr !== task) return back();
    const ctx: RunCtx = {
      task,
      env: { prev: task.addr, 'struct rq': cpu.rq },
      flags: NO_FLAGS,
      holes: {
        $switch: () => {
          const next = cpu.runqueue.find((t) => t !== task) ?? cpu.idle;
          this.switchEvent(task, next, state);
          this.commit(cpu, task, next, state);
          this.resumeIn(next, cpu);
          return back().then(() => 0n);
        },
      },
    };
    if (!this.h.deep()) {
      const next = cpu.runqueue.find((t) => t !== task) ?? cpu.idle;
      if (this.h.observed()) this.switchEvent(task, next, state);
      this.commit(cpu, task, next, state);
      return back();
    }
    const fn = this.h.runner.fn('schedule');
    const kids = this.h.runner.deps.paths.get('schedule') ?? [];
    const r = fn ? this.h.runner.call(fn, kids, ctx, px) : this.h.runner.run(kids, ctx, px);
    return Promise.resolve(r).then(() => undefined);
  }

  /** The sleeper's wakeup: woken by whatever runs on its CPU, then switched in. */
  private wakeUp(task: Task): void {
    if (task.exited) return;
    const cpu = this.cpuOf(task);
    this.wakeFrom(cpu.curr, task);
    if (cpu.curr !== task) this.schedule(cpu, cpu.curr.isIdle ? 'R' : 'R+', task, undefined, false);
  }
}
