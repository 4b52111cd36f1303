/**
 * The FUSE session (native/fuse/tracefs_fuse.c): the kernel's requests, read
 * from /dev/fuse on this thread through libfuse's low-level API, handed to a
 * FuseHandler one by one in the kernel's order; the handler answers each,
 * now or later, through the session's replies. Node ids are the handler's
 * business (the kernel names inodes by the ids lookups gave it).
 *
 * The native side passes a request's numbers in a shared Float64Array
 * (ARG_*) and takes attributes the same way (ATTR_*), so that no JS object
 * is made per request but the request itself.
 */
import type { Caller } from '../kernel/caller.js';
import type { Interruption } from '../kernel/syscall.js';
import { errno } from '../kernel/errno.js';
import { nativeAddon } from '../host/native_addon.js';
import { O_ACCMODE, O_RDONLY, O_TRUNC } from '../tracefs/node.js';
import type { Stat } from '../tracefs/tracefs.js';
import type { FileCacheSink, NativeGate } from './file_cache.js';
import { CACHE_TIMEOUT_S } from './kernel_cache.js';
import { RequestStats } from './request_stats.js';

/** Request kinds, as the native side numbers them. */
const enum Op {
  Lookup = 1,
  Forget,
  Getattr,
  Setattr,
  Opendir,
  Readdir,
  Releasedir,
  Open,
  Read,
  Write,
  Release,
  Mkdir,
  Rmdir,
  Access,
  Statfs,
  Poll,
  Interrupt,
}

/** Request kinds by number, as reported (request_stats.ts). */
const OP_NAMES = ['', 'lookup', 'forget', 'getattr', 'setattr', 'opendir', 'readdir', 'releasedir', 'open', 'read', 'write', 'release', 'mkdir', 'rmdir', 'access', 'statfs', 'poll', 'interrupt'];

const enum Arg {
  Slot,
  Ino,
  Pid,
  Uid,
  Gid,
  Fh,
  Flags,
  Size,
  Off,
  Mode,
  Set,
  AttrUid,
  AttrGid,
  Atime,
  Mtime,
  Interrupted,
  /** Set here: which opens of cached files the native side may answer (NativeGate). */
  Gate,
  /** Set here, per emulated CPU: the pid whose opens the native side answers under NativeGate.Current. */
  Current,
  /** 64 slots for Current, as tracefs_fuse.c has them (A_NARGS). */
  Count = Current + 64,
}

/** Emulated CPUs whose running task the native side can be told (A_CURRENT in tracefs_fuse.c). */
const CURRENT_SLOTS = Arg.Count - Arg.Current;

const enum Attr {
  Ino,
  Mode,
  Nlink,
  Uid,
  Gid,
  Size,
  Atime,
  Mtime,
  Ctime,
  NodeId,
  EntryTimeout,
  AttrTimeout,
  Count,
}

/** setattr's to_set bits (fuse_lowlevel.h). */
const SET_ATTR = { MODE: 1, UID: 2, GID: 4, SIZE: 8, ATIME: 16, MTIME: 32, ATIME_NOW: 128, MTIME_NOW: 256 } as const;

/** What stat shows of a node. */
export interface FuseAttr {
  ino: number;
  mode: number;
  nlink: number;
  uid: number;
  gid: number;
  size: number;
  /** Milliseconds since the epoch. */
  atimeMs: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** What setattr asks to change (absent: unchanged). */
export interface SetAttr {
  mode?: number;
  uid?: number;
  gid?: number;
  size?: number;
  /** Milliseconds since the epoch (now, for *_NOW). */
  atimeMs?: number;
  mtimeMs?: number;
}

/** One request from the kernel, with the process that made it; its interruption is what a waiting operation listens to. */
export class FuseRequest implements Interruption {
  private listeners?: (() => void)[];
  /** Set once the kernel interrupted the request (its caller got a signal). */
  interrupted: boolean;
  /** Answered: its slot may already serve another request, so nothing more goes to it. */
  answered = false;
  /** The process that made it (fuse_req_ctx()). */
  readonly caller: Caller;

