/**
 * System calls a watched process makes on the machine's other files — an
 * open of /dev/null, a chdir(), a symlink() in /tmp — reported before they
 * run by `tracefs-emu exec`'s seccomp watcher (native/seccomp/syscall_watch.c).
 * Each runs in the caller's task as the real kernel runs it: sys_enter with
 * the arguments in the process's user memory, the call tree a real kernel
 * ran for that kind of file (the `host:` blocks of the call paths) with the
 * file's dentry, inode and struct file, sys_exit with the result.
 *
 * The watcher reports a call before it runs, so the result is its
 * prediction: the lowest free fd for an open, the error stat() gives.
 */
import type { PathNode } from '../kernel/call_paths.js';
import type { Kernel } from '../kernel/kernel.js';
import type { HoleFn, PathEnv, RunCtx } from '../kernel/path_runner.js';
import { SYSCALL_AROUND } from '../kernel/syscall_entry.js';
import type { Task } from '../kernel/task.js';
import { type FsIdentity, type KDentry, type KFile, MountVfs, S_IFDIR, S_IFMT, S_IFREG } from '../kernel/vfs.js';
import { mountOfPath, type MountInfo } from './mountinfo.js';
import type { ProcessMirror } from './proc_mirror.js';
import type { ProcSource } from './proc_source.js';

/** One reported call (a line `S ...` of the watcher). */
export interface HostSyscall {
  /** The calling thread. */
  pid: number;
  /** x86_64 system call number. */
  nr: number;
  /** What the call returns (predicted): an fd, 0, or -errno. */
  ret: number;
  /** Its raw arguments (openat2: a2 = how->flags, a3 = how->mode). */
  args: bigint[];
  /** The file the call is on, when it exists: device, inode number, st_mode. */
  file?: { dev: string; ino: number; mode: number };
  /** The path argument as passed (symlink: the link's target). */
  path: string;
  /** symlink: the new link's path as passed. */
  path2: string;
  /** The path the call resolves, absolute. */
  abs: string;
  /** The caller's comm when it made the call (it may be gone by now). */
  comm?: string;
  /** The caller's parent when it made the call (0: unknown). */
  ppid: number;
}

