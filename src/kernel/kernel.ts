/**
 * The emulated kernel: time, CPUs, tasks, memory, the call executor, and the
 * call paths that operations on the mount and the kernel's own background
 * work run. It knows nothing of the filesystem that drives it.
 */
import { Activity, type ActivityOptions } from './activity.js';
import { type Btf, BtfError } from './btf.js';
import { loadCallPaths, type CallPaths } from './call_paths.js';
import type { CallSites } from './call_sites.js';
import { Clock } from './clock.js';
import type { ExecContext } from './context.js';
import { Cpu, execContext } from './cpu.js';
import type { FuncProto } from './ctypes.js';
import { Executor } from './executor.js';
import { makeFnHooks, type HookHost } from './fn_hooks.js';
import { FunctionSampler } from './function_sampler.js';
import type { InsnModel } from './insn_model.js';
import { loadCallSites, loadInsnModel, loadKprobeBlacklist, loadModuleTypes, loadSymbols, loadTypes, type SymbolSource } from './kernel_symbols.js';
import { KernelMemory, THREAD_SIZE } from './kmem.js';
import type { KprobeBlacklist } from './kprobe_blacklist.js';
import type { KernelFeature } from './features.js';
import { KStructs } from './kstruct.js';
import { Modules } from './module.js';
import type { AddressSpace } from './memory.js';
import { PathRunner, type FnHook, type RunCtx } from './path_runner.js';
import { PreemptIrq } from './preempt_irq.js';
import { PROCESS_HOOKED, ProcessPaths } from './process_paths.js';
import type { KernelProfile } from './profiles/profile.js';
import { PT_REGS } from './regs.js';
import { Rng } from './rng.js';
import { Scheduler } from './sched.js';
import { DEFAULT_SERIES, profileOf, type Series } from './series.js';
import type { KallsymsTable } from './symbol_table.js';
import type { KernelFunction } from './symbols.js';
import type { Syscall, SyscallNode } from './syscall.js';
import { SyscallEntry } from './syscall_entry.js';
import { SyscallPaths } from './syscall_paths.js';
import { TASK_STATE_BITS, type Task } from './task.js';
import { TaskTable } from './tasks.js';
import { TracepointRegistry } from './tracepoint.js';
import { UserMm } from './user_mm.js';
import { TracefsVfs } from './vfs.js';

export type { FopNames, Syscall, SyscallName, SyscallNode } from './syscall.js';

/** Fork and exit notifiers (what kernel_clone and do_exit tell their hooks). */
interface TaskLifecycle {
  readonly forked: Set<(child: Task, parent: Task | undefined) => void>;
  readonly exited: Set<(task: Task) => void>;
}

export interface KernelOptions {
  /** Kernel series to behave as (default 7.2). */
  series?: Series;
  /** Number of CPUs (default 1; createEmulator and the CLI default to the machine's). */
  cpus?: number;
  /** Seed for everything random in the background activity. */
  seed?: number;
  /** Symbols and BTF: the built-in model of the series (default), or a provider's (the machine's running kernel: src/host/symbols.ts). */
  symbols?: SymbolSource;
  /** Kconfig options Debian leaves off, turned on here (default: none, Debian's config). */
  features?: readonly KernelFeature[];
  /**
   * Background kernel work (scheduler ticks, wakeups, RCU, timers, ...): a
   * rate multiplier (1 = an idle machine), or false/0 for none — the
   * library default; the daemon turns it on.
   */
  activity?: number | false | ActivityOptions;
  /**
   * Run the kernel paths of system calls on the mount (sys_enter/sys_exit,
   * do_syscall_64 → ... → the file's f_op, context switches to the caller).
   * Off by default in the library (unit tests see only what they fire); the
   * daemon turns it on.
   */
  callPaths?: boolean;
  /** A clock that moves only when told (tests). */
  virtualClock?: boolean;
}

/** A function's call sites: its direct calls' return offsets by callee id, its indirect ones, and which indirect one each indirect callee got. */
interface CallSitesOf {
  readonly real: Map<number, number>;
  readonly indirect: readonly number[];
  readonly assigned: Map<number, number>;
}

/** Who can see the calls on a file run (Kernel.readsVisibility). */
export type ReadsVisibility = 'unseen' | 'scheduler' | 'seen';