  constructor(
    /** Where its answer goes. */
    readonly slot: number,
    pid: number,
    uid: number,
    gid: number,
    interrupted = false,
    /** It may change state (see mutates()): what may be cached is checked once it is done. */
    readonly mutating = false,
  ) {
    this.caller = { pid, uid, gid };
    this.interrupted = interrupted;
  }

  /** Interruption: whether the caller got a signal. */
  get aborted(): boolean {
    return this.interrupted;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }

  /** The kernel interrupted it: whoever waits on it hears of it (once). */
  interrupt(): void {
    if (this.interrupted) return;
    this.interrupted = true;
    const ls = this.listeners;
    this.listeners = undefined;
    if (ls) for (const l of ls) l();
  }
}

/** What the kernel asks; every method answers its request through the session's replies (or leaves it to wait). */
export interface FuseHandler {
  lookup(req: FuseRequest, parent: number, name: string): void;
  /** The kernel dropped `n` references to each node id (pairs: id, count). */
  forget(pairs: Float64Array, n: number): void;
  getattr(req: FuseRequest, id: number, fh: number | undefined): void;
  setattr(req: FuseRequest, id: number, fh: number | undefined, set: SetAttr): void;
  opendir(req: FuseRequest, id: number): void;
  readdir(req: FuseRequest, id: number, fh: number, size: number, offset: number): void;
  releasedir(req: FuseRequest, id: number, fh: number): void;
  open(req: FuseRequest, id: number, flags: number): void;
  read(req: FuseRequest, id: number, fh: number, size: number, offset: number, fileFlags: number): void;
  write(req: FuseRequest, id: number, fh: number, data: Buffer, offset: number, fileFlags: number): void;
  release(req: FuseRequest, id: number, fh: number): void;
  mkdir(req: FuseRequest, parent: number, name: string, mode: number): void;
  rmdir(req: FuseRequest, parent: number, name: string): void;
  access(req: FuseRequest, id: number, mask: number): void;
  statfs(req: FuseRequest): void;
  poll(req: FuseRequest, id: number, fh: number): void;
  /** The kernel interrupted a request that was given to the handler and is not answered yet. */
  interrupted(req: FuseRequest): void;
  /** After each request given to the handler; `mutating`: it may have changed state (a write, setattr, mkdir, rmdir; an open or release for writing or with O_TRUNC). */
  handled?(mutating: boolean): void;
}

/** How the handler answers. A reply to an answered slot is ignored. */
export interface FuseReplies {
  err(req: FuseRequest, errno: number): void;
  entry(req: FuseRequest, nodeId: number, attr: FuseAttr, timeoutS: number): void;
  attr(req: FuseRequest, attr: FuseAttr, timeoutS: number): void;
  /** false: the caller gave up meanwhile (the kernel will send no release). */
  /** `cacheDir`: a directory whose listing the kernel may keep from one opendir to the next (until invalInode with contents). */
  open(req: FuseRequest, fh: number, opts: { directIo?: boolean; keepCache?: boolean; nonseekable?: boolean; cacheDir?: boolean }): boolean;
  data(req: FuseRequest, data: Buffer, length: number): void;
  written(req: FuseRequest, count: number): void;
  poll(req: FuseRequest, mask: number): void;
  statfs(req: FuseRequest, bsize: number, namemax: number): void;
  /** Directory entries from `offset` (an index) that fit in `size` bytes. */
  dir(req: FuseRequest, names: readonly string[], inos: Float64Array, modes: Int32Array, offset: number, size: number): void;
}

/** What the kernel must forget, and waking pollers. */
export interface FuseNotices {
  /** Wakes the pollers of an open file; false if none wait. */
  notifyPoll(fh: number): boolean;
  forgetPoll(fh: number): void;
  /** Queues inval_entry(parent, name) for the notifier thread; returns its number. */
  invalEntry(parent: number, name: string): number;
  /** Queues notify_delete(parent, child, name) likewise: the entry goes, and the child's inode once unused. */
  notifyDelete(parent: number, child: number, name: string): number;
  /** Sends inval_inode(id) at once (it takes no lock); with `contents`, what the kernel cached of them (a directory's listing) goes too; 0 or -errno. */
  invalInode(id: number, contents?: boolean): number;
  /** Resolves once every inval_entry queued so far has been sent. */
  flushNotices(): Promise<void>;
}

interface NativeSession {
  replyErr(slot: number, errno: number): void;
  replyEntry(slot: number): void;
  replyAttr(slot: number): void;
  replyOpen(slot: number, fh: number, directIo: number, keepCache: number, nonseekable: number, cacheDir: number): boolean;
  replyData(slot: number, data: Buffer, length: number): void;
  replyWrite(slot: number, count: number): void;
  replyPoll(slot: number, mask: number): void;
  replyStatfs(slot: number, bsize: number, namemax: number): void;
  replyDir(slot: number, names: readonly string[], inos: Float64Array, modes: Int32Array, offset: number, size: number): void;
  notifyPoll(fh: number): boolean;
  forgetPoll(fh: number): void;
  invalEntry(parent: number, name: string): number;
  notifyDelete(parent: number, child: number, name: string): number;
  invalInode(id: number, pages: number): number;
  unmount(): void;
  close(): void;
  cacheFile(id: number, text: Buffer, group: number): void;
  uncache(id: number): void;
  openCount(group: number): number;
  nativeCounts(): number[];
}

type NativeSessionClass = new (
  mountpoint: string,
  options: string,
  dispatch: (op: number, name: string | undefined, data: Buffer | undefined) => void,
  onEnd: () => void,
  onNotices: (sent: number) => void,
  args: Float64Array,
  attrs: Float64Array,
  forgets: Float64Array,
) => NativeSession;

const EMPTY = Buffer.alloc(0);

/** Requests that may change state (file_cache.ts checks its entries after them); an open or release only with write access or O_TRUNC. */
const MUTATING = new Set<number>([Op.Setattr, Op.Write, Op.Mkdir, Op.Rmdir]);

function mutates(op: number, flags: number): boolean {
  if (op === Op.Open || op === Op.Release) return (flags & O_ACCMODE) !== O_RDONLY || (flags & O_TRUNC) !== 0;
  return MUTATING.has(op);
}

/** The requests the native side answers from cached files, as nativeCounts() orders them. */
const NATIVE_KINDS = ['open', 'read', 'release', 'getattr', 'passthrough'] as const;

/** A mounted FUSE session serving `handler`. */
export class FuseSession implements FuseReplies, FuseNotices, FileCacheSink {
  private readonly native: NativeSession;
  private readonly args = new Float64Array(Arg.Count);
  private readonly attrs = new Float64Array(Attr.Count);
  private readonly forgets = new Float64Array(512);
  /** Requests handed out and not answered yet that may be interrupted, by slot. */
  private readonly waiting = new Map<number, FuseRequest>();
  private queued = 0;
  private sent = 0;
  private readonly flushes: { upTo: number; done: () => void }[] = [];
  /** When each pending slot's request arrived, and its kind (for `stats`). */
  private readonly arrived: number[] = [];
  private readonly kindOf: string[] = [];
  /** What the requests cost, by kind. */
  readonly stats = new RequestStats();
  ended = false;

