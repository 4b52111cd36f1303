/**
 * The kernel threads of the emulated kernel, numbered as a Debian kernel
 * numbers them at boot (the 2-CPU layout seen on the real 7.2 kernel,
 * extended per CPU): stable pids, comms as task->comm holds them (15
 * characters), priorities as sched events print them.
 */

export type KthreadRole =
  | 'init'
  | 'kthreadd'
  | 'kworker'
  | 'kworker-unbound'
  | 'rescuer'
  | 'ksoftirqd'
  | 'migration'
  | 'cpuhp'
  | 'idle_inject'
  | 'rcu_preempt'
  | 'rcu_tasks'
  | 'rcu_exp'
  | 'other';

interface KthreadSpec {
  pid: number;
  comm: string;
  ppid: number;
  /** task->prio (120 = nice 0, 100 = nice -20, 0 = SCHED_FIFO 99). */
  prio: number;
  /** The CPU it is bound to, or -1 for any. */
  cpu: number;
  role: KthreadRole;
}

/** task->comm is 16 bytes with the NUL. */
function taskComm(name: string): string {
  return name.slice(0, 15);
}

/** Kernel threads for `nrCpus` CPUs, pid 1 (init) and 2 (kthreadd) first. */
export function kernelThreads(nrCpus: number): KthreadSpec[] {
  const out: KthreadSpec[] = [];
  let pid = 1;
  const add = (comm: string, role: KthreadRole, prio = 120, cpu = -1, ppid = 2): void => {
    out.push({ pid: pid++, comm: taskComm(comm), ppid, prio, cpu, role });
  };
  const unbound = 2 * nrCpus + 4;
  add('init', 'init', 120, -1, 0);
  add('kthreadd', 'kthreadd', 120, -1, 0);
  add('pool_workqueue_release', 'other');
  for (const wq of ['rcu_gp', 'sync_wq', 'kvfree_rcu_reclaim', 'slub_flushwq', 'netns']) add(`kworker/R-${wq}`, 'rescuer', 100);
  add('kworker/0:0', 'kworker', 120, 0);
  add('kworker/0:0H', 'kworker', 100, 0);
  add('kworker/0:1', 'kworker', 120, 0);
  add(`kworker/u${unbound}:0`, 'kworker-unbound');
  add('kworker/R-mm_percpu_wq', 'rescuer', 100);
  add('ksoftirqd/0', 'ksoftirqd', 120, 0);
  add('rcu_preempt', 'rcu_preempt');
  add('rcu_exp_par_gp_kthread_worker/0', 'rcu_exp');
  add('rcu_exp_gp_kthread_worker', 'rcu_exp');
  add('migration/0', 'migration', 0, 0);
  add('kprobe-optimizer', 'other');
  add('idle_inject/0', 'idle_inject', 49, 0);
  add('cpuhp/0', 'cpuhp', 120, 0);
  for (let c = 1; c < nrCpus; c++) {
    add(`cpuhp/${c}`, 'cpuhp', 120, c);
    add(`idle_inject/${c}`, 'idle_inject', 49, c);
    add(`migration/${c}`, 'migration', 0, c);
    add(`ksoftirqd/${c}`, 'ksoftirqd', 120, c);
    add(`kworker/${c}:0`, 'kworker', 120, c);
    add(`kworker/${c}:0H`, 'kworker', 100, c);
  }
  add(`kworker/u${unbound}:1`, 'kworker-unbound');
  add('kdevtmpfs', 'other');
  add('kworker/R-inet_frag_wq', 'rescuer', 100);
  add('rcu_tasks_kthread', 'rcu_tasks');
  add('rcu_tasks_rude_kthread', 'rcu_tasks');
  add('kauditd', 'other');
  add('khungtaskd', 'other');
  add('oom_reaper', 'other');
  add(`kworker/u${unbound}:2`, 'kworker-unbound');
  add('kworker/R-writeback', 'rescuer', 100);
  add('kcompactd0', 'other');
  add('ksmd', 'other', 125);
  add('khugepaged', 'other', 139);
  for (const wq of ['kblockd', 'blkcg_punt_bio', 'kintegrityd']) add(`kworker/R-${wq}`, 'rescuer', 100);
  add('irq/9-acpi', 'other', 49);
  for (let c = 1; c < nrCpus; c++) add(`kworker/${c}:1`, 'kworker', 120, c);
  for (const wq of ['tpm_dev_wq', 'edac-poller', 'devfreq_wq', 'quota_events_unbound']) add(`kworker/R-${wq}`, 'rescuer', 100);
  add('kswapd0', 'other');
  add('kdamond.0', 'other');
  for (const wq of ['kthrotld', 'acpi_thermal_pm', 'mld', 'ipv6_addrconf', 'kstrp']) add(`kworker/R-${wq}`, 'rescuer', 100);
  add(`kworker/u${unbound + 1}:0`, 'kworker-unbound', 100);
  return out;
}