/** `\ooo` escapes of the watcher's strings. */
export function unescapeField(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** Parses a watcher line; undefined if it is not one. */
export function parseHostSyscall(line: string): HostSyscall | undefined {
  const [head, s0 = '', s1 = '', abs = '', comm] = line.split('\t');
  const f = head!.split(' ');
  if (f[0] !== 'S' || f.length < 13) return undefined;
  const pid = Number(f[1]);
  const nr = Number(f[2]);
  const ret = Number(f[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(nr) || !Number.isInteger(ret)) return undefined;
  const args = f.slice(4, 10).map((x) => BigInt.asUintN(64, BigInt(`0x${x}`)));
  const ino = Number(f[11]);
  const mode = parseInt(f[12]!, 8);
  const ppid = Number(f[13] ?? 0) || 0;
  return { pid, nr, ret, args, file: mode ? { dev: f[10]!, ino, mode } : undefined, path: unescapeField(s0), path2: unescapeField(s1), abs: unescapeField(abs), comm: comm ? unescapeField(comm) : undefined, ppid };
}

/** AT_FDCWD as the kernel has it once the syscall wrapper made it an int. */
const KERNEL_AT_FDCWD = BigInt.asUintN(64, -100n);
const O_ACCMODE = 3;
const O_CREAT = 0o100;

/** The calls run here; an exec is run by the process mirror when it happens. */
type Kind = 'open' | 'chdir' | 'fchdir' | 'symlink';

/** The calls the watcher reports: their entry function and what they are. */
const CALLS: Record<number, { sys: string; kind: Kind | 'exec' }> = {
  2: { sys: '__x64_sys_open', kind: 'open' },
  85: { sys: '__x64_sys_creat', kind: 'open' },
  257: { sys: '__x64_sys_openat', kind: 'open' },
  437: { sys: '__x64_sys_openat2', kind: 'open' },
  80: { sys: '__x64_sys_chdir', kind: 'chdir' },
  81: { sys: '__x64_sys_fchdir', kind: 'fchdir' },
  88: { sys: '__x64_sys_symlink', kind: 'symlink' },
  266: { sys: '__x64_sys_symlinkat', kind: 'symlink' },
  59: { sys: '__x64_sys_execve', kind: 'exec' },
  322: { sys: '__x64_sys_execveat', kind: 'exec' },
};

/** What little the kernel knows of a filesystem by its name. */
const FS_KNOWN: Record<string, { magic: number; fsType?: string; inodeCache: string }> = {
  tmpfs: { magic: 0x01021994, fsType: 'shmem_fs_type', inodeCache: 'shmem_inode_cache' },
  devtmpfs: { magic: 0x01021994, fsType: 'dev_fs_type', inodeCache: 'shmem_inode_cache' },
  ext4: { magic: 0xef53, fsType: 'ext4_fs_type', inodeCache: 'ext4_inode_cache' },
  overlay: { magic: 0x794c7630, fsType: 'ovl_fs_type', inodeCache: 'ovl_inode' },
  proc: { magic: 0x9fa0, fsType: 'proc_fs_type', inodeCache: 'proc_inode_cache' },
  sysfs: { magic: 0x62656572, fsType: 'sysfs_fs_type', inodeCache: 'kernfs_iattrs_cache' },
  btrfs: { magic: 0x9123683e, fsType: 'btrfs_fs_type', inodeCache: 'btrfs_inode' },
  xfs: { magic: 0x58465342, fsType: 'xfs_fs_type', inodeCache: 'xfs_inode' },
};

/** An int argument as the kernel has it after the syscall wrapper's conversion (sign-extended). */
function kernelInt(v: bigint | undefined): bigint {
  return BigInt.asUintN(64, BigInt.asIntN(32, v ?? 0n));
}

/** What a call's kind prepares: its arguments, its captured tree, the file it opens. */
interface Prepared {
  args: bigint[];
  block?: string;
  opened?: { vfs: MountVfs; file: KFile };
}

/** A mount of the machine, with the objects of the files touched on it. */
interface HostMount {
  info: MountInfo;
  vfs: MountVfs;
}

export class HostSyscalls {
  private readonly mounts = new Map<string, HostMount>();
  /** Which mount each path is on, per mount table read (a table is re-read as a new array). */
  private readonly mountsByPath = new WeakMap<readonly MountInfo[], Map<string, MountInfo>>();
  /** Tasks whose reported call is still running (a tree that waited). */
  private readonly inFlight = new WeakSet<Task>();
  /** The kernel-side struct open_how / struct path the calls pass around. */
  private scratch?: { how: bigint; path: bigint };
  /** Calls reported so far (the daemon's `load`). */
  reported = 0;

  constructor(
    private readonly k: Kernel,
    private readonly mirror: ProcessMirror,
    private readonly src: ProcSource,
  ) {}

  /** Whether anyone could see what the reported calls run (their `host:` trees, their entry functions). */
  treesSeen(): boolean {
    const k = this.k;
    return k.treesSeen('host calls', () => ({
      blocks: k.paths.names().filter((b) => b.startsWith('host:')),
      fns: [...SYSCALL_AROUND, ...Object.values(CALLS).map((c) => c.sys)],
    }));
  }

  run(rec: HostSyscall): void {
    const k = this.k;
    this.reported++;
    const call = CALLS[rec.nr];
    if (!call) return;
    // An exec runs when it is reported or inferred (procs.exec): what it learns here is the path as passed,
    // which /proc no longer tells once a short-lived program is gone.
    if (call.kind === 'exec' && rec.ret === 0 && rec.path) this.mirror.execCalled(rec.pid, rec.path);
    const task = this.mirror.taskOf(rec.pid, rec.comm, rec.ppid, true);
    if (task.kthread || task.exited) return;
    // Its chdir()s are seen as they happen: none is inferred from a changed cwd.
    this.mirror.watch(task);
    if (call.kind === 'exec') return;
    if (!k.callPaths || k.syscallBusy(task) || this.inFlight.has(task)) return;
    task.lastSyscallNs = k.clock.now();
    if (!k.observed()) return;
    this.traced(task, rec, call.sys, call.kind);
  }

  private traced(task: Task, rec: HostSyscall, sys: string, kind: Kind): void {
    const k = this.k;
    k.sched.ensureRunning(task);
    const env: PathEnv = { task: task.addr, tsk: task.addr, 'struct task_struct': task.addr, 'struct mnt_idmap': k.symbolAddr('nop_mnt_idmap') };
    const { args, block, opened } = kind === 'open' ? this.open(task, rec, env) : kind === 'symlink' ? this.symlink(task, rec, env) : this.chdir(task, rec, env, kind);
    const nr = rec.nr;
    k.entry.sysEnter(task, nr, args);
    const ret = BigInt(rec.ret);
    const op: HoleFn = (c) => {
      if (rec.ret < 0) c.err = { errno: -rec.ret, error: undefined };
      else c.ret = ret;
    };
    const ctx: RunCtx = { task, env, flags: new Set(), holes: { $op: op } };
    const nodes = block && k.deep() ? this.nodes(block, sys) : undefined;
    const exit = (): void => {
      this.inFlight.delete(task);
      k.entry.sysExit(task, nr, ret);
      // The real struct file lives until the process closes it, which this kernel never hears of: this one goes now.
      if (opened) opened.vfs.closeFile(opened.file);
    };
    let r: void | Promise<unknown>;
    this.inFlight.add(task);
    try {
      r = nodes ? k.entry.enter(task, nodes, ctx, args) : undefined;
    } catch (e) {
      exit();
      throw e;
    }
    // Nothing in these trees waits; should something (a tick) make it, the call ends when the tree does.
    if (r instanceof Promise) void r.then(exit, exit);
    else exit();
  }

  /** open, creat, openat, openat2: the arguments as the registers had them (the path moves to this process's emulated memory). */
  private open(task: Task, rec: HostSyscall, env: PathEnv): Prepared {
    const k = this.k;
    const user = k.userMm(task);
    const a = rec.args;
    const filename = user.stackString(rec.path);
    const at = rec.nr === 257 || rec.nr === 437;
    const flags = rec.nr === 85 ? 0o1101n : (a[at ? 2 : 1] ?? 0n);
    const mode = a[at ? 3 : rec.nr === 85 ? 1 : 2] ?? 0n;
    let args: bigint[];
    if (rec.nr === 437) {
      const how = user.stackBuffer(24);
      user.put(how, howBytes(flags, mode));
      args = [a[0] ?? 0n, filename, how, 24n];
    } else if (rec.nr === 257) args = [a[0] ?? 0n, filename, flags, mode];
    else if (rec.nr === 85) args = [filename, mode];
    else args = [filename, flags, mode];
    const how = this.scratchOf().how;
    k.kmem.space.write(how, howBytes(flags, mode));
    Object.assign(env, { dfd: at ? kernelInt(a[0]) : KERNEL_AT_FDCWD, filename, flags, mode, how, 'struct open_how': how, 'struct filename': k.entry.kernelFilename(rec.path) });
    let opened: Prepared['opened'];
    if (rec.ret >= 0) {
      const d = this.dentry(task, rec.abs, rec.file?.mode ?? S_IFREG | (Number(mode) & 0o7777), rec.file?.ino);
      opened = { vfs: d.vfs, file: d.vfs.openFile(d.dentry, Number(flags), undefined, rec.ret) };
      k.entry.fileEnv(env, opened.file);
    }
    return { args, block: `host:sys_openat:${openKind(rec, Number(flags))}`, opened };
  }

  /** chdir, fchdir (whose own tree was not captured: its events only). */
  private chdir(task: Task, rec: HostSyscall, env: PathEnv, kind: 'chdir' | 'fchdir'): Prepared {
    const k = this.k;
    let args: bigint[];
    let block: string | undefined;
    if (kind === 'chdir') {
      const filename = k.userMm(task).stackString(rec.path);
      args = [filename];
      const name = k.entry.kernelFilename(rec.path);
      Object.assign(env, { filename, 'struct filename': name, name });
      block = rec.ret < 0 ? 'host:sys_chdir:enoent' : 'host:sys_chdir';
    } else args = [rec.args[0] ?? 0n];
    if (rec.ret >= 0) this.pathEnv(env, this.dentry(task, rec.abs, rec.file?.mode ?? S_IFDIR | 0o755, rec.file?.ino));
    return { args, block };
  }

  /** symlink, symlinkat: vfs_symlink gets the new dentry, its directory's inode and the kernel's copy of the target. */
  private symlink(task: Task, rec: HostSyscall, env: PathEnv): Prepared {
    const k = this.k;
    const user = k.userMm(task);
    const oldname = user.stackString(rec.path);
    const newname = user.stackString(rec.path2);
    const at = rec.nr === 266;
    const from = k.entry.kernelFilename(rec.path);
    const kname = k.entry.filenameName(from);
    const d = this.dentry(task, rec.abs, 0o120777, rec.file?.ino);
    const dir = d.dentry.parent?.inode ?? 0n;
    Object.assign(env, { from, to: k.entry.kernelFilename(rec.path2), newdfd: at ? kernelInt(rec.args[1]) : KERNEL_AT_FDCWD, oldname: kname, symname: kname });
    Object.assign(env, { dentry: d.dentry.addr, 'struct dentry': d.dentry.addr, dir, 'struct inode': dir });
    return { args: at ? [oldname, rec.args[1] ?? 0n, newname] : [oldname, newname], block: rec.ret < 0 ? 'host:sys_symlink:eexist' : 'host:sys_symlink' };
  }

  /** The block's tree, under the entry function the call came through (open and openat share their body). */
  private nodes(block: string, sys: string): readonly PathNode[] | undefined {
    const nodes = this.k.paths.get(block);
    if (!nodes?.length) return undefined;
    const [top] = nodes;
    if (!top || top.name === sys) return nodes;
    return [{ ...top, name: sys }];
  }

  private scratchOf(): { how: bigint; path: bigint } {
    return (this.scratch ??= { how: this.k.kmem.cacheAlloc('kmalloc-32', 24), path: this.k.kmem.cacheAlloc('kmalloc-16', 16) });
  }

  /** struct path of a dentry (set_fs_pwd's argument). */
  private pathEnv(env: PathEnv, d: { vfs: MountVfs; dentry: KDentry }): void {
    const s = this.scratchOf();
    const st = this.k.structs;
    st.set(s.path, 'path', 'mnt', d.vfs.vfsmount);
    st.set(s.path, 'path', 'dentry', d.dentry.addr);
    Object.assign(env, { path: s.path, 'struct path': s.path, dentry: d.dentry.addr, 'struct dentry': d.dentry.addr, inode: d.dentry.inode, 'struct inode': d.dentry.inode });
  }

  /** A struct file for a host path a traced call is on (traced_calls.ts), as fd `fd`: the caller closes it when the call is done. */
  openHostFile(task: Task, abs: string, mode: number, fd: number): { vfs: MountVfs; file: KFile } {
    const d = this.dentry(task, abs, mode);
    return { vfs: d.vfs, file: d.vfs.openFile(d.dentry, 0, undefined, fd) };
  }

  /** The type of the filesystem a host path is on, as the task sees its mounts. */
  fsTypeOf(task: Task, abs: string): string {
    return this.mountOf(task, abs).info.fstype;
  }

  /** The dentry of a host path, on the filesystem it is on as the task sees its mounts. */
  private dentry(task: Task, abs: string, mode: number, ino?: number): { vfs: MountVfs; dentry: KDentry } {
    const m = this.mountOf(task, abs);
    const rel = m.info.mountPoint === '/' ? abs : abs.slice(m.info.mountPoint.length);
    return { vfs: m.vfs, dentry: m.vfs.dentry(rel.replace(/^\/+/, ''), { ino: ino ?? 0, mode }) };
  }

  /**
   * The mounts the task's process sees; for a process gone by the time its
   * calls are read (they are reported after they ran), its nearest living
   * ancestor's: a child shares its parent's mount namespace unless it made
   * its own.
   */
  private mountTable(task: Task): readonly MountInfo[] {
    let t: Task | undefined = task;
    for (let depth = 0; t && t.pid > 0 && depth < MAX_ANCESTORS_ASKED; depth++, t = this.k.tasks.get(t.ppid)) {
      const table = this.src.mounts?.(t.pid);
      if (table) return table;
    }
    return NO_MOUNTS;
  }

  private mountOf(task: Task, abs: string): HostMount {
    const table = this.mountTable(task);
    let byPath = this.mountsByPath.get(table);
    if (!byPath) this.mountsByPath.set(table, (byPath = new Map()));
    let info = byPath.get(abs);
    if (!info) {
      info = mountOfPath(table, abs) ?? ROOTFS;
      if (byPath.size > 4096) byPath.clear();
      byPath.set(abs, info);
    }
    const key = `${info.dev} ${info.mountPoint}`;
    let m = this.mounts.get(key);
    if (!m) {
      const known = FS_KNOWN[info.fstype];
      const [maj = 0, min = 0] = info.dev.split(':').map(Number);
      const fs: FsIdentity = {
        id: info.source.startsWith('/dev/') ? info.source.slice(5) : info.fstype,
        devname: info.source,
        magic: known?.magic ?? 0,
        fsType: known?.fsType,
        inodeCache: known?.inodeCache ?? 'inode_cache',
        rootMode: S_IFDIR | 0o755,
        dev: (maj << 20) | min,
      };
      m = { info, vfs: new MountVfs(this.k.kmem, this.k.structs, (n) => this.k.symbolAddr(n), fs) };
      this.mounts.set(key, m);
    }
    return m;
  }
}

const NO_MOUNTS: readonly MountInfo[] = [];

/** How far up a gone process's ancestors its mounts are looked for. */
const MAX_ANCESTORS_ASKED = 8;
/** What a path on no mount the table knows is on. */
const ROOTFS: MountInfo = { id: 1, mountPoint: '/', fstype: 'rootfs', source: 'rootfs', options: '', dev: '0:0' };

/** Which captured open the call is like: by the file's type, the access mode, and whether it creates or fails. */
function openKind(rec: HostSyscall, flags: number): string {
  if (rec.ret < 0) return 'enoent';
  const type = (rec.file?.mode ?? 0) & S_IFMT;
  const write = (flags & O_ACCMODE) !== 0;
  if (!rec.file) return flags & O_CREAT ? 'creat' : write ? 'reg' : 'reg-read';
  if (type === 0o020000 || type === 0o060000) return write ? 'chr' : 'chr-read';
  if (type === S_IFDIR) return 'dir';
  return write ? 'reg' : 'reg-read';
}

/** struct open_how { u64 flags; u64 mode; u64 resolve; }. */
function howBytes(flags: bigint, mode: bigint): Uint8Array {
  const b = Buffer.alloc(24);
  b.writeBigUInt64LE(BigInt.asUintN(64, flags), 0);
  b.writeBigUInt64LE(BigInt.asUintN(64, mode), 8);
  return b;
}
