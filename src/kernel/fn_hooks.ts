/**
 * What particular kernel functions do besides calling others, as the
 * emulator models it: locks change the preempt count and irq state that
 * events record; interrupt entry and softirqs change the context; and the
 * functions that hold static tracepoints fire them (sched_waking in
 * try_to_wake_up, kmalloc in __kmalloc_noprof, timer_expire_entry in
 * call_timer_fn, ...), with arguments from the emulated state.
 */
import type { Call } from './executor.js';
import type { ExecContext } from './context.js';
import { HARDIRQ_OFFSET, SOFTIRQ_DISABLE_OFFSET, SOFTIRQ_OFFSET } from './cpu.js';
import type { KernelMemory } from './kmem.js';
import { kmallocSize } from './kmem.js';
import type { FnHook, HookEffect, RunCtx } from './path_runner.js';
import type { PreemptIrq } from './preempt_irq.js';
import type { Task } from './task.js';
import type { TracepointRegistry } from './tracepoint.js';

export interface HookHost {
  readonly tracepoints: TracepointRegistry;
  readonly kmem: KernelMemory;
  /** Interrupt- and preemption-disabled sections (what the latency tracers watch). */
  readonly preemptIrq: PreemptIrq;
  context(task: Task): ExecContext;
  /** ns since boot, and jiffies. */
  nowNs(): bigint;
  jiffies(): bigint;
  /** Address of a kernel symbol (function or data). */
  symbolAddr(name: string): bigint | undefined;
  /** sizeof(struct name). */
  sizeOf(struct: string, fallback: number): number;
  /** The task a try_to_wake_up in this call chain wakes (undefined: nobody worth waking). */
  wakeeFor(x: Call, ctx: RunCtx): Task | undefined;
  /** Marks a woken task runnable on its CPU. */
  wake(task: Task): void;
}

/** GFP_KERNEL, as kmalloc events print it. */
const GFP_KERNEL = 0xcc0;
const NUMA_NO_NODE = -1;

/** Softirq vectors of the action functions handle_softirqs runs. */
const SOFTIRQ_VEC: Record<string, number> = {
  tasklet_hi_action: 0,
  run_timer_softirq: 1,
  net_tx_action: 2,
  net_rx_action: 3,
  blk_done_softirq: 4,
  irq_poll_softirq: 5,
  tasklet_action: 6,
  sched_balance_softirq: 7,
  run_rebalance_domains: 7,
  run_hrtimer_softirq: 8,
  rcu_core_si: 9,
};

/** hrtimer callbacks that __hrtimer_run_queues calls (__run_hrtimer is inlined). */
const HRTIMER_FNS = ['tick_nohz_handler', 'tick_nohz_highres_handler', 'tick_sched_timer', 'hrtick', 'hrtimer_wakeup', 'watchdog_timer_fn', 'inactive_task_timer', 'dl_task_timer', 'sched_rt_period_timer', 'it_real_fn', 'posix_timer_fn', 'bc_handler', 'rtc_pie_function'];

/** Slab caches by the function that allocates from them. */
const CACHE_BY_CALLER: Record<string, [string, string]> = {
  do_getname: ['names_cache', ''],
  getname_flags: ['names_cache', ''],
  'getname_flags.part.0': ['names_cache', ''],
  alloc_empty_file: ['filp', 'file'],
  init_file: ['filp', 'file'],
  __d_alloc: ['dentry', 'dentry'],
  d_alloc: ['dentry', 'dentry'],
  security_file_alloc: ['lsm_file_cache', ''],
  security_inode_alloc: ['lsm_inode_cache', ''],
  tracefs_alloc_inode: ['tracefs_inode_cache', 'inode'],
  __anon_vma_prepare: ['anon_vma', 'anon_vma'],
  seq_open: ['seq_file', 'seq_file'],
  dup_task_struct: ['task_struct', 'task_struct'],
  alloc_pid: ['pid', 'pid'],
  vm_area_alloc: ['vm_area_struct', 'vm_area_struct'],
  vm_area_dup: ['vm_area_struct', 'vm_area_struct'],
  prepare_creds: ['cred', 'cred'],
  prepare_kernel_cred: ['cred', 'cred'],
  alloc_bprm: ['kmalloc-512', ''],
  free_inode_nonrcu: ['tracefs_inode_cache', 'inode'],
  __d_free: ['dentry', 'dentry'],
  put_pid: ['pid', 'pid'],
  refresh_cpu_vm_stats: ['kmalloc-64', ''],
};