  /**
   * Mounts at `mountpoint` with the given mount options (fuse_mount: mount(2)
   * as root, fusermount otherwise) and serves requests from now on.
   */
  constructor(
    mountpoint: string,
    options: readonly string[],
    private readonly handler: FuseHandler,
    private readonly onEnd: () => void,
  ) {
    const Native = nativeAddon().Session as NativeSessionClass;
    this.native = new Native(
      mountpoint,
      options.join(','),
      (op, name, data) => {
        const mutating = mutates(op, this.args[Arg.Flags]!);
        this.dispatch(op, name, data, mutating);
        this.handler.handled?.(mutating);
      },
      () => this.end(),
      (sent) => this.noticesSent(sent),
      this.args,
      this.attrs,
      this.forgets,
    );
  }

  private dispatch(op: number, name: string | undefined, data: Buffer | undefined, mutating: boolean): void {
    const a = this.args;
    if (op === Op.Interrupt) {
      const req = this.waiting.get(a[Arg.Slot]!);
      if (req) {
        req.interrupt();
        this.handler.interrupted(req);
      }
      return;
    }
    if (op === Op.Forget) {
      this.handler.forget(this.forgets, a[Arg.Size]!);
      return;
    }
    const req = new FuseRequest(a[Arg.Slot]!, a[Arg.Pid]!, a[Arg.Uid]!, a[Arg.Gid]!, a[Arg.Interrupted] === 1, mutating);
    this.arrived[req.slot] = performance.now();
    this.kindOf[req.slot] = OP_NAMES[op] ?? String(op);
    const h = this.handler;
    const ino = a[Arg.Ino]!;
    const fh = a[Arg.Fh]!;
    switch (op) {
      case Op.Lookup:
        return h.lookup(req, ino, name!);
      case Op.Getattr:
        return h.getattr(req, ino, fh < 0 ? undefined : fh);
      case Op.Setattr:
        return h.setattr(req, ino, fh < 0 ? undefined : fh, this.setAttr());
      case Op.Opendir:
        return h.opendir(req, ino);
      case Op.Readdir:
        return h.readdir(req, ino, fh, a[Arg.Size]!, a[Arg.Off]!);
      case Op.Releasedir:
        return h.releasedir(req, ino, fh);
      case Op.Open:
        return this.mayWait(req, () => h.open(req, ino, a[Arg.Flags]!));
      case Op.Read:
        return this.mayWait(req, () => h.read(req, ino, fh, a[Arg.Size]!, a[Arg.Off]!, a[Arg.Flags]!));
      case Op.Write:
        return this.mayWait(req, () => h.write(req, ino, fh, data ?? EMPTY, a[Arg.Off]!, a[Arg.Flags]!));
      case Op.Release:
        return h.release(req, ino, fh);
      case Op.Mkdir:
        return h.mkdir(req, ino, name!, a[Arg.Mode]!);
      case Op.Rmdir:
        return h.rmdir(req, ino, name!);
      case Op.Access:
        return h.access(req, ino, a[Arg.Mode]!);
      case Op.Statfs:
        return h.statfs(req);
      case Op.Poll:
        return h.poll(req, ino, fh);
      default:
        this.native.replyErr(req.slot, errno.ENOSYS);
    }
  }

