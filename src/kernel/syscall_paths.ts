/**
 * Kernel.syscall: a system call on the mount runs, in the calling task, the
 * path the real kernel runs for it — entry (raw_syscalls and syscalls/*
 * sys_enter with the real arguments), do_syscall_64 → __x64_sys_<name> → …
 * → the file's own operation (named as the kernel names it) → …, exit
 * (sys_exit with the result) — with the tracefs operation as the innermost
 * body. Its arguments are real: the struct file of the open, the dentry of
 * the path, the process's buffer with the bytes written.
 */
import type { Value } from './executor.js';
import { errno, KernelError } from './errno.js';
import type { Kernel } from './kernel.js';
import type { PathNode } from './call_paths.js';
import type { HoleFn, PathEnv, RunCtx } from './path_runner.js';
import { SYSCALL_AROUND } from './syscall_entry.js';
import { SYSCALL_NR } from './syscall_nr.js';
import type { FopNames, Syscall, SyscallNode } from './syscall.js';
import type { Task } from './task.js';
import { tracefsFops } from './tracefs_fops.js';
import type { KDentry, KFile } from './vfs.js';

/** AT_FDCWD in the user's register (glibc passes the int zero-extended), and as the kernel's int after the syscall wrapper. */
const AT_FDCWD_USER = 0xffffff9cn;
const AT_FDCWD = BigInt.asUintN(64, -100n);

/** __x64_sys_ entry and sys_enter id of each call (truncate is served as ftruncate). */
const ENTRY: Record<Syscall['name'], { block: string; nr: string }> = {
  openat: { block: 'sys_openat', nr: 'openat' },
  read: { block: 'sys_read', nr: 'read' },
  write: { block: 'sys_write', nr: 'write' },
  close: { block: 'sys_close', nr: 'close' },
  getdents64: { block: 'sys_getdents64', nr: 'getdents64' },
  newfstatat: { block: 'sys_newfstatat', nr: 'newfstatat' },
  mkdir: { block: 'sys_mkdir', nr: 'mkdir' },
  rmdir: { block: 'sys_rmdir', nr: 'rmdir' },
  fchownat: { block: 'sys_fchownat', nr: 'fchownat' },
  fchmodat: { block: 'sys_fchmodat', nr: 'fchmodat' },
  poll: { block: 'sys_poll', nr: 'poll' },
  truncate: { block: 'sys_truncate', nr: 'ftruncate' },
  chdir: { block: 'sys_chdir', nr: 'chdir' },
};

/** iterate_shared of the tracefs's directories: eventfs's below events/, dcache_readdir's elsewhere. */
const DIR_ITERATE = ['eventfs_iterate', 'dcache_readdir'];

/** Calls whose kernel path was not captured: their events only. */
const EVENTS_ONLY = new Set<Syscall['name']>(['chdir']);

/** Default f_op names when the tracefs does not say. */
const DEFAULT_FOPS: Required<Omit<FopNames, 'fops' | 'iterate'>> = {
  open: 'tracing_open_generic',
  read: 'seq_read',
  write: 'tracing_write_stub',
  release: 'seq_release',
  poll: 'tracing_poll_pipe',
  llseek: 'generic_file_llseek',
};

/** The blocks a read-only open, its reads, an fstat and the release run, the file's own operations aside. */
const READ_BLOCKS = ['sys_openat', 'walk_perm', 'walk_fast', 'walk_miss', 'sys_read', 'sys_close', 'sys_newfstatat'];

/** Yields to the microtask queue n times: an operation still pending after that is waiting for something. */
async function microtasks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await undefined;
}

/** Per open file: the struct file and what the path code needs of it. */
interface OpenState {
  kfile: KFile;
  names?: FopNames;
  /** The task whose fd numbers kfile.fd was taken from (a file opened untraced gets its struct file in whichever thread first traces a call on it). */
  fdTask: Task;
}