/** What the slab hooks may show: their events (which objects they hand out only decides the addresses that come next). */
const SLAB: HookEffect = { fires: ['kmalloc', 'kfree', 'kmem_cache_alloc', 'kmem_cache_free'] };

/** Calls around a callback that are not the callback (locks, accounting of the caller). */
const BOOKKEEPING = /^(_raw_|__raw_|raw_|pwq_|worker_|assign_work|kick_pool|wq_|set_work|insert_work|__rcu|rcu_|mutex_|__queue|lock_|__lock|in_lock|__timer|timer_|detach|__mod|local_|preempt|__flush|debug_)/;

function parentName(x: Call, up = 1): string | undefined {
  const f = x.task.frames;
  const i = f.lastIndexOf(x);
  return f[i - up]?.fn.name;
}

function hasAncestor(x: Call, re: RegExp, depth = 8): string | undefined {
  const f = x.task.frames;
  for (let i = f.lastIndexOf(x) - 1, n = 0; i >= 0 && n < depth; i--, n++) if (re.test(f[i]!.fn.name)) return f[i]!.fn.name;
  return undefined;
}

/** Objects handed out and freed by the hooked allocators, per cache: frees return the newest. */
class SlabSim {
  private readonly live = new Map<string, bigint[]>();
  private readonly last: bigint[] = [];

  constructor(private readonly kmem: KernelMemory) {}

  alloc(cache: string, size: number): bigint {
    const addr = this.kmem.cacheAlloc(cache, size);
    let l = this.live.get(cache);
    if (!l) this.live.set(cache, (l = []));
    l.push(addr);
    if (l.length > 256) this.kmem.free(l.shift()!);
    this.last.push(addr);
    if (this.last.length > 64) this.last.shift();
    return addr;
  }

  /** The object a free of `cache` (or of any kmalloc object) releases. */
  free(cache?: string): { addr: bigint; cache: string } | undefined {
    if (cache) {
      const l = this.live.get(cache);
      const a = l?.pop();
      if (a === undefined) return undefined;
      this.kmem.free(a);
      return { addr: a, cache };
    }
    for (const [c, l] of this.live) {
      if (!c.startsWith('kmalloc-') || !l.length) continue;
      const a = l.pop()!;
      this.kmem.free(a);
      return { addr: a, cache: c };
    }
    return undefined;
  }
}