/** Tracepoints the kernel fires itself, outside any call tree (the scheduler, process lives, system call entry and exit). */
const EXPLICIT = ['sched_switch', 'sched_wakeup', 'sched_waking', 'sched_wakeup_new', 'sched_process_fork', 'sched_process_exec', 'sched_process_exit', 'sched_process_free', 'sched_process_wait', 'sched_stat_runtime', 'sys_enter', 'sys_exit'];
/** Of those, the scheduler's: a task that runs for a system call may fire them. */
const SCHEDULING = ['sched_switch', 'sched_wakeup', 'sched_waking', 'sched_wakeup_new', 'sched_stat_runtime'];

/** Tracepoints fired by functions inside the call trees: enabling one makes the trees run. */
const IN_TREES = [
  'irq_disable', 'irq_enable', 'preempt_disable', 'preempt_enable',
  'timer_start', 'timer_expire_entry', 'timer_expire_exit', 'timer_cancel', 'hrtimer_start', 'hrtimer_expire_entry', 'hrtimer_expire_exit', 'hrtimer_cancel',
  'kmalloc', 'kfree', 'kmem_cache_alloc', 'kmem_cache_free', 'softirq_entry', 'softirq_exit', 'softirq_raise', 'rcu_utilization', 'workqueue_queue_work',
  'workqueue_activate_work', 'workqueue_execute_start', 'workqueue_execute_end', 'local_timer_entry', 'local_timer_exit',
];

export class Kernel implements HookHost {
  readonly series: Series;
  /** What the series does where series differ: ask it, not the series' name. */
  readonly profile: KernelProfile;
  readonly nrCpus: number;
  readonly clock: Clock;
  readonly tasks: TaskTable;
  readonly seed: number;
  readonly symbolSource: SymbolSource;
  /** Optional features built in (see features.ts). */
  readonly features: ReadonlySet<KernelFeature>;
  /** Static tracepoints kernel code fires (sched_switch, sys_enter, ...); the trace layer attaches probes. */
  readonly tracepoints = new TracepointRegistry();
  readonly kmem = new KernelMemory();
  readonly cpus: Cpu[];
  readonly sched: Scheduler;
  /** Lives of processes: fork, exec, exit (driven by whoever knows of them: the host driver, tests). */
  readonly procs: ProcessPaths;
  readonly rng: Rng;
  /** Who wants to know when tasks come and go (ftrace: shadow stacks, function-fork). */
  readonly taskLifecycle: TaskLifecycle = { forked: new Set(), exited: new Set() };
  /** Loadable modules: the sample modules its symbol data holds, loaded and unloaded at run time. */
  readonly modules: Modules;
  /** Interrupt- and preemption-disabled sections, and who watches their edges (the latency tracers, the preemptirq events). */
  readonly preemptIrq = new PreemptIrq((name, task, ip, parentIp) => {
    if (!this.tracepoints.enabled(name)) return;
    // The record keeps both addresses as offsets from _stext (32 bits, as TP_fast_assign stores them).
    const stext = (this.stext ??= this.symbolAddr('_stext') ?? 0n);
    const offs = (a: bigint): number => Number(BigInt.asIntN(32, a - stext));
    this.tracepoints.fire(name, this.context(task), { caller_offs: offs(ip), parent_offs: offs(parentIp) });
  });
  private stext?: bigint;
  /** trace_printk(): where its text goes (the tracing layer takes it over, as ftrace takes __fentry__). */
  tracePrintk?: (task: Task, ip: bigint, text: string) => void;
  /** Whether system calls on the mount run their kernel paths. */
  callPaths: boolean;
  /** Where the mount is, as processes name the paths they pass (their filename arguments). */
  mountPoint = '/sys/kernel/tracing';
  private symtab?: KallsymsTable;
  private btf?: Btf | null;
  private insnModel?: InsnModel;
  private blacklist?: KprobeBlacklist;
  private calls?: CallSites;
  private exec_?: Executor;
  private structs_?: KStructs;
  private vfs_?: TracefsVfs;
  private runner_?: PathRunner;
  private hooks_?: Map<string, FnHook>;
  private activity_?: Activity;
  private readonly activityOpts?: ActivityOptions;
  private readonly syscalls = new SyscallPaths(this);
  /** What every system call does around its own work (sys_enter/sys_exit, the entry path). */
  readonly entry = new SyscallEntry(this);
  private tpEnabled = { generation: -1, inTrees: false, explicit: false, scheduling: false, syscalls: false };
  /** treesSeen's answers, for one generation of hooks and probes. */
  private seenTrees = { gen: '', by: new Map<string, boolean>() };
  private readonly siteCache = new Map<number, CallSitesOf>();
  private readonly mms = new Map<number, UserMm>();
  /** Where alloc_percpu() takes its next bytes. */
  private percpuNext?: bigint;