  /** An interruptible request: known by its slot until answered. */
  private mayWait(req: FuseRequest, run: () => void): void {
    this.waiting.set(req.slot, req);
    run();
  }

  private setAttr(): SetAttr {
    const a = this.args;
    const set = a[Arg.Set]!;
    const now = Date.now();
    const out: SetAttr = {};
    if (set & SET_ATTR.MODE) out.mode = a[Arg.Mode]!;
    if (set & SET_ATTR.UID) out.uid = a[Arg.AttrUid]!;
    if (set & SET_ATTR.GID) out.gid = a[Arg.AttrGid]!;
    if (set & SET_ATTR.SIZE) out.size = a[Arg.Size]!;
    if (set & SET_ATTR.ATIME) out.atimeMs = set & SET_ATTR.ATIME_NOW ? now : a[Arg.Atime]!;
    if (set & SET_ATTR.MTIME) out.mtimeMs = set & SET_ATTR.MTIME_NOW ? now : a[Arg.Mtime]!;
    return out;
  }

  /** The slot a reply goes to, once: -1 (ignored by the native side) for a request already answered. */
  private answered(req: FuseRequest): number {
    if (req.answered) return -1;
    req.answered = true;
    this.waiting.delete(req.slot);
    this.stats.record(this.kindOf[req.slot]!, performance.now() - this.arrived[req.slot]!);
    return req.slot;
  }

  private putAttr(attr: FuseAttr, timeoutS: number): void {
    const t = this.attrs;
    t[Attr.Ino] = attr.ino;
    t[Attr.Mode] = attr.mode;
    t[Attr.Nlink] = attr.nlink;
    t[Attr.Uid] = attr.uid;
    t[Attr.Gid] = attr.gid;
    t[Attr.Size] = attr.size;
    t[Attr.Atime] = attr.atimeMs;
    t[Attr.Mtime] = attr.mtimeMs;
    t[Attr.Ctime] = attr.ctimeMs;
    t[Attr.EntryTimeout] = timeoutS;
    t[Attr.AttrTimeout] = timeoutS;
  }