export function makeFnHooks(h: HookHost): Map<string, FnHook> {
  const hooks = new Map<string, FnHook>();
  const tp = h.tracepoints;
  const slab = new SlabSim(h.kmem);
  const on = (names: string | string[], hook: FnHook): void => {
    for (const n of Array.isArray(names) ? names : [names]) hooks.set(n, hook);
  };
  const fire = (name: string, x: Call, args: Record<string, unknown>): void => {
    if (tp.enabled(name)) tp.fire(name, h.context(x.task), args as never);
  };
  /** Fires with interrupts off and `preempt` more preemption depth (a lock held where the kernel fires it). */
  const fireLocked = (name: string, x: Call, args: Record<string, unknown>, preempt: number): void => {
    if (!tp.enabled(name)) return;
    const t = x.task;
    t.irqsOff += 1;
    t.preemptCount += preempt;
    try {
      tp.fire(name, h.context(t), args as never);
    } finally {
      t.irqsOff -= 1;
      t.preemptCount -= preempt;
    }
  };

  // --- locks: preemption and interrupts as events record them (and the sections the latency tracers time)
  const pi = h.preemptIrq;
  /** CALLER_ADDR0 of the section's edge: inside the lock function. */
  const ip = (x: Call): bigint => x.fn.addr + BigInt(x.fn.fentryOffset + 5);
  on(['_raw_spin_lock', '_raw_spin_trylock', '_raw_read_lock', '_raw_write_lock', '_raw_spin_lock_nested'], {
    exit: (x) => pi.preemptDisable(x.task, ip(x), x.callSite),
    effect: { preempt: 1, fires: ['preempt_disable'] },
  });
  on(['_raw_spin_lock_irq', '_raw_spin_lock_irqsave', '_raw_read_lock_irqsave', '_raw_write_lock_irq', '_raw_write_lock_irqsave', '_raw_spin_trylock_irqsave'], {
    exit: (x) => {
      pi.irqDisable(x.task, ip(x), x.callSite);
      pi.preemptDisable(x.task, ip(x), x.callSite);
    },
    effect: { preempt: 1, irqs: 1, fires: ['irq_disable', 'preempt_disable'] },
  });
  on('_raw_spin_lock_bh', { exit: (x) => void (x.task.preemptCount += SOFTIRQ_DISABLE_OFFSET + 1), effect: { preempt: SOFTIRQ_DISABLE_OFFSET + 1 } });
  on(['_raw_spin_unlock', '_raw_read_unlock', '_raw_write_unlock'], {
    enter: (x) => pi.preemptEnable(x.task, ip(x), x.callSite),
    effect: { preempt: -1, fires: ['preempt_enable'] },
  });
  on(['_raw_spin_unlock_irq', '_raw_spin_unlock_irqrestore', '_raw_read_unlock_irqrestore', '_raw_write_unlock_irq', '_raw_write_unlock_irqrestore'], {
    enter: (x) => {
      pi.irqEnable(x.task, ip(x), x.callSite);
      pi.preemptEnable(x.task, ip(x), x.callSite);
    },
    effect: { preempt: -1, irqs: -1, fires: ['irq_enable', 'preempt_enable'] },
  });
  on('_raw_spin_unlock_bh', {
    enter: (x) => {
      if (x.task.preemptCount & 0xfe00) x.task.preemptCount -= SOFTIRQ_DISABLE_OFFSET;
      if ((x.task.preemptCount & 0xff) > 0) x.task.preemptCount -= 1;
    },
    effect: { preempt: -(SOFTIRQ_DISABLE_OFFSET + 1) },
  });

  // --- interrupts and softirqs
  on('irq_enter_rcu', {
    enter: (x) => void (x.task.irqsOff += 1),
    exit: (x) => void (x.task.preemptCount += HARDIRQ_OFFSET),
    effect: { preempt: HARDIRQ_OFFSET, irqs: 1 },
  });
  on('irq_exit_rcu', {
    enter: (x) => {
      if (x.task.preemptCount >= HARDIRQ_OFFSET) x.task.preemptCount -= HARDIRQ_OFFSET;
    },
    exit: (x) => {
      if (x.task.irqsOff > 0) x.task.irqsOff -= 1;
    },
    effect: { preempt: -HARDIRQ_OFFSET, irqs: -1 },
  });
  on('__sysvec_apic_timer_interrupt', {
    enter: (x) => fire('local_timer_entry', x, { vector: 0xec }),
    exit: (x) => fire('local_timer_exit', x, { vector: 0xec }),
    effect: { fires: ['local_timer_entry', 'local_timer_exit'] },
  });
  on('handle_softirqs', {
    enter: (x) => {
      x.task.preemptCount += SOFTIRQ_OFFSET;
      if (x.task.irqsOff > 0) x.task.irqsOff -= 1;
    },
    exit: (x) => {
      x.task.irqsOff += 1;
      if (x.task.preemptCount & SOFTIRQ_OFFSET) x.task.preemptCount -= SOFTIRQ_OFFSET;
    },
    effect: {},
  });
  for (const [name, vec] of Object.entries(SOFTIRQ_VEC)) {
    on(name, {
      enter: (x) => fire('softirq_entry', x, { vec }),
      exit: (x) => fire('softirq_exit', x, { vec }),
      effect: { fires: ['softirq_entry', 'softirq_exit'] },
    });
  }
  on(['raise_softirq', '__raise_softirq_irqoff', 'raise_softirq_irqoff'], {
    enter: (x) => {
      if (parentName(x) === 'raise_softirq') return;
      const p = hasAncestor(x, /^(invoke_rcu_core|rcu_sched_clock_irq|sched_balance_trigger|trigger_load_balance|update_process_times|run_local_timers|hrtimer_run_queues|__hrtimer_run_queues)$/);
      const vec = p === undefined ? 1 : /rcu/.test(p) ? 9 : /balance/.test(p) ? 7 : /__hrtimer/.test(p) ? 8 : 1;
      fire('softirq_raise', x, { vec });
    },
    effect: { fires: ['softirq_raise'] },
  });

  // --- RCU
  const rcuUtil = (x: Call, s: string): void => fire('rcu_utilization', x, { s });
  const RCU: HookEffect = { fires: ['rcu_utilization'] };
  on('rcu_core', { enter: (x) => rcuUtil(x, 'Start RCU core'), exit: (x) => rcuUtil(x, 'End RCU core'), effect: RCU });
  on('rcu_sched_clock_irq', { enter: (x) => rcuUtil(x, 'Start scheduler-tick'), exit: (x) => rcuUtil(x, 'End scheduler-tick'), effect: RCU });
  on('rcu_note_context_switch', { enter: (x) => rcuUtil(x, 'Start context switch'), exit: (x) => rcuUtil(x, 'End context switch'), effect: RCU });

  // --- scheduler
  on('update_curr', {
    exit: (x) => {
      const t = x.task;
      if (t.isIdle) return;
      const now = Number(h.nowNs());
      const delta = Math.max(1000, now - (t.lastRanNs || now - 50_000));
      t.sumExecNs += delta;
      t.lastRanNs = now;
      t.vruntime += BigInt(delta);
      fire('sched_stat_runtime', x, { comm: t.comm, pid: t.pid, runtime: BigInt(delta), vruntime: t.vruntime });
    },
    // The next accounting that runs takes the time since the task last ran: nothing is lost.
    effect: { fires: ['sched_stat_runtime'] },
  });
  on('try_to_wake_up', {
    enter: (x, ctx) => {
      const w = h.wakeeFor(x, ctx);
      (x as { wakee?: Task }).wakee = w;
      if (w) fireLocked('sched_waking', x, { comm: w.comm, pid: w.pid, prio: w.prio, target_cpu: w.cpu }, 1);
    },
    exit: (x) => {
      const w = (x as { wakee?: Task }).wakee;
      if (!w) return 0n;
      h.wake(w);
      fireLocked('sched_wakeup', x, { comm: w.comm, pid: w.pid, prio: w.prio, target_cpu: w.cpu }, 2);
      return 1n;
    },
  });

  // --- hrtimers and timers
  const fnAddr = (name: string): bigint => h.symbolAddr(name) ?? 0n;
  const timerAddr = (cpu: number, name: string): bigint => {
    let s = 0;
    for (let i = 0; i < name.length; i++) s = (s * 31 + name.charCodeAt(i)) >>> 0;
    return 0xffff88803ec00000n + BigInt(cpu) * 0x40000n + BigInt((s % 0x3f00) * 0x10);
  };
  for (const name of HRTIMER_FNS) {
    on(name, {
      enter: (x) => fire('hrtimer_expire_entry', x, { hrtimer: timerAddr(x.task.cpu, name), now: h.nowNs(), function: fnAddr(name) }),
      exit: (x) => fire('hrtimer_expire_exit', x, { hrtimer: timerAddr(x.task.cpu, name) }),
      effect: { fires: ['hrtimer_expire_entry', 'hrtimer_expire_exit'] },
    });
  }
  on('hrtimer_start_range_ns', {
    exit: (x) => {
      const p = hasAncestor(x, /^(tick_\w+|hrtick\w*|schedule_hrtimeout\w*|do_nanosleep|hrtimer_nanosleep|tick_nohz_\w+|watchdog\w*)$/) ?? 'tick_nohz_handler';
      const fn = /hrtick/.test(p) ? 'hrtick' : /tick/.test(p) ? (h.symbolAddr('tick_nohz_handler') ? 'tick_nohz_handler' : 'tick_sched_timer') : /watchdog/.test(p) ? 'watchdog_timer_fn' : 'hrtimer_wakeup';
      const now = h.nowNs();
      const expires = fn === 'hrtimer_wakeup' ? now + 1_000_000n : ((now / 4_000_000n) + 1n) * 4_000_000n;
      fire('hrtimer_start', x, { hrtimer: timerAddr(x.task.cpu, fn), function: fnAddr(fn), expires, softexpires: expires, mode: fn === 'hrtick' ? 0xa : 0, was_armed: 0 });
    },
    effect: { fires: ['hrtimer_start'] },
  });
  on(['hrtimer_cancel', 'hrtimer_try_to_cancel'], {
    exit: (x) => {
      if (parentName(x) === 'hrtimer_cancel') return;
      fire('hrtimer_cancel', x, { hrtimer: timerAddr(x.task.cpu, 'hrtimer_wakeup') });
    },
    effect: { fires: ['hrtimer_cancel'] },
  });
  const TIMER_FNS = ['process_timeout', 'delayed_work_timer_fn', 'srcu_delay_timer', 'idle_worker_timeout', 'writeout_period', 'blk_rq_timed_out_timer', 'tcp_keepalive_timer'];
  on(['mod_timer', 'add_timer', 'add_timer_on', 'timer_reduce', 'add_timer_global', 'mod_timer_pending'], {
    exit: (x) => {
      if (hasAncestor(x, /^(mod_timer|add_timer|add_timer_on|timer_reduce|add_timer_global)$/, 2)) return;
      const p = hasAncestor(x, /^(schedule_timeout|__queue_delayed_work|queue_delayed_work_on|srcu_\w+|mod_delayed_work_on)$/);
      const fn = p === undefined ? 'process_timeout' : /delayed_work/.test(p) ? 'delayed_work_timer_fn' : /srcu/.test(p) ? 'srcu_delay_timer' : 'process_timeout';
      const j = h.jiffies();
      fire('timer_start', x, { timer: timerAddr(x.task.cpu, fn) + 0x100n, function: fnAddr(fn), expires: j + 1n, bucket_expiry: j + 2n, now: j, flags: x.task.cpu });
    },
    effect: { fires: ['timer_start'] },
  });
  on('call_timer_fn', {
    enter: (x, _ctx, kids) => {
      const fn = kids?.find((k) => !k.name.startsWith('$') && !BOOKKEEPING.test(k.name))?.name ?? TIMER_FNS[Number(h.jiffies() % BigInt(TIMER_FNS.length))]!;
      (x as { timerFn?: string }).timerFn = fn;
      const j = h.jiffies();
      fire('timer_expire_entry', x, { timer: timerAddr(x.task.cpu, fn) + 0x100n, now: j, function: fnAddr(fn), baseclk: j });
    },
    exit: (x) => {
      const fn = (x as { timerFn?: string }).timerFn ?? 'process_timeout';
      fire('timer_expire_exit', x, { timer: timerAddr(x.task.cpu, fn) + 0x100n });
    },
    effect: { fires: ['timer_expire_entry', 'timer_expire_exit'] },
  });
  on(['timer_delete_sync', 'timer_delete', 'del_timer_sync', 'del_timer', 'timer_shutdown_sync'], {
    exit: (x) => {
      if (hasAncestor(x, /^(timer_delete_sync|timer_delete|del_timer_sync|del_timer)$/, 2)) return;
      fire('timer_cancel', x, { timer: timerAddr(x.task.cpu, 'process_timeout') + 0x100n });
    },
    effect: { fires: ['timer_cancel'] },
  });

  // --- slab and kmalloc
  const cacheFor = (x: Call): [string, number] => {
    for (let up = 1; up <= 3; up++) {
      const c = CACHE_BY_CALLER[parentName(x, up) ?? ''];
      if (c) return [c[0], c[0] === 'names_cache' ? 4096 : h.sizeOf(c[1] || c[0], 64)];
    }
    return ['kmalloc-64', 64];
  };
  on(['kmem_cache_alloc_noprof', 'kmem_cache_alloc_lru_noprof', 'kmem_cache_alloc_node_noprof'], {
    exit: (x) => {
      const [name, size] = cacheFor(x);
      const ptr = slab.alloc(name, size);
      fire('kmem_cache_alloc', x, { call_site: x.callSite, ptr, name, bytes_req: size, bytes_alloc: size, gfp_flags: GFP_KERNEL, node: NUMA_NO_NODE, accounted: false });
      return ptr;
    },
    effect: SLAB,
  });
  on(['__kmalloc_noprof', '__kmalloc_cache_noprof', '__kmalloc_node_noprof', '__kmalloc_node_track_caller_noprof', '__kvmalloc_node_noprof', '__kmalloc_cache_node_noprof', '__kmalloc_large_noprof'], {
    exit: (x) => {
      if (hasAncestor(x, /^__k(v)?malloc/, 1)) return;
      const want = parentName(x) === 'seq_read_iter' ? 4096 : parentName(x)?.startsWith('kstr') ? 16 : 64;
      const bytes = kmallocSize(want);
      const ptr = slab.alloc(bytes <= 8192 ? `kmalloc-${bytes >= 1024 ? `${bytes / 1024}k` : bytes}` : 'kmalloc-large', bytes);
      fire('kmalloc', x, { call_site: x.callSite, ptr, bytes_req: want, bytes_alloc: bytes, gfp_flags: GFP_KERNEL, node: NUMA_NO_NODE, accounted: false });
      return ptr;
    },
    effect: SLAB,
  });
  on(['kfree', 'kvfree', 'kfree_sensitive'], {
    enter: (x) => {
      if (hasAncestor(x, /^(kvfree|kfree_sensitive)$/, 1)) return;
      const o = slab.free();
      fire('kfree', x, { call_site: x.callSite, ptr: o?.addr ?? 0n });
    },
    effect: SLAB,
  });
  on('kmem_cache_free', {
    enter: (x) => {
      const [name] = cacheFor(x);
      const o = slab.free(name) ?? slab.free();
      fire('kmem_cache_free', x, { call_site: x.callSite, ptr: o?.addr ?? 0n, name: o?.cache ?? name });
    },
    effect: SLAB,
  });

  // --- workqueues
  const WORK_FNS = ['vmstat_update', 'process_srcu', 'flush_to_ldisc', 'kfree_rcu_monitor', 'psi_avgs_work', 'wq_barrier_func', 'toggle_allocation_gate', 'lru_add_drain_per_cpu'];
  on('process_one_work', {
    enter: (x, _ctx, kids) => {
      const fn = kids?.find((k) => !k.name.startsWith('$') && !BOOKKEEPING.test(k.name))?.name ?? WORK_FNS[Number(h.jiffies() % BigInt(WORK_FNS.length))]!;
      const work = 0xffff88803ec00000n + BigInt(x.task.cpu) * 0x40000n + 0x3f000n + BigInt(fn.length) * 0x40n;
      (x as { work?: [bigint, bigint] }).work = [work, fnAddr(fn)];
      fire('workqueue_execute_start', x, { work, function: fnAddr(fn) });
    },
    exit: (x) => {
      const w = (x as { work?: [bigint, bigint] }).work;
      if (w) fire('workqueue_execute_end', x, { work: w[0], function: w[1] });
    },
    effect: { fires: ['workqueue_execute_start', 'workqueue_execute_end'] },
  });
  on(['__queue_work', 'queue_work_on'], {
    exit: (x) => {
      if (hasAncestor(x, /^(__queue_work|queue_work_on)$/, 2)) return;
      const fn = WORK_FNS[Number(h.jiffies() % BigInt(WORK_FNS.length))]!;
      const work = 0xffff88803ec00000n + BigInt(x.task.cpu) * 0x40000n + 0x3f000n + BigInt(fn.length) * 0x40n;
      fire('workqueue_queue_work', x, { work, function: fnAddr(fn), workqueue: 'events', req_cpu: 8192, cpu: x.task.cpu });
      fire('workqueue_activate_work', x, { work, function: fnAddr(fn) });
    },
    effect: { fires: ['workqueue_queue_work', 'workqueue_activate_work'] },
  });
  return hooks;
}