export class SyscallPaths {
  private readonly files = new WeakMap<object, OpenState>();
  /** Per task: the fd numbers in use. */
  private readonly fds = new WeakMap<Task, Set<number>>();
  /** Tasks inside a system call now. */
  private readonly busy = new WeakSet<Task>();

  constructor(private readonly k: Kernel) {}

  isBusy(task: Task): boolean {
    return this.busy.has(task);
  }

  /**
   * Whether anyone could see what a read-only open of the file at `path`,
   * its reads, an fstat and its release run: a hooked function (or one
   * whose calls are counted) or a probed tracepoint in their trees or among
   * the file's own operations. The system-call events and the scheduler's
   * are the caller's to check.
   */
  readsSeen(path: string, node?: SyscallNode): boolean {
    const names = { ...DEFAULT_FOPS, ...(tracefsFops(path, this.k.profile) ?? {}), ...(node?.fops?.names ?? {}) };
    return this.k.treesSeen(`reads ${names.open} ${names.read} ${names.release}`, () => ({
      fns: [...SYSCALL_AROUND, names.open, names.read, names.release],
      blocks: [...READ_BLOCKS, `fop:${names.open}`, `fop:${names.read}`, `fop:${names.release}`],
    }));
  }

  /** Whether anyone could see what a getdents64 on a directory of the tracefs runs (its iterate operation aside from the name). */
  dirReadsSeen(): boolean {
    return this.k.treesSeen('readdir', () => ({
      fns: [...SYSCALL_AROUND, ...DIR_ITERATE],
      blocks: [ENTRY.getdents64.block, ...DIR_ITERATE.map((n) => `fop:${n}`)],
    }));
  }

  run<T>(task: Task, sc: Syscall, body: (task: Task) => T): T {
    // One system call at a time per task: a release that FUSE delivers while the process sleeps in another call runs bare.
    if (this.busy.has(task) || !this.k.callPaths) return this.bare(task, sc, body);
    // FUSE polls a file from inside the caller's poll (select, epoll_ctl...), as often as it is woken: the call itself is its tracer's to report.
    if (sc.name === 'poll' && task.callsReported) return this.bare(task, sc, body);
    task.lastSyscallNs = this.k.clock.now();
    if (!this.k.observed()) return this.bare(task, sc, body);
    return this.traced(task, sc, body, this.k.deep());
  }

  /** No one is looking: the operation, and the bookkeeping that later traced calls rely on. */
  private bare<T>(task: Task, sc: Syscall, body: (task: Task) => T): T {
    const r = body(task);
    const after = (v: unknown): void => this.bookkeep(task, sc, v, undefined);
    if (r instanceof Promise) return r.then((v) => (after(v), v)) as T;
    after(r);
    return r;
  }

  /** The struct file of an open file, made on first sight (opened before the kernel watched). */
  private stateOf(task: Task, sc: Syscall, key: object | undefined): OpenState {
    let st = key ? this.files.get(key) : undefined;
    if (!st) {
      const node = sc.node;
      const dentry = this.k.vfs.dentry(sc.path, node);
      const kfile = this.k.vfs.openFile(dentry, sc.flags ?? 0, this.fopsAddr(node?.fops?.names ?? tracefsFops(sc.path, this.k.profile)), this.allocFd(task));
      st = { kfile, names: node?.fops?.names, fdTask: task };
      if (key) this.files.set(key, st);
    }
    return st;
  }

  private fopsAddr(names: FopNames | undefined): bigint | undefined {
    return names?.fops ? this.k.symbolAddr(names.fops) : undefined;
  }

  private allocFd(task: Task): number {
    let s = this.fds.get(task);
    if (!s) this.fds.set(task, (s = new Set()));
    let fd = 3;
    while (s.has(fd)) fd++;
    s.add(fd);
    return fd;
  }

  private freeFd(task: Task, fd: number): void {
    this.fds.get(task)?.delete(fd);
  }

