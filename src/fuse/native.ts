/**
 * The patched fuse-native (patches/fuse-native+2.2.6.patch), typed. Loaded
 * lazily so that code which never mounts does not need the native build.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** One request from the kernel, with the calling process (fuse_get_context()). */
export interface FuseRequest {
  readonly op: string;
  readonly pid: number;
  readonly uid: number;
  readonly gid: number;
  /** Process-unique id of this request. */
  readonly id: number;
  /** The FUSE opcode (fuse_in_header.opcode, e.g. FUSE_LOOKUP = 1). */
  readonly opcode: number;
  /** The node id it is about (fuse_in_header.nodeid): for LOOKUP, MKDIR, RMDIR the parent directory's. */
  readonly nodeid: number;
  /** Set once the kernel interrupted the request (its caller got a signal). */
  readonly interrupted: boolean;
  /** Aborts when the kernel interrupts the request. */
  readonly signal: AbortSignal;
  /** read, write: the open file's flags now (an O_NONBLOCK that fcntl set after open included). */
  readonly fileFlags?: number;
}

export interface FuseStat {
  mode: number;
  uid: number;
  gid: number;
  size: number;
  nlink: number;
  ino: number;
  blksize?: number;
  blocks?: number;
  /** Milliseconds since the epoch. */
  atime: number;
  mtime: number;
  ctime: number;
}

export interface FuseStatfs {
  bsize: number;
  frsize: number;
  blocks: number;
  bfree: number;
  bavail: number;
  files: number;
  ffree: number;
  favail: number;
  fsid: number;
  flag: number;
  namemax: number;
}

/** Result callback: 0 or a negative errno first (read/write: bytes, or a negative errno). */
type Cb<T extends unknown[] = []> = (err: number, ...res: T) => void;

/** The operations the adapter implements (fuse-native's names and argument order, plus the request). */
export interface FuseOps {
  init?(cb: Cb): void;
  getattr(path: string, cb: Cb<[FuseStat?]>, req: FuseRequest): void;
  fgetattr(path: string, fd: number, cb: Cb<[FuseStat?]>, req: FuseRequest): void;
  readdir(path: string, cb: Cb<[string[]?, FuseStat[]?]>, req: FuseRequest): void;
  access(path: string, mode: number, cb: Cb, req: FuseRequest): void;
  /** cb(0, fh, openFlags) with openFlags from DIRECT_IO | KEEP_CACHE | NONSEEKABLE. */
  open(path: string, flags: number, cb: Cb<[number?, number?]>, req: FuseRequest): void;
  create(path: string, mode: number, cb: Cb<[number?]>, req: FuseRequest): void;
  read(path: string, fd: number, buf: Buffer, len: number, pos: number, cb: (bytesOrErr: number) => void, req: FuseRequest): void;
  write(path: string, fd: number, buf: Buffer, len: number, pos: number, cb: (bytesOrErr: number) => void, req: FuseRequest): void;
  release(path: string, fd: number, cb: Cb, req: FuseRequest): void;
  truncate(path: string, size: number, cb: Cb, req: FuseRequest): void;
  ftruncate(path: string, fd: number, size: number, cb: Cb, req: FuseRequest): void;
  mkdir(path: string, mode: number, cb: Cb, req: FuseRequest): void;
  rmdir(path: string, cb: Cb, req: FuseRequest): void;
  unlink(path: string, cb: Cb, req: FuseRequest): void;
  rename(src: string, dest: string, cb: Cb, req: FuseRequest): void;
  link(src: string, dest: string, cb: Cb, req: FuseRequest): void;
  symlink(src: string, dest: string, cb: Cb, req: FuseRequest): void;
  mknod(path: string, mode: number, dev: number, cb: Cb, req: FuseRequest): void;
  chown(path: string, uid: number, gid: number, cb: Cb, req: FuseRequest): void;
  chmod(path: string, mode: number, cb: Cb, req: FuseRequest): void;
  utimens(path: string, atime: number, mtime: number, cb: Cb, req: FuseRequest): void;
  statfs(path: string, cb: Cb<[FuseStatfs?]>, req: FuseRequest): void;
  poll(path: string, fd: number, cb: Cb<[number?]>, req: FuseRequest): void;
}

export interface FuseOptions {
  /** Mount options passed through to libfuse as given (`-o a,b,c`). */
  options?: string[];
  /** Interruptible requests (libfuse `intr`); on unless false. */
  interrupts?: boolean;
  mkdir?: boolean;
  debug?: boolean;
  /** Called when the FUSE session ends: unmounted, by us or by anyone else. */
  onSessionEnd?: () => void;
}

export interface FuseInstance {
  readonly mnt: string;
  mount(cb: (err: Error | null) => void): void;
  unmount(cb: (err: Error | null) => void): void;
  /** Wakes the pollers of open file `fd`; false if nobody waits. */
  notifyPoll(fd: number): boolean;
  forgetPoll(fd: number): void;
  /** Queues fuse_lowlevel_notify_inval_entry(parent, name), sent by the notifier thread. */
  invalEntry(parent: number, name: string): void;
  /** Sends inval_inode(ino, -1, 0) at once from this thread (it takes no lock); 0 or -errno. */
  invalInodeNow(ino: number): number;
  /** Resolves once every notice queued before it has been sent. */
  flushNotices(): Promise<void>;
  /** (request id, node id) of LOOKUP replies sent since the last call, flat. */
  takeLookups(): number[];
}

/** FUSE opcodes (fuse_kernel.h) the adapter looks at. */
export const FUSE_LOOKUP = 1;
export const FUSE_MKDIR = 9;
/** The root directory's node id. */
export const FUSE_ROOT_ID = 1;

export interface FuseModule {
  new (mnt: string, ops: Partial<FuseOps>, opts?: FuseOptions): FuseInstance;
  unmount(mnt: string, cb: (err: Error | null) => void): void;
  readonly DIRECT_IO: number;
  readonly KEEP_CACHE: number;
  readonly NONSEEKABLE: number;
}

let cached: FuseModule | undefined;

/** Where fuse-native's patched build is expected. */
export function nativeBuildPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('fuse-native/package.json')), 'build', 'Release', 'fuse.node');
}

/** The patched fuse-native; throws with set-up advice when it is not built. */
export function loadFuse(): FuseModule {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  let build: string;
  try {
    build = nativeBuildPath();
  } catch {
    throw new Error('fuse-native is not installed; run: sh scripts/setup.sh');
  }
  if (!existsSync(build)) throw new Error(`fuse-native is not built (${build} missing); run: sh scripts/setup.sh`);
  const mod = require('fuse-native') as FuseModule & { Request?: unknown };
  if (typeof mod.prototype.notifyPoll !== 'function' || typeof mod.prototype.invalEntry !== 'function' || !mod.Request) {
    throw new Error('fuse-native is not the patched build; run: sh scripts/setup.sh');
  }
  cached = mod;
  return mod;
}