  constructor(opts: KernelOptions = {}) {
    this.series = opts.series ?? DEFAULT_SERIES;
    this.profile = profileOf(this.series);
    this.modules = new Modules(this, this.profile.sampleModules);
    this.symbolSource = opts.symbols ?? 'builtin';
    this.nrCpus = Math.max(1, opts.cpus ?? 1);
    this.seed = opts.seed ?? 1;
    this.features = new Set(opts.features ?? []);
    this.clock = new Clock({ virtual: opts.virtualClock });
    this.rng = new Rng(this.seed, 'kernel');
    this.callPaths = opts.callPaths ?? false;
    this.tasks = new TaskTable(this.nrCpus);
    this.cpus = this.tasks.idle.map((t, i) => new Cpu(i, t));
    this.sched = new Scheduler(this);
    this.procs = new ProcessPaths(this);
    const a = opts.activity;
    const rate = typeof a === 'number' ? a : a === false || a === undefined ? 0 : (a.rate ?? 1);
    if (rate > 0) this.activityOpts = { rate };
    if (rate > 0) this.start();
  }

  // --- what the kernel is made of (loaded on first use, shared by every kernel of the process)

  /** kallsyms and the ftrace function list. */
  get symbols(): KallsymsTable {
    return (this.symtab ??= loadSymbols(this.symbolSource, this.series).view());
  }

  /** Prototypes and struct layouts (vmlinux BTF). */
  get types(): Btf {
    return (this.btf ??= loadTypes(this.symbolSource, this.series));
  }

  /** A loaded module's BTF (split on vmlinux's), if it has one. */
  moduleTypes(module: string): Btf | undefined {
    return loadModuleTypes(this.symbolSource, this.series, module);
  }

  /** Where instructions start inside functions: kprobes at func+offs off a boundary get EILSEQ. */
  get insns(): InsnModel {
    return (this.insnModel ??= loadInsnModel(this.symbolSource, this.series));
  }

  /** /sys/kernel/debug/kprobes/blacklist: no kprobe inside these (EINVAL). */
  get kprobeBlacklist(): KprobeBlacklist {
    return (this.blacklist ??= loadKprobeBlacklist(this.symbolSource, this.series));
  }

  /** Return offsets of calls (`ksys_read+0x7b` after calling vfs_read). */
  get callSites(): CallSites {
    return (this.calls ??= loadCallSites(this.symbolSource, this.series, this.symbols, this.insns));
  }

  /** The kernel address space (objects, stacks, strings). */
  get kernelMemory(): AddressSpace {
    return this.kmem.space;
  }

  /** Struct layouts applied to kernel memory. */
  get structs(): KStructs {
    if (!this.structs_) {
      let types: Btf | undefined;
      try {
        types = this.types;
      } catch (e) {
        if (!(e instanceof BtfError)) throw e;
        types = undefined;
      }
      this.structs_ = new KStructs(types, this.kmem.space);
    }
    return this.structs_;
  }

  /** The call executor, with every task laid out in memory (made on first use). */
  get exec(): Executor {
    if (!this.exec_) {
      const syms = this.symbols;
      const ex = new Executor({ resolve: (n) => this.resolve(n), nrFunctions: syms.functions.length, kernelMemory: this.kmem.space });
      ex.callSite = (caller, callee) => this.siteOffset(caller, callee);
      const entry = syms.byName('entry_SYSCALL_64_after_hwframe')[0];
      const doSys = syms.byName('do_syscall_64')[0];
      if (entry && doSys) ex.entryReturn = entry.addr + BigInt(this.callSites.returnOffset(entry, doSys));
      this.exec_ = ex;
      this.tasks.onAdd = (t) => {
        this.layoutTask(t);
        for (const f of this.taskLifecycle.forked) f(t, t.ppid ? this.tasks.get(t.ppid) : undefined);
      };
      this.tasks.onDelete = (t) => {
        for (const f of this.taskLifecycle.exited) f(t);
        this.freeTask(t);
      };
      for (const c of this.cpus) c.rq = this.percpu('runqueues', c.id);
      for (const t of [...this.tasks.idle, ...this.tasks.kthreads, ...this.tasks.all()]) this.layoutTask(t);
    }
    return this.exec_;
  }