  /** What every call leaves behind, traced or not: struct files of traced opens, freed on close; dentries of removed dirs. */
  private bookkeep(task: Task, sc: Syscall, result: unknown, pre: OpenState | undefined): void {
    if (sc.name === 'openat') {
      // Untraced opens get their struct file when a traced call first uses it.
      const key = (result as { file?: object } | undefined)?.file ?? (result as object | undefined);
      if (pre && key && typeof key === 'object' && !this.files.has(key)) this.files.set(key, pre);
      else if (pre && !(key && typeof key === 'object')) {
        // The open failed after its struct file was made: it goes, with its fd.
        this.freeFd(pre.fdTask, pre.kfile.fd);
        this.k.vfs.closeFile(pre.kfile);
      }
    } else if (sc.name === 'close' && sc.file) {
      const st = this.files.get(sc.file);
      if (st) {
        this.freeFd(st.fdTask, st.kfile.fd);
        this.k.vfs.closeFile(st.kfile);
        this.files.delete(sc.file);
      }
    } else if (sc.name === 'rmdir' && this.k.vfsReady) {
      this.k.vfs.drop(sc.path);
    }
  }

  private traced<T>(task: Task, sc: Syscall, body: (task: Task) => T, deep: boolean): T {
    const k = this.k;
    const entry = ENTRY[sc.name];
    // Only events are seen: the path's calls need not run, the operation runs at once between sys_enter and sys_exit.
    const nodes = deep && !EVENTS_ONLY.has(sc.name) ? k.paths.get(entry.block) : [];
    if (!nodes) return this.bare(task, sc, body);
    this.busy.add(task);
    k.sched.ensureRunning(task);
    const user = k.userMm(task);
    const env: PathEnv = this.baseEnv(task);
    const flags = new Set<string>();

    // The file the call is on, and its objects.
    let open: OpenState | undefined;
    let dentry: KDentry | undefined;
    if (sc.name === 'openat') {
      const acc = (sc.flags ?? 0) & 3;
      if (acc !== 0) flags.add('write');
      if ((sc.flags ?? 0) & 0o1000 && acc !== 0) flags.add('trunc');
    }
    if (sc.file && sc.name !== 'openat') {
      open = this.stateOf(task, sc, sc.file);
      dentry = open.kfile.dentry;
      k.entry.fileEnv(env, open.kfile);
    }
    const names: FopNames = { ...DEFAULT_FOPS, ...(tracefsFops(sc.path, k.profile) ?? {}), ...(open?.names ?? sc.node?.fops?.names ?? {}) };
    if (sc.name === 'getdents64') names.iterate ??= /(^|\/)events(\/|$)/.test(sc.path) ? DIR_ITERATE[0] : DIR_ITERATE[1];

    // Arguments in user memory, registers as the process made the call.
    const nr = SYSCALL_NR[entry.nr] ?? 0;
    const fd = BigInt(open?.kfile.fd ?? 3);
    let args: bigint[];
    let ubuf = 0n;
    const upath = (): bigint => user.stackString(this.userPath(sc.path));
    switch (sc.name) {
      case 'openat':
        args = [AT_FDCWD_USER, upath(), BigInt(sc.flags ?? 0), BigInt(sc.mode ?? 0)];
        break;
      case 'read':
        ubuf = user.buffer('read', sc.count ?? 4096);
        args = [fd, ubuf, BigInt(sc.count ?? 0)];
        break;
      case 'write':
        ubuf = user.buffer('write', sc.data?.length ?? sc.count ?? 0);
        if (sc.data) user.put(ubuf, sc.data);
        args = [fd, ubuf, BigInt(sc.data?.length ?? sc.count ?? 0)];
        break;
      case 'close':
        args = [fd];
        break;
      case 'getdents64':
        ubuf = user.buffer('dirent', 32768);
        args = [fd, ubuf, 32768n];
        break;
      case 'newfstatat':
        args = [AT_FDCWD_USER, upath(), user.stackBuffer(144), 0n];
        break;
      case 'mkdir':
        args = [upath(), BigInt(sc.mode ?? 0o777)];
        break;
      case 'rmdir':
        args = [upath()];
        break;
      case 'fchownat':
        args = [AT_FDCWD_USER, upath(), BigInt.asUintN(64, BigInt(sc.uid ?? -1)), BigInt.asUintN(64, BigInt(sc.gid ?? -1)), 0n];
        break;
      case 'fchmodat':
        args = [AT_FDCWD_USER, upath(), BigInt(sc.mode ?? 0)];
        break;
      case 'poll':
        args = [user.stackBuffer(8), 1n, BigInt.asUintN(64, -1n)];
        break;
      case 'truncate':
        args = [fd, 0n];
        break;
      case 'chdir':
        args = [user.stackString(sc.path)];
        break;
    }
    env.buf = ubuf;
    env.ubuf = ubuf;
    env.count = BigInt(sc.count ?? sc.data?.length ?? 0);
    env.fd = fd;
    env.dfd = AT_FDCWD;
    env.flags = BigInt(sc.flags ?? 0);
    env.mode = BigInt(sc.mode ?? 0);
    if (sc.name === 'openat' || sc.name === 'newfstatat' || sc.name === 'mkdir' || sc.name === 'rmdir' || sc.name === 'fchownat' || sc.name === 'fchmodat') {
      env.filename = args[sc.name === 'mkdir' || sc.name === 'rmdir' ? 0 : 1];
      env.pathname = env.filename;
      env['struct filename'] = k.entry.kernelFilename(this.userPath(sc.path));
    }
    if (sc.name === 'mkdir' || sc.name === 'rmdir') {
      const name = sc.path.split('/').filter(Boolean).pop() ?? '';
      env.name = k.kmem.kstr(name);
    }

    k.entry.sysEnter(task, nr, args);

    const ctx: RunCtx = { task, env, flags, holes: {} };
    let ran = false;
    let result: unknown;
    let walked: SyscallNode | undefined = sc.node;
    const runBody = (): Value | Promise<Value> | undefined => {
      if (ran) return undefined;
      ran = true;
      const settle = (v: unknown): Value => {
        result = v;
        const ret = this.resultValue(sc, v, open);
        ctx.ret = ret;
        if (sc.name === 'read' && v instanceof Uint8Array && v.length) user.put(ubuf, v);
        return ret;
      };
      const failed = (e: unknown): Value => {
        const err = e instanceof KernelError ? (sc.signal?.aborted && e.errno === errno.EINTR ? errno.ERESTARTSYS : e.errno) : errno.EIO;
        ctx.err = { errno: err, error: e };
        return BigInt.asUintN(64, BigInt(-err));
      };
      let r: unknown;
      try {
        r = body(task);
      } catch (e) {
        return failed(e);
      }
      if (!(r instanceof Promise)) return settle(r);
      const p = r;
      let done = false;
      p.then(
        () => (done = true),
        () => (done = true),
      );
      return microtasks(24).then(() => {
        const finish = (): Promise<Value> => p.then(settle, failed);
        if (done) return finish();
        // Still waiting: the task sleeps in schedule() inside this frame until it is woken.
        const top = task.frames[task.frames.length - 1];
        return k.sched.sleep(task, p, top).then(finish);
      });
    };
    const opHole: HoleFn = () => runBody();
    const fopHole = (which: keyof FopNames): HoleFn => (c, px) => {
      const fname = names[which];
      if (!fname) return runBody();
      const block = k.paths.get(`fop:${fname}`);
      const kids: readonly PathNode[] = block ?? [{ name: '$op', kids: [], rep: 1, chain: true }];
      const r = k.runner.callNamed(fname, c, px, kids, which === 'read' || which === 'write' ? 'value' : 'status');
      if (r === undefined) return k.runner.run(kids, c, px);
      return r;
    };
    const doWalk = (last: boolean): HoleFn => (c, px) => {
      const parts = sc.path.split('/').filter((p) => p && p !== '.');
      const dirs = last ? parts.slice(-1) : parts.slice(0, -1);
      let prefix = last ? parts.slice(0, -1).join('/') : '';
      const steps: (() => void | Promise<void>)[] = [];
      for (const part of dirs) {
        const path = prefix ? `${prefix}/${part}` : part;
        prefix = path;
        steps.push(() => {
          const known = k.vfs.known(path);
          let node: SyscallNode | undefined;
          if (last) {
            try {
              node = sc.walk ? sc.walk() : sc.node;
              walked = node;
            } catch (e) {
              c.err = { errno: e instanceof KernelError ? e.errno : 5, error: e };
              return;
            }
          }
          const d = k.vfs.dentry(path, last ? node : undefined, !last);
          if (last) {
            dentry = d;
            env.dentry = d.addr;
            env['struct dentry'] = d.addr;
            env.inode = d.inode;
            env['struct inode'] = d.inode;
          }
          const eventfs = /(^|\/)events\//.test(path);
          // The component's objects over the call's arguments while its blocks run (set and put back, not copied: every call walks).
          const saved = [env.dentry, env['struct dentry'], env.inode, env['struct inode'], env.dir];
          env.dentry = env['struct dentry'] = d.addr;
          env.inode = env['struct inode'] = d.inode;
          env.dir = d.parent?.inode ?? 0n;
          const sub: RunCtx = { ...c, env };
          const run = (): void | Promise<void> => {
            if (!last) {
              const r0 = k.runner.block('walk_perm', sub, px);
              if (r0 instanceof Promise) return r0.then(() => k.runner.block(!known && eventfs ? 'walk_miss' : 'walk_fast', sub, px));
            }
            return k.runner.block(!known && eventfs ? 'walk_miss' : 'walk_fast', sub, px);
          };
          const done = (): void => {
            [env.dentry, env['struct dentry'], env.inode, env['struct inode'], env.dir] = saved;
            if (sub.err) c.err = sub.err;
          };
          let r: void | Promise<void>;
          try {
            r = run();
          } catch (e) {
            done();
            throw e;
          }
          if (r instanceof Promise) return r.then(done, (e: unknown) => (done(), Promise.reject(e)));
          done();
        });
      }
      if (last && !dirs.length) {
        try {
          walked = sc.walk ? sc.walk() : sc.node;
        } catch (e) {
          c.err = { errno: e instanceof KernelError ? e.errno : 5, error: e };
        }
      }
      const chainSteps = (i: number): void | Promise<void> => {
        for (; i < steps.length; i++) {
          if (c.err) return;
          const r = steps[i]!();
          if (r instanceof Promise) return r.then(() => chainSteps(i + 1));
        }
      };
      return chainSteps(0) as void | Promise<void>;
    };
    /** The open's struct file on the walked dentry, and the names of its operations. */
    const fileForOpen = (): OpenState => {
      const node = walked ?? sc.node;
      const d = dentry ?? k.vfs.dentry(sc.path, node);
      const st: OpenState = { kfile: k.vfs.openFile(d, sc.flags ?? 0, this.fopsAddr(node?.fops?.names ?? tracefsFops(sc.path, k.profile)), this.allocFd(task)), names: node?.fops?.names, fdTask: task };
      k.entry.fileEnv(env, st.kfile);
      return st;
    };
    ctx.holes = {
      $op: opHole,
      '$fop.open': (c, px) => {
        // do_dentry_open has the struct file (made when the walk ended, or now for a tree without a walk).
        const st = (open ??= fileForOpen());
        Object.assign(names, DEFAULT_FOPS, tracefsFops(sc.path, k.profile) ?? {}, st.names ?? {});
        return fopHole('open')(c, px);
      },
      '$fop.read': fopHole('read'),
      '$fop.write': fopHole('write'),
      '$fop.release': fopHole('release'),
      '$fop.iterate': fopHole('iterate'),
      '$fop.poll': fopHole('poll'),
      $walk: doWalk(false),
      $last: (c, px) => {
        // mkdir/rmdir walk to the parent only (the name is looked up by filename_create / the rmdir path itself).
        if (sc.name === 'mkdir' || sc.name === 'rmdir') return;
        const r = doWalk(true)(c, px);
        // Calls without a file operation (stat, chmod...) do their work once the path is resolved;
        // an open has its struct file by then (path_openat allocated it first: vfs_open gets it).
        const after = (): Value | void | Promise<Value | void> => {
          if (c.err) return undefined;
          if (sc.name === 'openat') open ??= fileForOpen();
          return sc.name === 'newfstatat' || sc.name === 'fchmodat' || sc.name === 'fchownat' || sc.name === 'truncate' ? runBody() : undefined;
        };
        if (r instanceof Promise) return r.then(after);
        return after();
      },
    };

    const finish = (): T => {
      if (!ran && !ctx.err) {
        // The template had no place for the operation: it still happens.
        const r = runBody();
        if (r instanceof Promise) return r.then(() => finish()) as T;
      }
      this.busy.delete(task);
      const ret = ctx.err ? BigInt(-ctx.err.errno) : BigInt.asIntN(64, ctx.ret ?? 0n);
      k.entry.sysExit(task, nr, ret);
      this.bookkeep(task, sc, result, open);
      // Failed before the operation ran (the path walk): the operation fails the same way, in its own form (a rejected promise).
      if (ctx.err && !ran) return body(task);
      if (ctx.err) throw ctx.err.error;
      return result as T;
    };
    const fail = (e: unknown): never => {
      this.busy.delete(task);
      k.entry.leave(task);
      throw e;
    };
    let r: void | Promise<unknown>;
    try {
      r = deep ? k.entry.enter(task, nodes, ctx, args) : undefined;
    } catch (e) {
      return fail(e);
    }
    if (r instanceof Promise) return r.then(finish, fail) as T;
    return finish();
  }

