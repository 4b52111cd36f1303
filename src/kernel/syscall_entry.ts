/**
 * What every system call does around its own work, wherever its file is:
 * sys_enter with the user's arguments (raw_syscalls and syscalls/*),
 * entry_SYSCALL_64 → do_syscall_64 → x64_sys_call → __x64_sys_<name>, and on
 * the way out sys_exit with the result and the return-to-user work. Shared by
 * the calls on the mount (syscall_paths.ts) and those on the machine's other
 * files that a watched process makes (src/host/syscalls.ts).
 */
import type { Call, Value } from './executor.js';
import type { Kernel } from './kernel.js';
import type { PathNode } from './call_paths.js';
import type { PathEnv, RunCtx } from './path_runner.js';
import type { Task } from './task.js';
import type { KFile } from './vfs.js';

/** The functions every system call enters through (do_syscall_64 → x64_sys_call), and runs on its way back to user space. */
const ENTRY_FNS = ['do_syscall_64', 'x64_sys_call'] as const;
const EXIT_WORK_FNS = ['syscall_exit_to_user_mode_prepare', 'fpregs_assert_state_consistent'] as const;
/** Both: what every call runs outside its own block. */
export const SYSCALL_AROUND: readonly string[] = [...ENTRY_FNS, ...EXIT_WORK_FNS];

export class SyscallEntry {
  private readonly filenames = new Map<string, bigint>();

  constructor(private readonly k: Kernel) {}

  /** sys_enter, as syscall_trace_enter fires it; string arguments are read from the task's user memory. */
  sysEnter(task: Task, nr: number, args: readonly bigint[]): void {
    this.k.tracepoints.fire('sys_enter', this.k.context(task), {
      id: nr,
      args: [...args, 0n, 0n, 0n, 0n, 0n, 0n].slice(0, 6),
      user: (i: number, max: number) => this.readUser(task, args[i] ?? 0n, max),
    });
  }

  /** entry_SYSCALL_64 → do_syscall_64 → x64_sys_call → (jumps to) __x64_sys_<name> → ... */
  enter(task: Task, nodes: readonly PathNode[], ctx: RunCtx, args: readonly bigint[]): void | Promise<unknown> {
    const k = this.k;
    const run = k.runner;
    const regs = k.userRegs(task, args);
    ctx.env.regs = regs;
    ctx.env['struct pt_regs'] = regs;
    const inner = (px: Call | undefined): void | Promise<unknown> => run.run(nodes, ctx, px);
    const [doSysName, sysCallName] = ENTRY_FNS;
    const sysCall = run.fn(sysCallName);
    const doSys = run.fn(doSysName);
    const viaSysCall = (px: Call | undefined): Value | void | Promise<unknown> => (sysCall ? run.call(sysCall, (x) => inner(x) as never, ctx, px) : inner(px));
    const r = doSys ? run.call(doSys, (x) => viaSysCall(x) as never, ctx, undefined) : viaSysCall(undefined);
    return r instanceof Promise ? r : undefined;
  }

  /** sys_exit with the result, the return-to-user work, and the task's preemption and interrupt state back to user mode's. */
  sysExit(task: Task, nr: number, ret: bigint): void {
    this.k.tracepoints.fire('sys_exit', this.k.context(task), { id: nr, ret });
    this.exitWork(task);
    this.leave(task);
  }

  /** Back in user mode, whatever happened on the way (an exception included). */
  leave(task: Task): void {
    task.preemptCount &= ~0xff;
    task.irqsOff = 0;
  }

  /** Return to user space: the exit work the real kernel traces after every call. */
  private exitWork(task: Task): void {
    const run = this.k.runner;
    const ctx: RunCtx = { task, env: {}, flags: new Set(), holes: {} };
    for (const n of EXIT_WORK_FNS) {
      const fn = run.fn(n);
      if (fn?.traceable) void run.call(fn, [], ctx, undefined);
    }
  }

  /** The arguments that name an open file: its struct file, path, dentry, inode and position. */
  fileEnv(env: PathEnv, f: KFile): void {
    const st = this.k.structs;
    env.file = f.addr;
    env.filp = f.addr;
    env['struct file'] = f.addr;
    env.dentry = f.dentry.addr;
    env['struct dentry'] = f.dentry.addr;
    env.inode = f.dentry.inode;
    env['struct inode'] = f.dentry.inode;
    env['struct path'] = st.addrOf(f.addr, 'file', 'f_path') ?? 0n;
    env.path = env['struct path'];
    env.pos = st.addrOf(f.addr, 'file', 'f_pos') ?? 0n;
    env.ppos = env.pos;
  }

  /** struct filename: the kernel's copy of a path the process passed (one per path: names_cache objects are reused). */
  kernelFilename(text: string): bigint {
    let addr = this.filenames.get(text);
    if (addr === undefined) {
      const k = this.k;
      addr = k.kmem.cacheAlloc('names_cache', 4096);
      const iname = k.structs.field('filename', 'iname');
      if (iname && text.length < 4000) {
        k.kmem.space.writeCString(addr + BigInt(iname.offset), text);
        k.structs.set(addr, 'filename', 'name', addr + BigInt(iname.offset));
      } else k.structs.set(addr, 'filename', 'name', k.kmem.kstr(text));
      if (this.filenames.size > 512) {
        // Forget the oldest copies, and give their objects back to names_cache.
        for (const a of this.filenames.values()) k.kmem.free(a);
        this.filenames.clear();
      }
      this.filenames.set(text, addr);
    }
    return addr;
  }

  /** The kernel's copy of the name a struct filename holds (filename->name). */
  filenameName(filename: bigint): bigint {
    return this.k.structs.get(filename, 'filename', 'name') ?? 0n;
  }

  private readUser(task: Task, addr: bigint, max: number): Uint8Array | undefined {
    const mm = task.mm;
    if (!mm) return undefined;
    for (let n = max; n > 0; n = n >> 1) {
      const b = mm.read(addr, n);
      if (b) return b;
    }
    return undefined;
  }
}
