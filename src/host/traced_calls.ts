/**
 * Every system call a watched process makes, reported after it ran while
 * the kernel can see system calls (treesSeen(), or their events): the watcher
 * (native/seccomp/syscall_watch.c) traces them with ptrace and writes one
 * line per call, `T pid nr ret a0..a5 ppid\tfile\tcomm[\taddr data]`. Each runs in the
 * caller's task: sys_enter with its arguments, the real kernel's tree of
 * that call where the call paths have one (read → ksys_read → vfs_read,
 * close → __fput, ...) or else its entry function,
 * and sys_exit with the result the call returned. The trees of the calls
 * every program makes were captured per kind of file (`call:<name>:<kind>`,
 * tools/kernel-paths/calls.mjs; call_kind.ts names them): a read of a file
 * on tmpfs runs shmem_file_read_iter, of a pipe anon_pipe_read, of
 * /dev/null read_null; a sendto on a UDP socket udp_sendmsg, a connect on
 * TCP tcp_v4_connect; an ioctl on a terminal tty_ioctl. Those whose tree
 * holds whatever they are on (brk, rt_sigaction, dup, getpid, ...) have one,
 * `call:<name>`. A call that slept (nanosleep) runs its own work but not the
 * sleep: the process's real sleep and wakeup are shown by themselves
 * (sched.ts), before the call is reported; one that slept unseen (the
 * watcher says how long) is put to sleep and woken as it is reported.
 *
 * Calls the kernel already runs otherwise are not run again: those on the
 * mount (the watcher leaves them out: FUSE requests run them), those the
 * seccomp watcher reports as S lines (syscalls.ts), and the part of a
 * process's life the process events run (an exec that succeeded, a fork's
 * clone in the parent, a wait4 that reaped a child: process_paths.ts).
 */
import type { PathNode } from '../kernel/call_paths.js';
import type { Kernel } from '../kernel/kernel.js';
import type { HoleFn, PathEnv, RunCtx } from '../kernel/path_runner.js';
import { SYSCALL_NR } from '../kernel/syscall_nr.js';
import { SYSCALL_AROUND } from '../kernel/syscall_entry.js';
import type { Task } from '../kernel/task.js';
import { S_IFDIR, S_IFREG } from '../kernel/vfs.js';
import { callBlockNames } from './call_kind.js';
import type { ProcessMirror } from './proc_mirror.js';
import { type HostSyscalls, unescapeField } from './syscalls.js';

/** One traced call (a line `T ...` of the watcher). */
export interface TracedCall {
  /** The calling thread. */
  pid: number;
  /** x86_64 system call number. */
  nr: number;
  /** What the call returned: a value, or -errno. */
  ret: bigint;
  /** Its raw arguments. */
  args: bigint[];
  /** The caller's parent (0: unknown). */
  ppid: number;
  /** The file the call is on: its fd's target (a path, `pipe:[ino]`, ...) or its path argument, absolute; '' if none. */
  file: string;
  /** The caller's comm. */
  comm?: string;
  /** User memory the call used, as the watcher read it: a path as passed, what a read filled, what a write was given. */
  user?: { addr: bigint; bytes: Buffer };
  /** A call that may block: how long it slept (ns; undefined when the watcher did not time it). */
  sleptNs?: number;
  /** One that slept: the caller's priority (/proc's: prio - 100) and policy as it returned. */
  sched?: { priority: number; policy: number };
}

/** Parses a `T ...` line; undefined if it is not one. */
export function parseTracedCall(line: string): TracedCall | undefined {
  const [head, file = '', comm, data] = line.split('\t');
  const f = head!.split(' ');
  if (f[0] !== 'T' || f.length < 11) return undefined;
  const pid = Number(f[1]);
  const nr = Number(f[2]);
  if (!Number.isInteger(pid) || !Number.isInteger(nr) || !/^-?\d+$/.test(f[3]!)) return undefined;
  const args = f.slice(4, 10).map((x) => BigInt.asUintN(64, BigInt(`0x${x}`)));
  const sp = data?.indexOf(' ') ?? -1;
  const user = data && sp > 0 && /^[0-9a-f]+$/.test(data.slice(0, sp)) ? { addr: BigInt(`0x${data.slice(0, sp)}`), bytes: Buffer.from(unescapeField(data.slice(sp + 1)), 'latin1') } : undefined;
  const [slept, priority, policy] = f.slice(11, 14).map(Number);
  return {
    pid,
    nr,
    ret: BigInt(f[3]!),
    args,
    ppid: Number(f[10]) || 0,
    file: unescapeField(file),
    comm: comm ? unescapeField(comm) : undefined,
    user,
    ...(slept! >= 0 ? { sleptNs: slept } : {}),
    ...(Number.isInteger(priority) && Number.isInteger(policy) ? { sched: { priority: priority!, policy: policy! } } : {}),
  };
}

