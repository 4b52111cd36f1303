/**
 * The lives of processes as the kernel runs them: fork (kernel_clone in the
 * parent, with sched_process_fork and sched_wakeup_new; ret_from_fork in the
 * child), exec (the execve path with sched_process_exec and the new comm),
 * exit (do_exit with sched_process_exit, the final switch with prev_state Z,
 * the parent's wait with sched_process_wait, and sched_process_free from an
 * RCU callback).
 */
import { SOFTIRQ_DISABLE_OFFSET, SOFTIRQ_OFFSET } from './cpu.js';
import type { Kernel } from './kernel.js';
import type { FnHook, RunCtx } from './path_runner.js';
import { SYSCALL_NR } from './syscall_nr.js';
import { Task, type TaskState } from './task.js';

/** A user process (or thread) the kernel is told about. */
interface ProcessSpec {
  pid: number;
  tgid: number;
  comm: string;
  ppid: number;
  /** The CPU it last ran on (taken modulo the kernel's CPUs). */
  cpu: number;
  /** task->prio (default 120: nice 0). */
  prio?: number;
  state: TaskState;
}

const SIGCHLD = 17n;

/** Functions whose hooks the process paths swap in while they run (their effects are the processes' lives). */
/** The entry function of each call that forks, and the function between it and kernel_clone. */
const FORK_ENTRY: Record<number, readonly [string, string?]> = {
  [SYSCALL_NR.clone ?? 56]: ['__x64_sys_clone', '__do_sys_clone'],
  [SYSCALL_NR.fork ?? 57]: ['__x64_sys_fork'],
  [SYSCALL_NR.vfork ?? 58]: ['__x64_sys_vfork'],
  [SYSCALL_NR.clone3 ?? 435]: ['__x64_sys_clone3'],
};

export const PROCESS_HOOKED: readonly string[] = ['wake_up_new_task', 'kernel_clone', '__set_task_comm', 'bprm_execve', 'taskstats_exit'];
/** clone flags of a new thread (pthread_create), and of fork(). */
const CLONE_THREAD_FLAGS = 0x3d0f00n;

export class ProcessPaths {
  /** Process lives run so far (the daemon's `load`). */
  readonly counts = { forks: 0, execs: 0, exits: 0 };
  /** Tasks whose lives fire their events but run no call trees (see quiet()). */
  private readonly quietTasks = new WeakSet<Task>();
  /** Children that have not run yet, with the call that made them: their first run starts in ret_from_fork. */
  private readonly fresh = new WeakMap<Task, number>();
  /** Each parent's struct kernel_clone_args (a local of __do_sys_clone: reused from fork to fork). */
  private readonly cloneArgs = new WeakMap<Task, bigint>();

  constructor(private readonly k: Kernel) {}

  /**
   * Whether `task`'s forks, execs and exits run their call trees when
   * something observes them (default) or only fire their events: for the
   * machine's processes the emulator merely follows, whose lives would cost
   * it thousands of calls each under a tracer on every function.
   */
  quiet(task: Task, quiet = true): void {
    if (quiet) this.quietTasks.add(task);
    else this.quietTasks.delete(task);
  }

  /** Whether a life of `task` runs its call trees now. */
  private deep(task: Task): boolean {
    return !this.quietTasks.has(task) && this.k.deep();
  }

  private ctx(task: Task, env: RunCtx['env'], hooks?: Map<string, FnHook>): RunCtx {
    void hooks;
    return { task, env: { task: task.addr, 'struct rq': this.k.sched.cpuOf(task).rq, ...env }, flags: new Set(), holes: {} };
  }

  /** Runs a block with extra per-call hooks on top of the kernel's (and the running tasks' counts as they were). */
  private withHooks<T>(extra: Record<string, FnHook>, run: () => T): T {
    const counts = this.k.cpus.map((c) => [c.curr, c.curr.preemptCount, c.curr.irqsOff] as const);
    const hooks = this.k.runner.deps.hooks as Map<string, FnHook>;
    const saved = new Map<string, FnHook | undefined>();
    for (const [n, h] of Object.entries(extra)) {
      const base = hooks.get(n);
      saved.set(n, base);
      hooks.set(n, {
        enter: (x, c, kids) => {
          base?.enter?.(x, c, kids);
          h.enter?.(x, c, kids);
        },
        exit: (x, c) => h.exit?.(x, c) ?? base?.exit?.(x, c),
      });
    }
    try {
      return run();
    } finally {
      for (const [n, b] of saved) {
        if (b) hooks.set(n, b);
        else hooks.delete(n);
      }
      for (const [t, pc, irqs] of counts) {
        t.preemptCount = pc;
        t.irqsOff = irqs;
      }
    }
  }

  /**
   * Adds the task of a process the kernel is told about: one that existed
   * before it, or whose fork follows (fork(parent, child)). `shares`: the
   * task whose user space it shares (its thread group's), if any.
   */
  adopt(p: ProcessSpec, shares?: Task): Task {
    const t = new Task(p.pid, p.tgid, p.comm, p.ppid);
    t.cpu = p.cpu % this.k.nrCpus;
    if (p.prio !== undefined) t.prio = p.prio;
    t.state = p.state;
    this.k.tasks.add(t);
    this.k.attachMm(t, shares);
    return t;
  }

