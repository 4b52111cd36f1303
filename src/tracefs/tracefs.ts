/**
 * The tracefs as a library: path operations with a caller identity, each run
 * in the caller's task through the emulated kernel's path for that system
 * call. The FUSE adapter is a thin layer over this; unit tests use it directly.
 */
import { type Caller, pidTasks, SELF, type TaskOf } from '../kernel/caller.js';
import { expectKernelError, fail, KernelError } from '../kernel/errno.js';
import type { Kernel, Syscall } from '../kernel/kernel.js';
import { TRACEFS_MAGIC } from '../kernel/vfs.js';
import type { Task } from '../kernel/task.js';
import {
  Dir,
  File,
  type Node,
  O_ACCMODE,
  O_APPEND,
  O_RDONLY,
  O_RDWR,
  O_TRUNC,
  O_WRONLY,
  type OpenFile,
  type SuperBlock,
} from './node.js';
import { captureEventsOwners, MAY_EXEC, MAY_READ, MAY_WRITE, mayAccess, ownerOf } from './ownership.js';
import { reportAttrs } from './tree_watch.js';
import type { Interruption } from '../kernel/syscall.js';

export interface Stat {
  ino: number;
  mode: number;
  uid: number;
  gid: number;
  nlink: number;
  size: number;
  atimeMs: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** What statfs(2) reports for a tracefs (simple_statfs). */
interface StatFs {
  type: number;
  bsize: number;
  namelen: number;
}


const noAbort = new AbortController().signal;

/** An open file description, as returned by open(2). */
/** The flags fcntl(F_SETFL) may change (O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME). */
const SETFL_MASK = 0o2000 | 0o4000 | 0o40000 | 0o1000000;

export class Handle {
  constructor(
    readonly file: OpenFile,
    private readonly fs: Tracefs,
  ) {}

  get node(): File {
    return this.file.node;
  }

  /** fcntl(F_SETFL): the status flags it changes (O_APPEND, O_NONBLOCK, O_DIRECT, O_NOATIME) take the values given. */
  setStatusFlags(flags: number): void {
    this.file.flags = (this.file.flags & ~SETFL_MASK) | (flags & SETFL_MASK);
  }

  read(size: number, pos: number, abort: Interruption = noAbort): Promise<Buffer> {
    return this.fs.call(this.file.caller, { name: 'read', path: this.node.path, count: size, pos, file: this.file, node: this.node, signal: abort }, async () => {
      const { fops } = this.node;
      if (!this.file.readable) fail('EBADF');
      if (!fops.read) fail('EINVAL');
      return fops.read(this.file, size, pos, abort);
    });
  }

  /** write(2) by `caller` (the opener when not given). */
  write(data: Buffer, pos: number, caller: Caller = this.file.caller): Promise<number> {
    const { fops } = this.node;
    // write(2) runs in the task that makes it, whoever opened the file (a shell opens `> file` before its child writes).
    return this.fs.call(caller, { name: 'write', path: this.node.path, count: data.length, data, pos, file: this.file, node: this.node }, async (task) => {
      if (!this.file.writable) fail('EBADF');
      if (!fops.write) fail('EINVAL');
      return fops.write(this.file, data, pos, task);
    });
  }

  /** The poll mask now; `wake` is called when it may change. Files without poll are always ready. */
  poll(wake: () => void): number {
    const { fops } = this.node;
    if (!fops.poll) return 0x1 | 0x4 | 0x40 | 0x100;
    return this.fs.call(this.file.caller, { name: 'poll', path: this.node.path, file: this.file, node: this.node }, () => fops.poll!(this.file, wake));
  }

  /**
   * The last close: in the task that opened the file, without mapping the
   * caller again. FUSE sends RELEASE asynchronously, so what the machine
   * reported meanwhile (another process's calls, already written to the host
   * events) happened after this close on a real kernel: it is not run first.
   */
  release(): void {
    this.fs.kernel.syscall(this.file.task, { name: 'close', path: this.node.path, file: this.file, node: this.node }, () => this.node.fops.release?.(this.file));
  }
}

export class Tracefs {
  constructor(
    readonly root: Dir,
    readonly kernel: Kernel,
    readonly sb: SuperBlock = { uid: 0, gid: 0 },
    /** Which task a request runs in (the daemon's host driver mirrors the machine's processes). */
    readonly taskOf: TaskOf = pidTasks(kernel),
  ) {
    captureEventsOwners(root, sb);
  }