  /** Whether the VFS objects exist yet (nothing to forget before they do). */
  get vfsReady(): boolean {
    return this.vfs_ !== undefined;
  }

  /** The tracefs mount's VFS objects. */
  get vfs(): TracefsVfs {
    return (this.vfs_ ??= new TracefsVfs(this.kmem, this.structs, (n) => this.symbolAddr(n)));
  }

  /** Call trees of the series. */
  get paths(): CallPaths {
    return loadCallPaths(this.series);
  }

  /** Runs call trees on the executor. */
  get runner(): PathRunner {
    if (!this.runner_) {
      const exec = this.exec;
      this.hooks_ = makeFnHooks(this);
      this.runner_ = new PathRunner({
        exec,
        paths: this.paths,
        resolve: (n) => this.resolve(n),
        proto: (n) => this.proto(n),
        hooks: this.hooks_,
        lockAddr: (fn) => 0xffff888000100000n + BigInt((fn.id * 2654435761) % 4096) * 64n,
        poll: (task, px) => this.activity_?.maybeTick(task, px),
        isTail: (p, c) => this.isTail(p, c),
        tracepointSeen: (n) => this.tracepoints.seen(n),
        tracepointGeneration: () => this.tracepoints.generation,
      });
      this.runner_.subtrees.pin(PROCESS_HOOKED);
    }
    return this.runner_;
  }

  /** The background activity (undefined when off). */
  get activity(): Activity | undefined {
    if (!this.activity_ && this.activityOpts) {
      this.activity_ = new Activity(this, this.activityOpts, this.rng.fork('activity'), new FunctionSampler(this.symbols, this.callSites, this.rng.fork('sampler')));
    }
    return this.activity_;
  }

  // --- running

  /** Starts the kernel's own life: its background activity. */
  start(): void {
    this.activity?.start();
  }

  stop(): void {
    this.activity_?.stop();
  }

  /**
   * Whether call trees must run now: a hooked function (ftrace, kprobes) or
   * an enabled tracepoint that functions inside the trees fire. Otherwise the
   * kernel does only what can be seen: the scheduler's and processes' events.
   */
  deep(): boolean {
    if (this.exec_?.observed) return true;
    return this.enabledTracepoints().inTrees;
  }

  /** Whether anything can observe the kernel now (else only its state moves). */
  observed(): boolean {
    if (this.deep()) return true;
    return this.enabledTracepoints().explicit;
  }

  /** Whether sys_enter or sys_exit has a probe that is not quiet (raw_syscalls, syscalls/*, a hist or eprobe on them): every system call is seen. */
  syscallEventsOn(): boolean {
    return this.enabledTracepoints().syscalls;
  }

  /** Whether the scheduler's events have a probe: a task seen running for a system call shows. */
  schedulingObserved(): boolean {
    return this.enabledTracepoints().scheduling;
  }

  /**
   * Whether anyone could see the call trees `what` names run now: a hooked
   * (or counted) function, or a probed tracepoint, among its blocks' nodes
   * or its functions. A probe elsewhere cannot. Kept by `key` until hooks or
   * probes change.
   */
  treesSeen(key: string, what: () => { blocks: Iterable<string>; fns: Iterable<string> }): boolean {
    if (!this.deep()) return false;
    if (!this.callPaths) return true;
    const gen = `${this.exec.generation} ${this.tracepoints.generation}`;
    if (this.seenTrees.gen !== gen) this.seenTrees = { gen, by: new Map() };
    let seen = this.seenTrees.by.get(key);
    if (seen === undefined) {
      const { blocks, fns } = what();
      const run = this.runner;
      seen = false;
      for (const n of fns) {
        const fn = run.fn(n);
        if (fn && this.exec.seen(fn.id)) seen = true;
      }
      for (const b of blocks) if (!seen && this.paths.get(b)?.some((n) => run.subtrees.reach(n) !== 'unseen')) seen = true;
      this.seenTrees.by.set(key, seen);
    }
    return seen;
  }