  /** `parent` forks `child` (a new process, or a thread when the tgids match) by system call `nr` (clone, clone3, fork, vfork). */
  fork(parent: Task, child: Task, nr = SYSCALL_NR.clone ?? 56): void {
    this.counts.forks++;
    const k = this.k;
    const thread = child.tgid === parent.tgid && child.pid !== child.tgid;
    child.state = 'R';
    this.fresh.set(child, nr);
    const fireFork = (): void => {
      k.tracepoints.fire('sched_process_fork', k.context(parent), { parent_comm: parent.comm, parent_pid: parent.pid, child_comm: child.comm, child_pid: child.pid });
    };
    const fireWakeupNew = (): void => {
      k.sched.wake(child);
      parent.irqsOff += 1;
      parent.preemptCount += 2;
      k.tracepoints.fire('sched_wakeup_new', k.context(parent), { comm: child.comm, pid: child.pid, prio: child.prio, target_cpu: child.cpu });
      parent.irqsOff -= 1;
      parent.preemptCount -= 2;
    };
    if (!k.observed()) {
      k.sched.wake(child);
      return;
    }
    k.sched.ensureRunning(parent);
    const flags = thread ? CLONE_THREAD_FLAGS : SIGCHLD;
    let args = this.cloneArgs.get(parent);
    if (args === undefined) {
      args = k.kmem.kmalloc(k.structs.sizeOf('kernel_clone_args', 136));
      this.cloneArgs.set(parent, args);
    }
    k.structs.set(args, 'kernel_clone_args', 'flags', flags);
    k.structs.set(args, 'kernel_clone_args', 'exit_signal', thread ? 0 : 17);
    const regs = k.userRegs(parent, [flags, 0n, 0n, 0n, 0n]);
    k.tracepoints.fire('sys_enter', k.context(parent), { id: nr, args: [flags, 0n, 0n, 0n, 0n, 0n] });
    let forked = false;
    let woken = false;
    // The fork runs in the parent; it is the business of either side's life.
    if (!this.deep(parent) && !this.deep(child)) {
      fireFork();
      fireWakeupNew();
      k.tracepoints.fire('sys_exit', k.context(parent), { id: nr, ret: BigInt(child.pid) });
      return;
    }
    const ctx = this.ctx(parent, { args: args, 'struct kernel_clone_args': args, p: child.addr, 'struct task_struct': child.addr, regs, 'struct pt_regs': regs });
    const run = k.runner;
    this.withHooks(
      {
        wake_up_new_task: {
          enter: () => {
            if (!forked) fireFork();
            forked = true;
          },
          exit: () => {
            if (!woken) fireWakeupNew();
            woken = true;
          },
        },
        kernel_clone: { exit: () => BigInt(child.pid) },
      },
      () => {
        const kc = run.fn('kernel_clone');
        const body = run.deps.paths.get('kernel_clone') ?? [];
        const [entryName, doName] = FORK_ENTRY[nr] ?? FORK_ENTRY[SYSCALL_NR.clone ?? 56]!;
        const sysClone = run.fn(entryName);
        const doClone = doName ? run.fn(doName) : undefined;
        const inner = (px: Parameters<typeof run.call>[3]) => (kc ? run.call(kc, body, ctx, px) : run.run(body, ctx, px));
        const mid = (px: Parameters<typeof run.call>[3]) => (doClone ? run.call(doClone, (x) => inner(x) as never, ctx, px) : inner(px));
        const pid = BigInt(child.pid);
        if (sysClone) void run.call(sysClone, (x) => (mid(x), pid) as never, ctx, undefined);
        else void mid(undefined);
      },
    );
    if (!forked) fireFork();
    if (!woken) fireWakeupNew();
    k.tracepoints.fire('sys_exit', k.context(parent), { id: nr, ret: BigInt(child.pid) });
  }

  /** A forked child runs for the first time: ret_from_fork, and its clone() returns 0. */
  firstRun(child: Task): void {
    const nr = this.fresh.get(child);
    if (nr === undefined) return;
    this.fresh.delete(child);
    const k = this.k;
    if (!k.observed()) return;
    if (this.deep(child)) void k.runner.block('ret_from_fork', this.ctx(child, {}));
    k.tracepoints.fire('sys_exit', k.context(child), { id: nr, ret: 0n });
  }