  /** Runs `body` inside the kernel path of a system call made by `caller`, in its task. */
  call<T>(caller: Caller, sc: Syscall, body: (task: Task) => T): T {
    return this.kernel.syscall(this.taskOf(caller), sc, body);
  }

  /** access(2): ENOENT/EACCES as the path walk and the node's permission bits say. */
  access(path: string, mask: number, caller: Caller = SELF): void {
    this.call(caller, { name: 'newfstatat', path, walk: () => this.lookup(path, caller) }, () => {
      const node = this.lookup(path, caller);
      if (mask && !mayAccess(node, this.sb, caller, mask & (MAY_READ | MAY_WRITE | MAY_EXEC))) fail('EACCES');
    });
  }

  /**
   * truncate(2) on a path: tracefs has no truncate of its own (simple_setattr),
   * so it succeeds and changes nothing. Truncation that clears a buffer is an
   * open with O_TRUNC, which the file's open sees.
   */
  truncate(path: string, caller: Caller = SELF): void {
    this.call(caller, { name: 'truncate', path, walk: () => this.lookup(path, caller) }, () => {
      const node = this.lookup(path, caller);
      if (node instanceof Dir) fail('EISDIR');
      if (!mayAccess(node, this.sb, caller, MAY_WRITE)) fail('EACCES');
      node.mtimeMs = node.ctimeMs = Date.now();
      reportAttrs(node);
    });
  }

  /** utimensat(2): times only change, as simple_setattr does. */
  utimens(path: string, atimeMs: number, mtimeMs: number, caller: Caller = SELF): void {
    this.call(caller, { name: 'fchmodat', path, walk: () => this.lookup(path, caller) }, () => {
      const node = this.lookup(path, caller);
      node.atimeMs = atimeMs;
      node.mtimeMs = mtimeMs;
      node.ctimeMs = Date.now();
      reportAttrs(node);
    });
  }

  statfs(): StatFs {
    return { type: TRACEFS_MAGIC, bsize: 4096, namelen: 255 };
  }

  /** The node at `path`, if any: no permission checks, no system call (for the FUSE adapter's bookkeeping). */
  nodeAt(path: string): Node | undefined {
    try {
      return this.walk(path);
    } catch (e) {
      expectKernelError(e);
      return undefined;
    }
  }

  /** Path walk, as the VFS does it: search permission on each directory. */
  lookup(path: string, caller: Caller = SELF): Node {
    return this.walk(path, (dir) => {
      if (!mayAccess(dir, this.sb, caller, MAY_EXEC)) fail('EACCES');
    });
  }

  /** Walks `path` from the root (ENOTDIR, ENOENT); `search` checks each directory passed through. */
  private walk(path: string, search?: (dir: Dir) => void): Node {
    let node: Node = this.root;
    for (const part of split(path)) {
      if (!(node instanceof Dir)) fail('ENOTDIR');
      search?.(node);
      if (part === '.') continue;
      const next: Node | undefined = part === '..' ? (node.parent ?? node) : node.get(part);
      if (!next) fail('ENOENT');
      node = next;
    }
    return node;
  }


  stat(path: string, caller: Caller = SELF): Stat {
    return this.call(caller, { name: 'newfstatat', path, walk: () => this.lookup(path, caller) }, () => this.statNode(this.lookup(path, caller)));
  }

  statNode(node: Node): Stat {
    const { uid, gid } = ownerOf(node, this.sb);
    let nlink = 1;
    if (node instanceof Dir) {
      nlink = 2;
      if (node.fixedNlink !== undefined) nlink = node.fixedNlink;
      else for (const c of node.children.values()) if (c instanceof Dir) nlink++;
    }
    return { ino: node.ino, mode: node.mode, uid, gid, nlink, size: 0, atimeMs: node.atimeMs, mtimeMs: node.mtimeMs, ctimeMs: node.ctimeMs };
  }

  readdir(path: string, caller: Caller = SELF): string[] {
    return this.call(caller, { name: 'getdents64', path, walk: () => this.lookup(path, caller) }, () => {
      const node = this.lookup(path, caller);
      if (!(node instanceof Dir)) fail('ENOTDIR');
      if (!mayAccess(node, this.sb, caller, MAY_READ)) fail('EACCES');
      return [...node.children.keys()];
    });
  }