  /**
   * Who can see a read-only open of these files, their reads, fstat and
   * release run: 'seen' — the system-call events, or something in those
   * calls' trees or the files' own operations; 'scheduler' — only the
   * scheduler's events (a caller already running on its CPU switches
   * nothing); 'unseen' — nobody, so they may be answered without running
   * here (the native file cache).
   */
  readsVisibility(files: Iterable<{ readonly path: string; readonly node?: SyscallNode }>): ReadsVisibility {
    return this.callsVisibility(() => {
      for (const f of files) if (this.syscalls.readsSeen(f.path, f.node)) return true;
      return false;
    });
  }

  /** Hooks or probes may have turned quiet or loud without coming or going: what is known of who sees what is stale. */
  quietnessChanged(): void {
    this.exec.hooksChanged();
    this.tracepoints.probesChanged();
  }

  /** Moves whenever a hook comes or goes (with tracepoints.generation: what decides who can see a call tree). */
  get hookGeneration(): number {
    return this.exec_?.generation ?? 0;
  }

  /** Whether anyone could see a directory of the tracefs read (getdents64); if not, the kernel may keep its listing (FOPEN_CACHE_DIR). */
  readdirsObserved(): boolean {
    return this.callsVisibility(() => this.syscalls.dirReadsSeen()) !== 'unseen';
  }

  /** Who can see system calls whose trees `treesSeen` checks: their events or their trees ('seen'), else the scheduler's events. */
  private callsVisibility(treesSeen: () => boolean): ReadsVisibility {
    if (this.syscallEventsOn() || (this.callPaths ? treesSeen() : this.deep())) return 'seen';
    return this.schedulingObserved() ? 'scheduler' : 'unseen';
  }

  /** Which of IN_TREES / EXPLICIT / SCHEDULING have a probe that is not quiet, recomputed only when probes come or go or turn quiet or loud. */
  private enabledTracepoints(): { generation: number; inTrees: boolean; explicit: boolean; scheduling: boolean; syscalls: boolean } {
    const tps = this.tracepoints;
    const c = this.tpEnabled;
    if (c.generation === tps.generation) return c;
    return (this.tpEnabled = {
      generation: tps.generation,
      inTrees: IN_TREES.some((n) => tps.seen(n)),
      explicit: EXPLICIT.some((n) => tps.seen(n)),
      scheduling: SCHEDULING.some((n) => tps.seen(n)),
      syscalls: tps.seen('sys_enter') || tps.seen('sys_exit'),
    });
  }

  /** The context an event recorded now in `task` carries (task, CPU, common_flags, preempt count). */
  context(task: Task): ExecContext {
    return execContext(task, this.cpus[task.cpu % this.nrCpus]);
  }

  /** num_online_cpus(). */
  numOnlineCpus(): number {
    let n = 0;
    for (const c of this.cpus) if (c.online) n++;
    return n;
  }

  /** The task running on a CPU. */
  current(cpu: number): Task {
    return this.cpus[cpu % this.nrCpus]!.curr;
  }

  /**
   * Runs `body` as the kernel side of `call` made by `task`: the real
   * kernel's path for that system call around it. The body may return a
   * promise (a read that sleeps); the call returns when it does.
   */
  syscall<T>(task: Task, call: Syscall, body: (task: Task) => T): T {
    return this.syscalls.run(task, call, body);
  }

  /** Whether a task is inside a system call on the mount now (sleeping in one: it makes no other). */
  syscallBusy(task: Task): boolean {
    return this.syscalls.isBusy(task);
  }

  /**
   * Calls a kernel function in `task`, from the frame it is in: for other
   * layers whose work the kernel does (an event directory made calls
   * eventfs_create_dir with the event's name: `kernel.call(task,
   * 'eventfs_create_dir', [kernel.kmem.kstr('test')])`). `work` runs inside
   * the function (its body); without it, the function's recorded tree (if
   * any) does. When nothing observes calls, only `work` runs.
   */
  call<T = void>(task: Task, name: string, args: readonly (bigint | number)[] = [], work?: () => T): T | undefined {
    const fn = this.resolve(name);
    if (!fn || !this.deep()) return work?.();
    let out: T | undefined;
    const ctx: RunCtx = { task, env: {}, flags: new Set(), holes: {} };
    const kids = this.paths.get(`fop:${name}`)?.filter((n) => !n.name.startsWith('$')) ?? [];
    void this.exec.call(task, fn, args, (x) => {
      if (work) out = work();
      else void this.runner.run(kids, ctx, x);
      return typeof out === 'bigint' || typeof out === 'number' ? out : 0n;
    });
    return out;
  }

