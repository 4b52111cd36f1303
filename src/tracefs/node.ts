/**
 * The tracefs inode tree: directories and files with the kernel's modes and
 * ownership, and per-file operations shaped like `struct file_operations`.
 */
import type { Caller } from '../kernel/caller.js';
import type { FopNames, Interruption } from '../kernel/syscall.js';
import type { Task } from '../kernel/task.js';
import { reportAdded, reportRemoved } from './tree_watch.js';

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;

/** Open flags (x86_64 values) that file operations look at. */
export const O_ACCMODE = 0o3;
export const O_RDONLY = 0o0;
export const O_WRONLY = 0o1;
export const O_RDWR = 0o2;
export const O_TRUNC = 0o1000;
export const O_APPEND = 0o2000;
export const O_NONBLOCK = 0o4000;
export const O_DIRECT = 0o40000;

/** poll(2) event bits. */
export const POLLIN = 0x1;
export const POLLPRI = 0x2;
export const POLLRDNORM = 0x40;

let nextIno = 1;

/** Mount-wide ownership defaults (the tracefs `uid=`/`gid=`/`mode=` options). */
export interface SuperBlock {
  /** The root inode's uid/gid: what nodes inherit when not chown'ed themselves. */
  uid: number;
  gid: number;
  /** The options of the last mount/remount, as /proc/mounts shows them (see ownership.ts). */
  options?: { uid?: number; gid?: number; mode?: number };
}

export abstract class Node {
  readonly ino = nextIno++;
  parent: Dir | null = null;
  /** Explicit owner set by chown/chgrp; undefined means "as the mount says". */
  uid?: number;
  gid?: number;
  mtimeMs = Date.now();
  ctimeMs = this.mtimeMs;
  atimeMs = this.mtimeMs;

  constructor(
    public name: string,
    /** Permission bits only (e.g. 0o644); the file type comes from the class. */
    public perm: number,
  ) {}

  abstract readonly type: number;

  get mode(): number {
    return this.type | this.perm;
  }

  /** Path from the tracefs root, without a leading slash ('' for the root). */
  get path(): string {
    const parts: string[] = [];
    for (let n: Node | null = this; n && n.parent; n = n.parent) parts.unshift(n.name);
    return parts.join('/');
  }
}

/** Directory operations the kernel gives a few directories (instances/). */
interface DirOps {
  mkdir?(dir: Dir, name: string, caller: Caller): void;
  rmdir?(dir: Dir, name: string, caller: Caller): void;
}

export class Dir extends Node {
  readonly type = S_IFDIR;
  readonly children = new Map<string, Node>();
  /** A link count to show instead of 2 + subdirectories (eventfs directories show 1). */
  fixedNlink?: number;

  constructor(name: string, perm = 0o755, public ops: DirOps = {}) {
    super(name, perm);
  }

  add<T extends Node>(node: T): T {
    if (this.children.has(node.name)) throw new Error(`tracefs: ${this.path}/${node.name} exists`);
    node.parent = this;
    this.children.set(node.name, node);
    reportAdded(this, node);
    return node;
  }

  /** Takes a child out; whoever caches the tree hears of it (tree_watch.ts). */
  remove(name: string): void {
    const n = this.children.get(name);
    if (!n) return;
    n.parent = null;
    this.children.delete(name);
    reportRemoved(this, n);
  }

  get(name: string): Node | undefined {
    return this.children.get(name);
  }

  dir(name: string, perm = 0o755): Dir {
    const existing = this.children.get(name);
    if (existing instanceof Dir) return existing;
    return this.add(new Dir(name, perm));
  }
}

/** One open file description: what `struct file` is to a file operation. */
export interface OpenFile {
  readonly node: File;
  readonly caller: Caller;
  /** The task that opened it (its caller's). */
  readonly task: Task;
  /** f_flags: the O_* flags given to open(2), O_TRUNC included; fcntl(F_SETFL) changes the status flags since. */
  flags: number;
  readonly readable: boolean;
  readonly writable: boolean;
  /** Per-open state, as file->private_data. */
  private?: unknown;
  /** Set by open() for stream-like files (the kernel's nonseekable_open()): lseek/pread fail with ESPIPE. */
  nonseekable?: boolean;
}

/**
 * Operations of one tracefs file, as the kernel's file_operations. Each may
 * throw a KernelError. A file without `read` (or `write`) fails that call with
 * EINVAL, as the VFS does when f_op lacks it.
 */
export interface FileOps {
  /**
   * The kernel functions these operations are (`{ open: 'tracing_open_generic_tr', read: 'seq_read' }`):
   * the emulated kernel calls them by these names, so probes and the function tracer see them.
   */
  names?: FopNames;
  open?(f: OpenFile): void | Promise<void>;
  /** Returns at most `size` bytes from file position `pos`; empty at EOF. May wait (abort = interrupted). */
  read?(f: OpenFile, size: number, pos: number, abort: Interruption): Buffer | Promise<Buffer>;
  /** Returns the number of bytes consumed. `task`: the task of the process calling write(2). */
  write?(f: OpenFile, data: Buffer, pos: number, task: Task): number | Promise<number>;
  release?(f: OpenFile): void;
  /** Current poll mask; `wake` is to be called when it may have changed. */
  poll?(f: OpenFile, wake: () => void): number;
  /**
   * What the file shows while it stays as it is, for files whose opens and
   * reads change nothing and that nothing else depends on having open
   * (a cache may then answer them without these operations); undefined
   * when it cannot be said now.
   */
  snapshot?(): FileSnapshot | undefined;
}

/** What open files keep from going (an instance): opens counted where they are answered. */
export interface OpenHold {
  refs: number;
  /** Opens answered elsewhere that hold it too (the FUSE session's cached files): set by who answers them. */
  lent?: () => number;
}

/** A file's whole content, and a cheap check that it still is what the file shows. */
export interface FileSnapshot {
  readonly text: Buffer;
  valid(): boolean;
  /** What an open of the file holds: a cache that answers opens must count them there. */
  readonly holds?: OpenHold;
}

export class File extends Node {
  readonly type = S_IFREG;

  constructor(name: string, perm: number, public fops: FileOps) {
    super(name, perm);
  }
}
