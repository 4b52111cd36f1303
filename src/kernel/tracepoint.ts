/**
 * Static tracepoints (kernel/tracepoint.c): named hooks that kernel code fires
 * with argument values, and to which probe functions attach. The kernel layer
 * only fires them; the trace layer attaches probes (event recording, pid
 * filtering on fork...), so nothing here knows about tracing.
 *
 * Arguments are a plain object of values keyed by the fields of the event of
 * the same name (its `format` file): numbers, bigints, strings, byte arrays,
 * arrays of numbers for array fields. `TracepointArgs` below types the
 * tracepoints the emulated kernel fires.
 */
import { fail } from './errno.js';
import type { ExecContext } from './context.js';

type ArgValue = number | bigint | string | boolean | Uint8Array | readonly (number | bigint)[] | undefined;
type AnyArgs = { readonly [field: string]: ArgValue | unknown };

export type TracepointProbe<A = AnyArgs> = (ctx: ExecContext, args: A) => void;

type Num = number | bigint;

/**
 * The arguments of the tracepoints the emulated kernel fires, by tracepoint
 * name. Fields not given are recorded as zero (or an empty string).
 */
export interface TracepointArgs {
  // sched
  sched_switch: { prev_comm: string; prev_pid: number; prev_prio: number; prev_state: Num; next_comm: string; next_pid: number; next_prio: number };
  sched_wakeup: { comm: string; pid: number; prio: number; target_cpu: number };
  sched_waking: { comm: string; pid: number; prio: number; target_cpu: number };
  sched_wakeup_new: { comm: string; pid: number; prio: number; target_cpu: number };
  sched_process_fork: { parent_comm: string; parent_pid: number; child_comm: string; child_pid: number };
  sched_process_exec: { filename: string; pid: number; old_pid: number };
  sched_process_exit: { comm: string; pid: number; prio: number; group_dead?: boolean };
  sched_process_free: { comm: string; pid: number; prio: number };
  sched_process_wait: { comm: string; pid: number; prio: number };
  sched_stat_runtime: { comm: string; pid: number; runtime: Num };
  sched_migrate_task: { comm: string; pid: number; prio: number; orig_cpu: number; dest_cpu: number };
  // timer
  timer_init: { timer: Num };
  timer_start: { timer: Num; function: Num; expires: Num; bucket_expiry: Num; now: Num; flags: number };
  timer_expire_entry: { timer: Num; now: Num; function: Num; baseclk: Num };
  timer_expire_exit: { timer: Num };
  timer_cancel: { timer: Num };
  hrtimer_init: { hrtimer: Num; clockid: number; mode: number };
  hrtimer_setup: { hrtimer: Num; clockid: number; mode: number };
  hrtimer_start: { hrtimer: Num; function: Num; expires: Num; softexpires: Num; mode: number; was_armed?: number };
  hrtimer_expire_entry: { hrtimer: Num; now: Num; function: Num };
  hrtimer_expire_exit: { hrtimer: Num };
  hrtimer_cancel: { hrtimer: Num };
  // kmem
  kmalloc: { call_site: Num; ptr: Num; bytes_req: Num; bytes_alloc: Num; gfp_flags: number; node: number };
  kfree: { call_site: Num; ptr: Num };
  kmem_cache_alloc: { call_site: Num; ptr: Num; name?: string; bytes_req: Num; bytes_alloc: Num; gfp_flags: number; node: number; accounted?: boolean };
  kmem_cache_free: { call_site: Num; ptr: Num; name: string };
  // raw_syscalls (and, through them, syscalls/*)
  sys_enter: SysEnterArgs;
  sys_exit: { id: number; ret: Num };
  // irq
  irq_handler_entry: { irq: number; name: string };
  irq_handler_exit: { irq: number; ret: number };
  softirq_entry: { vec: number };
  softirq_exit: { vec: number };
  softirq_raise: { vec: number };
  // workqueue
  workqueue_queue_work: { work: Num; function: Num; workqueue: string; req_cpu: number; cpu: number };
  workqueue_activate_work: { work: Num; function: Num };
  workqueue_execute_start: { work: Num; function: Num };
  workqueue_execute_end: { work: Num; function: Num };
  // rcu
  rcu_utilization: { s: Num };
  // preemptirq (with the latency tracers: CONFIG_PREEMPTIRQ_TRACEPOINTS)
  irq_disable: { caller_offs: number; parent_offs: number };
  irq_enable: { caller_offs: number; parent_offs: number };
  preempt_disable: { caller_offs: number; parent_offs: number };
  preempt_enable: { caller_offs: number; parent_offs: number };
  // lock
  contention_begin: { lock_addr: Num; flags: number };
  contention_end: { lock_addr: Num; ret: number };
}

