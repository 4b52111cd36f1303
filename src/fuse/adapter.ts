/**
 * FUSE requests onto the Tracefs library API. Thin by design: node ids and
 * handles, errno conversion, interrupts; every tracefs semantic
 * (permissions, truncate-on-open, blocking, poll masks) is the library's.
 */
import type { Caller } from '../kernel/caller.js';
import { errno, fail, isKernelError } from '../kernel/errno.js';
import { Dir, File, type Node } from '../tracefs/node.js';
import type { Stat, Tracefs } from '../tracefs/tracefs.js';
import { FdTable } from './fd_table.js';
import { FileCache, type FileCacheSink } from './file_cache.js';
import { CACHE_TIMEOUT_S, KernelCache } from './kernel_cache.js';
import { NodeIds } from './node_ids.js';
import type { FuseHandler, FuseNotices, FuseReplies, FuseRequest, SetAttr } from './session.js';

/** How long a busy operation waits for RELEASE requests in flight before it runs again. */
const RELEASE_GRACE_MS = 20;
/** How long, at most, opens wait for the RELEASE of a file whose reader a signal is ending. */
const RELEASE_DUE_MS = 200;

interface AdapterOptions {
  /** Where bugs (non-KernelError throws) are reported; they become EIO. */
  log?: (msg: string) => void;
  /** What the answer to a request waits for besides the kernel's caches (the host's watchers: HostDriver.returning). */
  returning?: (caller: Caller) => Promise<void> | undefined;
  /** Whether a signal pending for a caller will end it (host/pending_signals.ts). */
  signalEnds?: (pid: number) => boolean;
}

/** A request waiting in JS: how to end it, and the open file it reads, if any. */
interface Waiting {
  end: () => void;
  fh?: number;
}

/** A directory opened for reading: its entries, listed once by the first readdir. */
interface DirListing {
  names: string[];
  inos: Float64Array;
  modes: Int32Array;
}

/** The FUSE side of one mounted Tracefs. */
export class FuseAdapter implements FuseHandler {
  readonly fds = new FdTable();
  readonly ids: NodeIds;
  readonly cache: KernelCache;
  /** Files the native session answers by itself while nothing observes them. */
  readonly files: FileCache;
  /** Where answers go (the session, once mounted). */
  replies!: FuseReplies;
  private notices?: FuseNotices;
  private readonly log: (msg: string) => void;
  private readonly returning?: (caller: Caller) => Promise<void> | undefined;
  /** One wake function per open file, so repeated polls do not pile up listeners. */
  private readonly wakers = new Map<number, () => void>();
  /** Requests waiting in JS (blocking reads and the like), with how to end them. */
  private readonly waiting = new Map<FuseRequest, Waiting>();
  /** Files whose reader a signal is ending, and how their wait ends (at their RELEASE, or after RELEASE_DUE_MS). */
  private readonly releasesDue = new Map<number, { released: Promise<void>; done: () => void }>();
  private readonly signalEnds?: (pid: number) => boolean;
  private readonly dirs = new Map<number, DirListing | undefined>();
  private nextDir = 1;

  constructor(
    readonly fs: Tracefs,
    opts: AdapterOptions = {},
  ) {
    this.log = opts.log ?? ((m) => console.error(`tracefs-emu: ${m}`));
    this.returning = opts.returning;
    this.signalEnds = opts.signalEnds;
    this.ids = new NodeIds(fs.root);
    this.files = new FileCache(fs.kernel);
    this.cache = new KernelCache(this.ids, this.files);
  }

  /** Connects the session: where answers, notices and cached files go. */
  attach(replies: FuseReplies, notices?: FuseNotices, files?: FileCacheSink): void {
    this.replies = replies;
    this.notices = notices;
    this.cache.notices = notices;
    this.files.sink = files;
  }

  handled(mutating: boolean): void {
    if (mutating) this.files.changed();
    this.files.settle(this.waiting.size === 0);
  }

