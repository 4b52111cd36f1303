/**
 * A stub activity driver for ftrace tests: runs call trees through the
 * executor in a task, the way the kernel helper's syscall paths will.
 */
import type { Kernel } from '../../src/kernel/kernel.js';
import type { Call } from '../../src/kernel/executor.js';
import type { Task } from '../../src/kernel/task.js';

/** [function, ...callees]; a bare name is a leaf. Returns `ret` (default 0). */
export type CallTree = string | [string, ...CallTree[]] | { fn: string; ret?: bigint | number; calls?: CallTree[] };

function norm(t: CallTree): { fn: string; ret?: bigint | number; calls: CallTree[] } {
  if (typeof t === 'string') return { fn: t, calls: [] };
  if (Array.isArray(t)) return { fn: t[0], calls: t.slice(1) as CallTree[] };
  return { fn: t.fn, ret: t.ret, calls: t.calls ?? [] };
}

let nextStack = 0xffffc90000100000n;

/** Gives a task a kernel stack if it has none. */
export function withStack(task: Task): Task {
  if (!task.sp) {
    nextStack += 0x10000n;
    task.sp = nextStack;
  }
  return task;
}

/** Runs a call tree in `task` (synchronously). */
export function run(kernel: Kernel, task: Task, tree: CallTree): bigint {
  const exec = kernel.exec;
  withStack(task);
  const go = (parent: Call | null, t: CallTree): bigint => {
    const n = norm(t);
    const body = (c: Call) => {
      for (const k of n.calls) go(c, k);
      return n.ret ?? 0n;
    };
    return (parent ? parent.call(n.fn, [], body) : exec.call(task, n.fn, [], body)) as bigint;
  };
  return go(null, tree);
}

/** read(2) of /proc/version through the kernel path the samples show (7.2). */
export const READ_PROC_VERSION: CallTree = [
  'ksys_read',
  [
    'vfs_read',
    ['rw_verify_area', ['security_file_permission', ['apparmor_file_permission', ['aa_file_perm', '__rcu_read_lock', '__rcu_read_unlock']], 'bpf_lsm_file_permission']],
    [
      'proc_reg_read_iter',
      [
        'seq_read_iter',
        'mutex_lock',
        '__kvmalloc_node_noprof',
        'single_start',
        ['version_proc_show', 'seq_printf'],
        'single_next',
        'single_stop',
        ['__check_object_size', 'check_stack_object', 'is_vmalloc_addr', '__virt_addr_valid', '__check_heap_object'],
        'mutex_unlock',
      ],
    ],
  ],
];

/** What kernel_clone() tells its hooks of a new task (shadow stacks, function-fork). */
export function notifyFork(kernel: Kernel, child: Task, parent?: Task): void {
  for (const f of kernel.taskLifecycle.forked) f(child, parent);
}

/** What do_exit() tells its hooks. */
export function notifyExit(kernel: Kernel, task: Task): void {
  for (const f of kernel.taskLifecycle.exited) f(task);
}