  private baseEnv(task: Task): PathEnv {
    const k = this.k;
    return {
      task: task.addr,
      tsk: task.addr,
      p: task.addr,
      'struct task_struct': task.addr,
      'struct rq': k.sched.cpuOf(task).rq,
      'struct super_block': k.vfs.sb,
      sb: k.vfs.sb,
      'struct vfsmount': k.vfs.vfsmount,
      mnt: k.vfs.vfsmount,
      'struct mount': k.vfs.mount,
    };
  }

  /** The path as the process wrote it (relative to its cwd when that is the mount root). */
  private userPath(path: string): string {
    const rel = path.replace(/^\/+/, '');
    return rel === '' ? this.k.mountPoint : `${this.k.mountPoint}/${rel}`;
  }

  /** What the call returns to user space on success. */
  private resultValue(sc: Syscall, v: unknown, open: OpenState | undefined): bigint {
    switch (sc.name) {
      case 'read':
        return BigInt(v instanceof Uint8Array ? v.length : 0);
      case 'write':
        return BigInt(typeof v === 'number' ? v : (sc.data?.length ?? 0));
      case 'openat':
        return BigInt(open?.kfile.fd ?? 3);
      case 'getdents64': {
        if (!Array.isArray(v)) return 0n;
        let n = 0;
        for (const name of v as string[]) n += (19 + Buffer.byteLength(String(name)) + 1 + 7) & ~7;
        return BigInt(n);
      }
      case 'poll':
        return typeof v === 'number' && v ? 1n : 0n;
      default:
        return 0n;
    }
  }
}