  // --- HookHost

  nowNs(): bigint {
    return this.clock.nowNs();
  }

  jiffies(): bigint {
    return this.clock.jiffies();
  }

  symbolAddr(name: string): bigint | undefined {
    return this.symbols.lookupName(name)?.addr;
  }

  sizeOf(struct: string, fallback: number): number {
    return this.structs.sizeOf(struct, fallback);
  }

  wakeeFor(x: Parameters<HookHost['wakeeFor']>[0], ctx: RunCtx): Task | undefined {
    return this.sched.wakeeFor(x, ctx);
  }

  wake(task: Task): void {
    this.sched.wake(task);
  }

  // --- memory of tasks and processes

  /** The user address space of a task's process (made on first use, shared by its threads). */
  userMm(task: Task): UserMm {
    if (task.user) return task.user;
    let mm = this.mms.get(task.tgid);
    if (!mm) {
      mm = new UserMm(task.tgid, this.seed);
      this.mms.set(task.tgid, mm);
    }
    task.user = mm;
    task.mm = mm.space;
    return mm;
  }

  /** A new process's user space, or a thread's share of its leader's. */
  attachMm(task: Task, leader?: Task): void {
    if (task.kthread) return;
    if (leader?.user && leader.tgid === task.tgid) {
      task.user = leader.user;
      task.mm = leader.mm;
      return;
    }
    this.mms.delete(task.tgid);
    this.userMm(task);
  }

  /** The user registers saved at the top of the task's kernel stack (struct pt_regs): the system call's arguments. */
  userRegs(task: Task, args: readonly bigint[]): bigint {
    if (!this.exec_) void this.exec;
    const size = PT_REGS.length * 8;
    const at = task.stackBase + BigInt(THREAD_SIZE) - BigInt(size);
    const user = this.userMm(task);
    const vals: Record<string, bigint> = { di: args[0] ?? 0n, si: args[1] ?? 0n, dx: args[2] ?? 0n, r10: args[3] ?? 0n, r8: args[4] ?? 0n, r9: args[5] ?? 0n, sp: user.stackTop - 0x1000n, ip: 0x7f0000001000n, cs: 0x33n, ss: 0x2bn, flags: 0x246n };
    PT_REGS.forEach((r, i) => this.kmem.space.writeU64(at + BigInt(i * 8), vals[r] ?? 0n));
    return at;
  }

  /** A per-CPU variable's address for `cpu` (its symbol plus a per-CPU offset). */
  private percpu(name: string, cpu: number): bigint {
    return this.perCpuPtr(this.symbolAddr(name) ?? 0x3a000n, cpu);
  }

  /** alloc_percpu(): `size` zeroed bytes on every CPU, in the dynamic area after the static one; the __percpu pointer. */
  allocPercpu(size: number): bigint {
    const ptr = (this.percpuNext ??= this.symbolAddr('__per_cpu_end') ?? 0x3b000n);
    this.percpuNext = ptr + BigInt((size + 7) & ~7);
    for (const c of this.cpus) {
      this.kmem.space.map(this.perCpuPtr(ptr, c.id), size);
      this.kmem.space.zero(this.perCpuPtr(ptr, c.id), size);
    }
    return ptr;
  }

  /** per_cpu_ptr(): where the per-CPU pointer `ptr` lives on `cpu` (each CPU's area is a 256 KiB window of the direct map). */
  perCpuPtr(ptr: bigint, cpu: number): bigint {
    return 0xffff88803ec00000n + BigInt(cpu) * 0x40000n + (ptr & 0x3ffffn);
  }