const NR = (name: string): number => SYSCALL_NR[name] ?? -1;

/** Calls that change a process's policy or priority, and which argument names it (0: the caller). */
const SETS_SCHED = ['sched_setscheduler', 'sched_setparam', 'sched_setattr', 'setpriority'].map(NR);
const SETS_SCHED_WHO: Record<number, number> = { [NR('setpriority')]: 1 };

function isExec(nr: number): boolean {
  return nr === NR('execve') || nr === NR('execveat');
}

/** Whether the process events already run this call (process_paths.ts: exec, the parent's side of a fork — by the call the `B` line named —, a reaping wait4). */
function runByProcessEvents(c: TracedCall): boolean {
  if (isExec(c.nr)) return c.ret === 0n;
  if (c.nr === NR('clone') || c.nr === NR('clone3') || c.nr === NR('fork') || c.nr === NR('vfork')) return c.ret > 0n;
  if (c.nr === NR('wait4')) return c.ret > 0n;
  return false;
}

/** Calls whose captured tree (a block of the call paths) holds for any file: the VFS part, the file's operation a hole. */
const BLOCKS: Record<string, string> = {
  read: 'sys_read',
  write: 'sys_write',
  close: 'sys_close',
  getdents64: 'sys_getdents64',
  newfstatat: 'sys_newfstatat',
  poll: 'sys_poll',
};

/** A block shorter than this is not shown as a sleep (the scheduler's look at the host's processes is as coarse). */
const SLEEP_SHOWN_NS = 1_000_000;

/** What a call that sleeps runs (nanosleep, wait4, a read of an empty pipe): the scheduler's blocks. */
const SLEEP_BLOCKS = ['schedule', 'schedule_idle', 'finish_task_switch', 'try_to_wake_up'];

/** The socket calls made on a socket's fd (their first argument). */
const SOCKET_FD_CALLS = ['connect', 'accept', 'accept4', 'sendto', 'recvfrom', 'sendmsg', 'recvmsg', 'sendmmsg', 'recvmmsg', 'shutdown', 'bind', 'listen', 'getsockname', 'getpeername', 'setsockopt', 'getsockopt'];

/** Calls on an open file (or a path): the argument that holds its fd. */
const FD_ARG: Record<string, number> = {
  ...Object.fromEntries(['read', 'write', 'close', 'getdents64', 'newfstatat', 'fstat', 'newfstat', 'lseek', 'pread64', 'pwrite64', 'ioctl', 'fcntl', 'sendfile', 'sendfile64'].map((n) => [n, 0])),
  mmap: 4,
  ...Object.fromEntries(SOCKET_FD_CALLS.map((n) => [n, 0])),
};

export class TracedCalls {
  /** Calls reported so far (the daemon's `load`). */
  reported = 0;
  /** nr → the name its entry function and events use (the first name of the table whose __x64_sys_ function exists). */
  private readonly names = new Map<number, string | undefined>();
  /** nr → every name of the call, the one its entry function uses first (blocks take the kernel's: newfstat is nr 5's). */
  private readonly allNames = new Map<number, string[]>();

  constructor(
    private readonly k: Kernel,
    private readonly mirror: ProcessMirror,
    private readonly files: HostSyscalls,
  ) {}

  /**
   * Whether anyone could see what these calls run (their trees, their entry
   * functions, the scheduler's blocks for those that sleep): the watchers
   * trace every call only then (or while their events are on).
   */
  treesSeen(): boolean {
    const k = this.k;
    return k.treesSeen('traced calls', () => ({
      blocks: [...k.paths.names().filter((b) => b.startsWith('call:')), ...Object.values(BLOCKS), ...SLEEP_BLOCKS],
      fns: [...SYSCALL_AROUND, ...Object.keys(SYSCALL_NR).map((n) => `__x64_sys_${n}`)],
    }));
  }

  run(rec: TracedCall): void {
    const k = this.k;
    this.reported++;
    const task = this.mirror.taskOf(rec.pid, rec.comm, rec.ppid, true);
    if (task.kthread || task.exited) return;
    this.mirror.watch(task);
    if (isExec(rec.nr) && rec.ret === 0n) this.mirror.execTraced(task, rec.comm ?? task.comm);
    else this.mirror.traced(task);
    if (rec.nr === NR('wait4') && rec.ret > 0n) this.mirror.waited(Number(rec.ret));
    // chrt, renice: read again while the process is there (it may be gone by the time its next exec is read).
    if (SETS_SCHED.includes(rec.nr) && rec.ret === 0n) {
      const pid = Number(BigInt.asIntN(32, rec.args[SETS_SCHED_WHO[rec.nr] ?? 0] ?? 0n));
      const target = pid === 0 ? task : this.k.tasks.process(pid);
      if (target) this.mirror.refreshSched(target);
    }
    if (runByProcessEvents(rec)) return;
    if (!k.callPaths || k.syscallBusy(task)) return;
    task.lastSyscallNs = k.clock.now();
    if (!k.observed()) return;
    this.traced(task, rec);
  }