  mkdir(path: string, caller: Caller = SELF): void {
    this.call(caller, { name: 'mkdir', path }, () => {
      const { parent, name } = this.parentOf(path, caller);
      if (parent.get(name)) fail('EEXIST');
      if (!mayAccess(parent, this.sb, caller, MAY_WRITE | MAY_EXEC)) fail('EACCES');
      if (!parent.ops.mkdir) fail('EPERM');
      parent.ops.mkdir(parent, name, caller);
      captureEventsOwners(this.root, this.sb);
    });
  }

  rmdir(path: string, caller: Caller = SELF): void {
    this.call(caller, { name: 'rmdir', path }, () => {
      const { parent, name } = this.parentOf(path, caller);
      const node = parent.get(name);
      if (!node) fail('ENOENT');
      if (!(node instanceof Dir)) fail('ENOTDIR');
      if (!mayAccess(parent, this.sb, caller, MAY_WRITE | MAY_EXEC)) fail('EACCES');
      if (!parent.ops.rmdir) fail('EPERM');
      parent.ops.rmdir(parent, name, caller);
    });
  }

  chown(path: string, uid: number | undefined, gid: number | undefined, caller: Caller = SELF): void {
    this.call(caller, { name: 'fchownat', path, walk: () => this.lookup(path, caller) }, () => {
      const node = this.lookup(path, caller);
      if (caller.uid !== 0) fail('EPERM');
      if (uid !== undefined && uid !== -1) node.uid = uid;
      if (gid !== undefined && gid !== -1) node.gid = gid;
      node.ctimeMs = Date.now();
      // Nodes below that never were chown'ed show an owner inherited from above.
      reportAttrs(node, node instanceof Dir);
    });
  }

  chmod(path: string, mode: number, caller: Caller = SELF): void {
    this.call(caller, { name: 'fchmodat', path, walk: () => this.lookup(path, caller) }, () => {
      const node = this.lookup(path, caller);
      if (caller.uid !== 0 && caller.uid !== ownerOf(node, this.sb).uid) fail('EPERM');
      node.perm = mode & 0o7777;
      node.ctimeMs = Date.now();
      reportAttrs(node);
    });
  }

  /** open(2): permission checks, then the file's own open (which sees O_TRUNC). */
  open(path: string, flags: number, caller: Caller = SELF): Promise<Handle> {
    return this.call(caller, { name: 'openat', path, flags, walk: () => this.lookup(path, caller) }, async (task) => {
      const node = this.lookup(path, caller);
      const acc = flags & O_ACCMODE;
      const readable = acc === O_RDONLY || acc === O_RDWR;
      const writable = acc === O_WRONLY || acc === O_RDWR;
      // Directories are read with readdir, never through a file handle.
      if (!(node instanceof File)) fail('EISDIR');
      const file = node;
      const mask = (readable ? MAY_READ : 0) | (writable ? MAY_WRITE : 0);
      if (!mayAccess(file, this.sb, caller, mask)) fail('EACCES');
      const of: OpenFile = { node: file, caller, task, flags, readable, writable };
      await file.fops.open?.(of);
      return new Handle(of, this);
    });
  }

  /** Reads a whole file as `cat` would (not for files that block when empty). */
  async readFile(path: string, caller: Caller = SELF): Promise<string> {
    const h = await this.open(path, O_RDONLY, caller);
    try {
      const chunks: Buffer[] = [];
      let pos = 0;
      for (;;) {
        const b = await h.read(65536, pos);
        if (b.length === 0) break;
        chunks.push(b);
        pos += b.length;
      }
      return Buffer.concat(chunks).toString('latin1');
    } finally {
      h.release();
    }
  }

  /** `echo data > path` (or `>>` with append): one open, one write, close. */
  async writeFile(path: string, data: string | Buffer, opts: { append?: boolean } = {}, caller: Caller = SELF): Promise<number> {
    const flags = O_WRONLY | (opts.append ? O_APPEND : O_TRUNC);
    const h = await this.open(path, flags, caller);
    try {
      const buf = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
      return await h.write(buf, 0);
    } finally {
      h.release();
    }
  }

  private parentOf(path: string, caller: Caller): { parent: Dir; name: string } {
    const parts = split(path);
    const name = parts.pop();
    if (!name) fail('EEXIST');
    const parent = this.lookup(parts.join('/'), caller);
    if (!(parent instanceof Dir)) fail('ENOTDIR');
    if (!mayAccess(parent, this.sb, caller, MAY_EXEC)) fail('EACCES');
    return { parent, name };
  }
}

function split(path: string): string[] {
  return path.split('/').filter((p) => p.length > 0);
}

export { KernelError };