/** raw_syscalls:sys_enter: the number, the six argument registers, and the user memory they point at. */
export interface SysEnterArgs {
  id: number;
  args: readonly Num[];
  /** What arg `i` points at in user space, for the syscalls whose events record it (7.2); undefined on a fault. */
  user?(i: number, max: number): Uint8Array | undefined;
}

interface Attached {
  fn: TracepointProbe<never>;
  prio: number;
  /** Whether the probe now returns at once, leaving nothing anyone could see (an event whose buffers record nothing). */
  quiet?: () => boolean;
}

class Tracepoint {
  private probes: Attached[] = [];

  constructor(
    readonly name: string,
    /** Told when a probe comes or goes. */
    private readonly changed?: () => void,
  ) {}

  /** True when a probe is attached: kernel code may skip building arguments otherwise. */
  get enabled(): boolean {
    return this.probes.length > 0;
  }

  /** Whether some probe could leave a trace when it fires now (enabled, and not every probe quiet). */
  get seen(): boolean {
    for (const p of this.probes) if (!p.quiet?.()) return true;
    return false;
  }

  /** tracepoint_probe_register_prio(): higher priority probes run first; a probe attaches once. */
  register(fn: TracepointProbe<never>, prio = 10, quiet?: () => boolean): void {
    if (this.probes.some((p) => p.fn === fn)) fail('EEXIST');
    const next = [...this.probes, { fn, prio, quiet }];
    next.sort((a, b) => b.prio - a.prio);
    this.probes = next;
    this.changed?.();
  }

  unregister(fn: TracepointProbe<never>): void {
    const i = this.probes.findIndex((p) => p.fn === fn);
    if (i < 0) fail('ENOENT');
    this.probes = this.probes.filter((_, k) => k !== i);
    this.changed?.();
  }

  fire(ctx: ExecContext, args: unknown): void {
    // The array is replaced on (un)registration, so probes may detach themselves while firing.
    for (const p of this.probes) (p.fn as TracepointProbe<unknown>)(ctx, args);
  }
}

export class TracepointRegistry {
  private readonly points = new Map<string, Tracepoint>();
  /** Moves whenever a probe attaches or detaches anywhere, or turns quiet or loud: what depends on the enabled set caches by it. */
  generation = 0;
  private readonly bump = () => {
    this.generation++;
  };

  /** The tracepoint of this name (tracepoints exist statically; they are made on first use). */
  get(name: string): Tracepoint {
    let tp = this.points.get(name);
    if (!tp) this.points.set(name, (tp = new Tracepoint(name, this.bump)));
    return tp;
  }

  enabled(name: string): boolean {
    return this.points.get(name)?.enabled ?? false;
  }

  /** Whether firing `name` now could leave a trace: a probe is attached that is not quiet. */
  seen(name: string): boolean {
    return this.points.get(name)?.seen ?? false;
  }

  /** Some probe's quiet() may have changed its answer. */
  probesChanged(): void {
    this.generation++;
  }

  register<K extends keyof TracepointArgs>(name: K, fn: TracepointProbe<TracepointArgs[K]>, prio?: number, quiet?: () => boolean): void;
  /** Any probe (its argument type is the caller's business). */
  register(name: string, fn: TracepointProbe<never>, prio?: number, quiet?: () => boolean): void;
  register(name: string, fn: TracepointProbe<never>, prio?: number, quiet?: () => boolean): void {
    this.get(name).register(fn, prio, quiet);
  }

  unregister(name: string, fn: TracepointProbe<never>): void {
    this.get(name).unregister(fn);
  }

  /** trace_<name>(args): runs the attached probes, if any. */
  fire<K extends keyof TracepointArgs>(name: K, ctx: ExecContext, args: TracepointArgs[K]): void;
  fire(name: string, ctx: ExecContext, args: AnyArgs): void;
  fire(name: string, ctx: ExecContext, args: unknown): void {
    const tp = this.points.get(name);
    if (tp?.enabled) tp.fire(ctx, args);
  }
}