  private layoutTask(t: Task): void {
    if (t.addr) return;
    const st = this.structs;
    const size = st.sizeOf('task_struct', 9000);
    const initTask = t.pid === 0 && t.cpu === 0 ? this.symbolAddr('init_task') : undefined;
    if (initTask) {
      this.kmem.space.map(initTask, size);
      t.addr = initTask;
    } else t.addr = this.kmem.cacheAlloc('task_struct', size);
    t.stackBase = this.kmem.allocStack();
    t.sp = t.stackBase + BigInt(THREAD_SIZE) - BigInt(PT_REGS.length * 8) - 8n;
    const a = t.addr;
    st.set(a, 'task_struct', 'pid', t.pid);
    st.set(a, 'task_struct', 'tgid', t.tgid);
    st.set(a, 'task_struct', 'comm', t.comm);
    st.set(a, 'task_struct', 'prio', t.prio);
    st.set(a, 'task_struct', 'static_prio', t.prio);
    st.set(a, 'task_struct', 'normal_prio', t.prio);
    st.set(a, 'task_struct', '__state', TASK_STATE_BITS[t.state] & 0x7f);
    st.set(a, 'task_struct', 'flags', t.isIdle ? 0x2 : t.kthread ? 0x00208040 : 0x00400100);
    st.set(a, 'task_struct', 'stack', t.stackBase);
    st.set(a, 'task_struct', 'thread_info.cpu', t.cpu);
    st.set(a, 'task_struct', 'wake_cpu', t.cpu);
    st.set(a, 'task_struct', 'exit_signal', t.kthread ? 0 : 17);
    st.set(a, 'task_struct', 'group_leader', a);
    const parent = t.ppid ? this.tasks.get(t.ppid) : undefined;
    if (parent?.addr) {
      st.set(a, 'task_struct', 'real_parent', parent.addr);
      st.set(a, 'task_struct', 'parent', parent.addr);
    }
    t.onComm = (c) => st.set(a, 'task_struct', 'comm', c);
  }

  private freeTask(t: Task): void {
    if (t.pid === t.tgid && this.mms.get(t.tgid) === t.user) this.mms.delete(t.tgid);
    if (!t.addr || t.origin === 'kernel') return;
    if (t.stackBase) this.kmem.freeStack(t.stackBase);
    this.kmem.free(t.addr);
  }

  // --- functions, prototypes, call sites

  private readonly fnByName = new Map<string, KernelFunction | null>();

  /** The function of a name (vmlinux first). */
  resolve(name: string): KernelFunction | undefined {
    let f = this.fnByName.get(name);
    if (f === undefined) {
      const all = this.symbols.byName(name);
      f = all.find((x) => !x.module) ?? all[0] ?? null;
      this.fnByName.set(name, f);
    }
    return f ?? undefined;
  }

  private proto(name: string): FuncProto | undefined {
    try {
      return this.types.funcProto(name);
    } catch (e) {
      if (!(e instanceof BtfError)) throw e;
      return undefined;
    }
  }

  /**
   * The return offset of a call from `caller` to `callee`: the real call
   * site; else (an indirect call through a thunk or a static call) the next
   * of the caller's indirect call sites; else a modelled one.
   */
  private siteOffset(caller: KernelFunction, callee: KernelFunction): number {
    const c = this.sitesOf(caller);
    const r = c.real.get(callee.id);
    if (r !== undefined) return r;
    let a = c.assigned.get(callee.id);
    if (a === undefined) {
      // Which indirect site a callee gets depends only on the pair, not on which calls ran first.
      a = c.indirect.length ? c.indirect[(Math.imul(callee.id, 0x9e3779b1) >>> 0) % c.indirect.length]! : this.callSites.returnOffset(caller, callee);
      c.assigned.set(callee.id, a);
    }
    return a;
  }

  /** The call sites of a function: direct ones by callee, and its indirect ones. */
  private sitesOf(caller: KernelFunction): CallSitesOf {
    let c = this.siteCache.get(caller.id);
    if (!c) {
      const real = new Map<number, number>();
      const indirect: number[] = [];
      for (const s of this.callSites.callsFrom(caller)) {
        if (/^(__pi___x86_indirect_thunk|__x86_indirect_thunk|__SCT__|__x86_indirect_call_thunk)/.test(s.callee.name)) indirect.push(s.returnOffset);
        else if (!real.has(s.callee.id)) real.set(s.callee.id, s.returnOffset);
      }
      c = { real, indirect, assigned: new Map() };
      this.siteCache.set(caller.id, c);
    }
    return c;
  }

  /** A call the real kernel makes as a jump: the caller has no call of its own to it, and is a small wrapper. */
  private isTail(parent: KernelFunction, child: KernelFunction): boolean {
    if (parent.name === 'x64_sys_call') return true;
    if (parent.size > 64) return false;
    const c = this.sitesOf(parent);
    return !c.real.has(child.id) && !c.indirect.length;
  }
}