  // --- FuseReplies

  err(req: FuseRequest, errno: number): void {
    this.native.replyErr(this.answered(req), errno);
  }

  entry(req: FuseRequest, nodeId: number, attr: FuseAttr, timeoutS: number): void {
    this.putAttr(attr, timeoutS);
    this.attrs[Attr.NodeId] = nodeId;
    this.native.replyEntry(this.answered(req));
  }

  attr(req: FuseRequest, attr: FuseAttr, timeoutS: number): void {
    this.putAttr(attr, timeoutS);
    this.native.replyAttr(this.answered(req));
  }

  open(req: FuseRequest, fh: number, opts: { directIo?: boolean; keepCache?: boolean; nonseekable?: boolean; cacheDir?: boolean }): boolean {
    if (req.answered) return false;
    return this.native.replyOpen(this.answered(req), fh, opts.directIo ? 1 : 0, opts.keepCache ? 1 : 0, opts.nonseekable ? 1 : 0, opts.cacheDir ? 1 : 0);
  }

  data(req: FuseRequest, data: Buffer, length: number): void {
    this.native.replyData(this.answered(req), data, length);
  }

  written(req: FuseRequest, count: number): void {
    this.native.replyWrite(this.answered(req), count);
  }

  poll(req: FuseRequest, mask: number): void {
    this.native.replyPoll(this.answered(req), mask);
  }

  statfs(req: FuseRequest, bsize: number, namemax: number): void {
    this.native.replyStatfs(this.answered(req), bsize, namemax);
  }

  dir(req: FuseRequest, names: readonly string[], inos: Float64Array, modes: Int32Array, offset: number, size: number): void {
    this.native.replyDir(this.answered(req), names, inos, modes, offset, size);
  }

  // --- FileCacheSink

  cacheFile(id: number, text: Buffer, attr: Stat, group: number): void {
    this.putAttr(attr, CACHE_TIMEOUT_S);
    this.native.cacheFile(id, text, group);
  }

  openCount(group: number): number {
    return this.native.openCount(group);
  }

  uncache(id: number): void {
    this.native.uncache(id);
  }

  setGate(gate: NativeGate): void {
    this.args[Arg.Gate] = gate;
  }

  setCurrent(cpu: number, pid: number): void {
    if (cpu < CURRENT_SLOTS) this.args[Arg.Current + cpu] = pid;
  }

  /** Requests the native side answered from cached files, by kind. */
  nativeAnswered(): Record<string, number> {
    const n = this.native.nativeCounts();
    return Object.fromEntries(NATIVE_KINDS.map((k, i) => [k, n[i] ?? 0]));
  }

  // --- FuseNotices

  notifyPoll(fh: number): boolean {
    return !this.ended && this.native.notifyPoll(fh);
  }

  forgetPoll(fh: number): void {
    this.native.forgetPoll(fh);
  }

  invalEntry(parent: number, name: string): number {
    if (this.ended) return -1;
    this.queued = this.native.invalEntry(parent, name);
    return this.queued;
  }

  notifyDelete(parent: number, child: number, name: string): number {
    if (this.ended) return -1;
    this.queued = this.native.notifyDelete(parent, child, name);
    return this.queued;
  }

  invalInode(id: number, contents = false): number {
    return this.ended ? -errno.ENOTCONN : this.native.invalInode(id, contents ? 1 : 0);
  }

  flushNotices(): Promise<void> {
    if (this.ended || this.sent >= this.queued) return Promise.resolve();
    const upTo = this.queued;
    return new Promise((done) => this.flushes.push({ upTo, done }));
  }

  private noticesSent(sent: number): void {
    this.sent = sent;
    for (let i = 0; i < this.flushes.length; ) {
      const f = this.flushes[i]!;
      if (f.upTo <= sent) {
        this.flushes.splice(i, 1);
        f.done();
      } else i++;
    }
  }

  // --- the mount

  /** Detaches the mount lazily; the session ends once the kernel lets go of the last open file. */
  unmount(): void {
    if (!this.ended) this.native.unmount();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const f of this.flushes.splice(0)) f.done();
    this.waiting.clear();
    this.native.close();
    this.onEnd();
  }
}