  private traced(task: Task, rec: TracedCall): void {
    const k = this.k;
    // It blocked, and nothing showed it (the host's scheduler was not looked at meanwhile): it sleeps now, and is woken to
    // return, with the priority it had then.
    if (rec.sched) this.mirror.schedSaid(task, rec.sched.priority, rec.sched.policy);
    if ((rec.sleptNs ?? 0) > SLEEP_SHOWN_NS && !k.sched.sleeping(task)) k.sched.blocked(task, 'S');
    k.sched.ensureRunning(task);
    const name = this.nameOf(rec.nr);
    const ret = BigInt.asUintN(64, rec.ret);
    // What the program passed (a path, a write's buffer) is there from the start; what a read filled is
    // there by its fetch args at return (and, unknowable otherwise, already at its entry).
    if (rec.user) k.userMm(task).put(rec.user.addr, rec.user.bytes);
    k.entry.sysEnter(task, rec.nr, rec.args);
    const nodes = name && k.deep() ? this.nodes(task, rec.nr, name, rec.file, rec.args) : undefined;
    if (nodes) {
      const env: PathEnv = { task: task.addr, tsk: task.addr, 'struct task_struct': task.addr, fd: rec.args[0], buf: rec.args[1], ubuf: rec.args[1], count: rec.args[2] };
      const fdArg = FD_ARG[name!];
      const fd = fdArg === undefined ? -1 : Number(BigInt.asIntN(32, rec.args[fdArg] ?? 0n));
      const mode = name === 'getdents64' ? S_IFDIR | 0o755 : S_IFREG | 0o644;
      const opened = fdArg !== undefined && rec.file.startsWith('/') ? this.files.openHostFile(task, rec.file, mode, Math.max(fd, 0)) : undefined;
      if (opened) k.entry.fileEnv(env, opened.file);
      // The file's own operation (not captured for this file) is where a failure comes from.
      const fail: HoleFn = (c) => {
        if (rec.ret < 0n) c.err = { errno: Number(-rec.ret), error: undefined };
      };
      const holes: Record<string, HoleFn> = { '$op': fail, '$fop.read': fail, '$fop.write': fail, '$fop.iterate': fail, '$fop.poll': fail, '$fop.release': fail };
      const ctx: RunCtx = { task, env, flags: new Set(), holes, ret };
      try {
        const r = k.entry.enter(task, nodes, ctx, rec.args);
        // Nothing in these trees waits; should something (a tick) make it, the file goes when the tree is done.
        if (r instanceof Promise) void r.finally(() => opened?.vfs.closeFile(opened.file));
        else if (opened) opened.vfs.closeFile(opened.file);
      } catch (e) {
        k.entry.leave(task);
        if (opened) opened.vfs.closeFile(opened.file);
        throw e;
      }
    }
    k.entry.sysExit(task, rec.nr, ret);
  }

  /** The call's tree captured for its kind of file (call_kind.ts), else one that holds for any file, else its entry function alone. */
  private nodes(task: Task, nr: number, name: string, file: string, args: readonly bigint[]): readonly PathNode[] | undefined {
    let names = this.allNames.get(nr);
    if (!names) this.allNames.set(nr, (names = [name, ...Object.keys(SYSCALL_NR).filter((n) => n !== name && SYSCALL_NR[n] === nr)]));
    for (const b of callBlockNames(names, file, args, (abs) => this.files.fsTypeOf(task, abs))) {
      const own = this.k.paths.get(b);
      if (own?.length) return own;
    }
    const block = BLOCKS[name];
    const tree = block ? this.k.paths.get(block) : undefined;
    if (tree?.length) return tree;
    return [{ name: `__x64_sys_${name}`, kids: [], rep: 1, chain: true }];
  }

  private nameOf(nr: number): string | undefined {
    if (this.names.has(nr)) return this.names.get(nr);
    let found: string | undefined;
    for (const [name, n] of Object.entries(SYSCALL_NR)) {
      if (n !== nr) continue;
      if (this.k.resolve(`__x64_sys_${name}`)) {
        found = name;
        break;
      }
      found ??= name;
    }
    this.names.set(nr, found);
    return found;
  }
}