  /** A negative errno for anything thrown: KernelError's own, EIO (logged) for bugs. */
  errnoOf(e: unknown, what: string): number {
    if (isKernelError(e)) return e.errno;
    this.log(`${what}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return errno.EIO;
  }

  /**
   * Runs an operation and answers with `done`, or with its errno. One that
   * queued notices (it removed something the kernel caches) answers once
   * they are sent: what it removed is gone for the kernel too before it
   * returns (`test -d` right after a write to dynamic_events). One that
   * armed what the host must learn of (`returning`) answers once it has,
   * even if interrupted meanwhile. One that waits is answered -EINTR at
   * once if the kernel interrupts it; a late result then goes to `late`.
   * Namespace operations (mkdir, setattr) never wait for notices: they hold
   * the directory locks the notices need.
   */
  private run<T>(what: string, req: FuseRequest, fn: () => T | Promise<T>, done: (v: T) => void, late?: (v: T) => void, settle = true): void {
    const queuedBefore = this.cache.queued;
    const answer = (v: T): void => {
      const notices = settle && this.cache.queued !== queuedBefore ? this.cache.settled() : undefined;
      const host = this.returning?.(req.caller);
      if (!notices && !host) return done(v);
      void Promise.all([notices, host]).then(() => (req.answered ? late?.(v) : done(v)));
    };
    let r: T | Promise<T>;
    try {
      r = fn();
    } catch (e) {
      this.replies.err(req, this.errnoOf(e, what));
      return;
    }
    if (!(r instanceof Promise)) return answer(r);
    if (req.interrupted) this.replies.err(req, errno.EINTR);
    else this.waiting.set(req, { end: () => this.replies.err(req, errno.ENOTCONN) });
    r.then(
      (v) => {
        this.waiting.delete(req);
        if (req.mutating) this.files.changed();
        this.files.settle(this.waiting.size === 0);
        if (req.answered) late?.(v);
        else answer(v);
      },
      (e: unknown) => {
        this.waiting.delete(req);
        if (!req.answered) this.replies.err(req, this.errnoOf(e, what));
        else if (!isKernelError(e)) this.errnoOf(e, `${what} (after interrupt)`);
      },
    );
  }

  /**
   * The kernel releases a tracefs file before close() returns; FUSE sends
   * RELEASE asynchronously. So an operation that finds something busy
   * (EBUSY: an event file still open, an instance in use) while files are
   * open runs once more a little later. EBUSY leaves the state unchanged,
   * so the retry is the same operation.
   */
  private afterReleases<T>(fn: () => T | Promise<T>): () => T | Promise<T> {
    const busy = (e: unknown) => isKernelError(e) && e.errno === errno.EBUSY && this.fds.size > 0;
    const again = () => new Promise<void>((r) => setTimeout(r, RELEASE_GRACE_MS)).then(fn);
    return () => {
      let r: T | Promise<T>;
      try {
        r = fn();
      } catch (e) {
        if (busy(e)) return again();
        throw e;
      }
      return r instanceof Promise ? r.catch((e: unknown) => (busy(e) ? again() : Promise.reject(e))) : r;
    };
  }

  /** The path of a node the kernel names, if it is still in the tree. */
  private pathOf(id: number): string {
    const n = this.ids.node(id);
    if (!n) fail('ENOENT');
    if (n === this.fs.root) return '';
    let top: Node = n;
    while (top.parent) top = top.parent;
    if (top !== this.fs.root) fail('ENOENT');
    return n.path;
  }

  private childPath(parent: number, name: string): string {
    const p = this.pathOf(parent);
    return p ? `${p}/${name}` : name;
  }

  private waker(fh: number): () => void {
    let w = this.wakers.get(fh);
    if (!w) {
      w = () => void this.notices?.notifyPoll(fh);
      this.wakers.set(fh, w);
    }
    return w;
  }

  /** Ends waiting requests (ENOTCONN) and closes every open file: the mount is gone. */
  releaseAll(): void {
    for (const w of [...this.waiting.values()]) w.end();
    this.waiting.clear();
    for (const r of [...this.releasesDue.values()]) r.done();
    for (const [fh, h] of [...this.fds.handles()]) {
      this.fds.remove(fh);
      this.wakers.delete(fh);
      try {
        h.release();
      } catch (e) {
        this.errnoOf(e, 'release');
      }
    }
  }

  // --- FuseHandler

  lookup(req: FuseRequest, parent: number, name: string): void {
    this.run('lookup', req, () => {
      const node = this.fs.lookup(this.childPath(parent, name), req.caller);
      return { node, st: this.fs.statNode(node) };
    }, ({ node, st }) => {
      const id = this.ids.looked(node, parent);
      // Its first open may be answered natively already (a new instance's event files, read once each by ftracetest's reset).
      if (node instanceof File) this.files.known(id, node, () => st);
      this.replies.entry(req, id, st, CACHE_TIMEOUT_S);
    });
  }

  forget(pairs: Float64Array, n: number): void {
    for (let i = 0; i < n; i++) {
      const id = pairs[2 * i]!;
      this.ids.forget(id, pairs[2 * i + 1]!);
      if (!this.ids.node(id)) this.files.drop(id);
    }
  }

  /**
   * The kernel asks again for attributes it let go (a read invalidates the
   * atime it caches): answered from the node, with no system call of the
   * emulated kernel — the caller's stat() or fstat() is one whether or not
   * FUSE asks (the path walk's search permissions were the kernel's).
   */
  getattr(req: FuseRequest, id: number, fh: number | undefined): void {
    const h = fh === undefined ? undefined : this.fds.get(fh);
    this.run(
      'getattr',
      req,
      (): Stat => {
        if (h) return this.fs.statNode(h.node);
        this.pathOf(id);
        return this.fs.statNode(this.ids.node(id)!);
      },
      (st) => this.replies.attr(req, st, CACHE_TIMEOUT_S),
    );
  }

  setattr(req: FuseRequest, id: number, fh: number | undefined, set: SetAttr): void {
    this.run('setattr', req, (): Stat => {
      const h = fh === undefined ? undefined : this.fds.get(fh);
      const path = h ? h.node.path : this.pathOf(id);
      if (set.mode !== undefined) this.fs.chmod(path, set.mode & 0o7777, req.caller);
      if (set.uid !== undefined || set.gid !== undefined) this.fs.chown(path, set.uid, set.gid, req.caller);
      if (set.size !== undefined) this.fs.truncate(path, req.caller);
      if (set.atimeMs !== undefined || set.mtimeMs !== undefined) {
        const node = this.fs.nodeAt(path);
        this.fs.utimens(path, set.atimeMs ?? node?.atimeMs ?? Date.now(), set.mtimeMs ?? node?.mtimeMs ?? Date.now(), req.caller);
      }
      return this.fs.statNode(h?.node ?? this.fs.lookup(path, req.caller));
    }, (st) => this.replies.attr(req, st, CACHE_TIMEOUT_S), undefined, false);
  }

  opendir(req: FuseRequest, id: number): void {
    this.run('opendir', req, () => {
      const n = this.ids.node(id);
      if (!(n instanceof Dir)) fail(n ? 'ENOTDIR' : 'ENOENT');
      const fh = this.nextDir++;
      this.dirs.set(fh, undefined);
      return fh;
    }, (fh) => this.replies.open(req, fh, { cacheDir: this.files.listingsCacheable() }));
  }

  readdir(req: FuseRequest, id: number, fh: number, size: number, offset: number): void {
    this.run('readdir', req, () => {
      let list = this.dirs.get(fh);
      if (!list || offset === 0) {
        const path = this.pathOf(id);
        const dir = this.ids.node(id) as Dir;
        const names = ['.', '..', ...this.fs.readdir(path, req.caller)];
        const inos = new Float64Array(names.length);
        const modes = new Int32Array(names.length);
        names.forEach((name, i) => {
          const n = name === '.' ? dir : name === '..' ? (dir.parent ?? dir) : dir.get(name);
          inos[i] = n?.ino ?? 0;
          modes[i] = n?.mode ?? 0;
        });
        list = { names, inos, modes };
        this.dirs.set(fh, list);
        this.cache.listed(id);
      }
      return list;
    }, (list) => this.replies.dir(req, list.names, list.inos, list.modes, offset, size));
  }

  releasedir(req: FuseRequest, _id: number, fh: number): void {
    this.dirs.delete(fh);
    this.replies.err(req, 0);
  }

  open(req: FuseRequest, id: number, flags: number): void {
    if (this.releasesDue.size > 0) {
      void Promise.all([...this.releasesDue.values()].map((r) => r.released)).then(() => this.open(req, id, flags));
      return;
    }
    let path: string;
    try {
      path = this.pathOf(id);
    } catch (e) {
      this.replies.err(req, this.errnoOf(e, 'open'));
      return;
    }
    this.run(
      'open',
      req,
      this.afterReleases(() => this.fs.open(path, flags, req.caller)),
      (h) => {
        const fh = this.fds.add(h);
        this.files.known(id, h.node, () => this.fs.statNode(h.node));
        if (!this.replies.open(req, fh, { directIo: true, nonseekable: h.file.nonseekable === true })) {
          // The caller gave up meanwhile: nobody will close it.
          this.fds.remove(fh);
          h.release();
        }
      },
      (h) => h.release(), // opened after the caller gave up: nobody will close it
    );
  }

  read(req: FuseRequest, _id: number, fh: number, size: number, offset: number, fileFlags: number): void {
    const h = this.fds.get(fh);
    if (!h) return this.replies.err(req, errno.EBADF);
    h.setStatusFlags(fileFlags);
    this.run(`read ${h.node.path}`, req, () => h.read(size, offset, req), (data) => this.replies.data(req, data, Math.min(size, data.length)));
    const w = this.waiting.get(req);
    if (w) w.fh = fh;
  }

  write(req: FuseRequest, _id: number, fh: number, data: Buffer, offset: number, fileFlags: number): void {
    const h = this.fds.get(fh);
    if (!h) return this.replies.err(req, errno.EBADF);
    h.setStatusFlags(fileFlags);
    this.run(`write ${h.node.path}`, req, this.afterReleases(() => h.write(data, offset, req.caller)), (n) => this.replies.written(req, n));
  }

  release(req: FuseRequest, _id: number, fh: number): void {
    this.releasesDue.get(fh)?.done();
    const h = this.fds.remove(fh);
    this.wakers.delete(fh);
    this.notices?.forgetPoll(fh);
    if (h) {
      try {
        h.release();
      } catch (e) {
        this.errnoOf(e, 'release');
      }
    }
    this.replies.err(req, 0);
  }

  mkdir(req: FuseRequest, parent: number, name: string, _mode: number): void {
    this.run('mkdir', req, () => {
      const path = this.childPath(parent, name);
      this.fs.mkdir(path, req.caller);
      const node = this.fs.lookup(path, req.caller);
      return { node, st: this.fs.statNode(node) };
    }, ({ node, st }) => this.replies.entry(req, this.ids.looked(node, parent), st, CACHE_TIMEOUT_S), undefined, false);
  }

  rmdir(req: FuseRequest, parent: number, name: string): void {
    // Answered without waiting for the invalidations it queues: they need the lock the kernel holds for this rmdir.
    let rmdir: () => void | Promise<void>;
    try {
      const path = this.childPath(parent, name);
      rmdir = this.afterReleases(() => this.fs.rmdir(path, req.caller));
    } catch (e) {
      return this.replies.err(req, this.errnoOf(e, 'rmdir'));
    }
    let r: void | Promise<void>;
    try {
      r = rmdir();
    } catch (e) {
      return this.replies.err(req, this.errnoOf(e, 'rmdir'));
    }
    if (!(r instanceof Promise)) return this.replies.err(req, 0);
    r.then(
      () => this.replies.err(req, 0),
      (e: unknown) => this.replies.err(req, this.errnoOf(e, 'rmdir')),
    );
  }

  access(req: FuseRequest, id: number, mask: number): void {
    this.run('access', req, () => this.fs.access(this.pathOf(id), mask, req.caller), () => this.replies.err(req, 0));
  }

  statfs(req: FuseRequest): void {
    const s = this.fs.statfs();
    this.replies.statfs(req, s.bsize, s.namelen);
  }

  poll(req: FuseRequest, _id: number, fh: number): void {
    const h = this.fds.get(fh);
    if (!h) return this.replies.err(req, errno.EBADF);
    this.run(`poll ${h.node.path}`, req, () => h.poll(this.waker(fh)), (mask) => this.replies.poll(req, mask));
  }

  interrupted(req: FuseRequest): void {
    const w = this.waiting.get(req);
    if (!w) return;
    this.waiting.delete(req);
    this.replies.err(req, errno.EINTR);
    if (w.fh !== undefined && this.signalEnds?.(req.caller.pid)) this.releaseDue(w.fh);
  }

  /**
   * A signal is ending the reader of `fh` (`kill` of a `cat trace_pipe`):
   * on a kernel its file is released before its killer's next command can
   * look (a remote still loaded, an event file still busy), while FUSE sends
   * the RELEASE only once the process is gone. Opens wait for it meanwhile.
   */
  private releaseDue(fh: number): void {
    if (this.releasesDue.has(fh)) return;
    let done!: () => void;
    const released = new Promise<void>((ok) => (done = ok));
    const timer = setTimeout(() => entry.done(), RELEASE_DUE_MS);
    const entry = {
      released,
      done: () => {
        clearTimeout(timer);
        this.releasesDue.delete(fh);
        done();
      },
    };
    this.releasesDue.set(fh, entry);
  }
}