  /** `task` execs `filename`; its comm becomes `comm`. */
  exec(task: Task, filename: string, comm: string): void {
    this.counts.execs++;
    const k = this.k;
    const oldComm = task.comm;
    task.exe = filename;
    const fire = (): void => {
      task.comm = comm;
      k.tracepoints.fire('sched_process_exec', k.context(task), { filename, pid: task.pid, old_pid: task.pid });
    };
    if (!k.observed()) {
      task.comm = comm;
      return;
    }
    k.sched.ensureRunning(task);
    this.firstRun(task);
    const user = k.userMm(task);
    const ufile = user.stackString(filename);
    const nr = SYSCALL_NR.execve ?? 59;
    k.tracepoints.fire('sys_enter', k.context(task), {
      id: nr,
      args: [ufile, user.stackBuffer(16), user.stackBuffer(16), 0n, 0n, 0n],
      user: (i: number, max: number) => (i === 0 ? task.mm?.read(ufile, Math.min(max, filename.length + 1)) : undefined),
    });
    if (!this.deep(task)) {
      fire();
      k.tracepoints.fire('sys_exit', k.context(task), { id: nr, ret: 0n });
      return;
    }
    let fired = false;
    const bprm = k.kmem.kmalloc(k.structs.sizeOf('linux_binprm', 512));
    const ctx = this.ctx(task, { filename: ufile, 'struct linux_binprm': bprm, bprm, 'struct filename': k.kmem.kstr(filename) });
    this.withHooks(
      {
        __set_task_comm: { enter: () => void (task.comm = comm) },
        bprm_execve: {
          exit: () => {
            if (!fired) fire();
            fired = true;
          },
        },
      },
      () => void k.runner.block('sys_execve', ctx),
    );
    if (!fired) fire();
    void oldComm;
    k.kmem.free(bprm);
    k.tracepoints.fire('sys_exit', k.context(task), { id: nr, ret: 0n });
  }

  /** `task` exits (exit_group): do_exit, then its last switch (prev_state Z). */
  exit(task: Task, code = 0): void {
    const k = this.k;
    if (task.exited) return;
    this.counts.exits++;
    const fire = (): void => k.tracepoints.fire('sched_process_exit', k.context(task), { comm: task.comm, pid: task.pid, prio: task.prio, group_dead: task.pid === task.tgid });
    if (!k.observed()) {
      this.dead(task);
      return;
    }
    k.sched.ensureRunning(task);
    this.firstRun(task);
    const nr = SYSCALL_NR.exit_group ?? 231;
    k.tracepoints.fire('sys_enter', k.context(task), { id: nr, args: [BigInt(code), 0n, 0n, 0n, 0n, 0n] });
    let fired = false;
    const hook: FnHook = {
      exit: () => {
        if (!fired) fire();
        fired = true;
      },
    };
    if (this.deep(task)) this.withHooks({ taskstats_exit: hook }, () => void k.runner.block('sys_exit_group', this.ctx(task, { code: BigInt(code) })));
    if (!fired) fire();
    const cpu = k.sched.cpuOf(task);
    if (cpu.curr === task) k.sched.schedule(cpu, 'Z');
    this.dead(task);
  }

  private dead(task: Task): void {
    task.exited = true;
    task.state = 'Z';
    for (const c of this.k.cpus) {
      const i = c.runqueue.indexOf(task);
      if (i >= 0) c.runqueue.splice(i, 1);
      if (c.curr === task) c.curr = c.idle;
    }
  }

  /** The parent reaps `child` (wait4), and RCU frees it later (sched_process_free). */
  reap(parent: Task | undefined, child: Task): void {
    const k = this.k;
    if (k.observed() && parent && !parent.exited && !parent.kthread) {
      k.sched.ensureRunning(parent);
      const nr = SYSCALL_NR.wait4 ?? 61;
      k.tracepoints.fire('sys_enter', k.context(parent), { id: nr, args: [BigInt.asUintN(64, -1n), 0n, 0n, 0n, 0n, 0n] });
      k.tracepoints.fire('sched_process_wait', k.context(parent), { comm: parent.comm, pid: 0, prio: parent.prio });
      if (this.deep(parent)) void k.runner.block('sys_wait4', this.ctx(parent, { p: child.addr, 'struct task_struct': child.addr }));
      k.tracepoints.fire('sys_exit', k.context(parent), { id: nr, ret: BigInt(child.pid) });
    }
    this.free(child);
  }

  /** delayed_put_task_struct, from an RCU callback in softirq context on the child's CPU. */
  free(child: Task): void {
    const k = this.k;
    const cpu = k.sched.cpuOf(child);
    const host = cpu.curr;
    if (k.observed()) {
      host.preemptCount += SOFTIRQ_OFFSET + SOFTIRQ_DISABLE_OFFSET;
      try {
        const fire = (): void => k.tracepoints.fire('sched_process_free', k.context(host), { comm: child.comm, pid: child.pid, prio: child.prio });
        const fn = this.deep(child) ? k.runner.fn('delayed_put_task_struct') : undefined;
        const ctx = this.ctx(host, { p: child.addr, 'struct task_struct': child.addr, rhp: child.addr });
        if (fn) void k.runner.call(fn, () => fire(), ctx, undefined);
        else fire();
      } finally {
        host.preemptCount -= SOFTIRQ_OFFSET + SOFTIRQ_DISABLE_OFFSET;
      }
      k.activity?.startGracePeriod(host);
    }
    if (k.tasks.process(child.pid) === child) k.tasks.delete(child.pid);
  }
}
