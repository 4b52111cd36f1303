/**
 * FUSE operations onto the Tracefs library API. Thin by design: path and
 * handle plumbing, errno conversion, interrupts; every tracefs semantic
 * (permissions, truncate-on-open, blocking, poll masks) is the library's.
 */
import type { Caller } from '../kernel/caller.js';
import { errno, isKernelError } from '../kernel/errno.js';
import type { Node } from '../tracefs/node.js';
import type { Handle, Stat, Tracefs } from '../tracefs/tracefs.js';
import { FdTable } from './fd_table.js';
import type { KernelCache } from './kernel_cache.js';
import { FUSE_LOOKUP, FUSE_MKDIR, type FuseOps, type FuseRequest, type FuseStat } from './native.js';

/** Open reply flags understood by the patched binding. */
export const OPEN_DIRECT_IO = 1;
export const OPEN_KEEP_CACHE = 2;
export const OPEN_NONSEEKABLE = 4;

const UNCHANGED_ID = 0xffffffff;
export interface AdapterOptions {
  /** Where bugs (non-KernelError throws) are reported; they become EIO. */
  log?: (msg: string) => void;
  /** Wakes the pollers of an open file (set once the FUSE instance exists). */
  notifyPoll?: (fh: number) => void;
  /** The kernel's cache of the tree: learns node ids from requests; operations wait for the invalidations they caused. */
  cache?: KernelCache;
}

export function callerOf(req: FuseRequest): Caller {
  return { pid: req.pid, uid: req.uid, gid: req.gid };
}

export function toFuseStat(st: Stat): FuseStat {
  return {
    mode: st.mode,
    uid: st.uid,
    gid: st.gid,
    size: st.size,
    nlink: st.nlink,
    ino: st.ino,
    blksize: 4096,
    blocks: 0,
    atime: st.atimeMs,
    mtime: st.mtimeMs,
    ctime: st.ctimeMs,
  };
}

/** How long a busy operation waits for RELEASE requests in flight before it runs again. */
const RELEASE_GRACE_MS = 20;

/** The FUSE side of one mounted Tracefs. */
export class FuseAdapter {
  readonly fds = new FdTable();
  private readonly log: (msg: string) => void;
  notifyPoll: (fh: number) => void;
  /** One wake function per open file, so repeated polls do not pile up listeners. */
  private readonly wakers = new Map<number, () => void>();
  /** Answer functions of requests waiting on a file (blocking reads and the like). */
  private readonly waiting = new Set<(err: number) => void>();
  private readonly cache?: KernelCache;

  constructor(
    readonly fs: Tracefs,
    opts: AdapterOptions = {},
  ) {
    this.log = opts.log ?? ((m) => console.error(`tracefs-emu: ${m}`));
    this.notifyPoll = opts.notifyPoll ?? (() => {});
    this.cache = opts.cache;
  }

  /** Tells the kernel cache which node a request named by its own id. */
  private named(req: FuseRequest, node: Node | undefined): void {
    this.cache?.named(req.nodeid, node);
  }

  /** A negative errno for anything thrown: KernelError's own, EIO (logged) for bugs. */
  errnoOf(e: unknown, what: string): number {
    if (isKernelError(e)) return -e.errno;
    this.log(`${what}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return -errno.EIO;
  }

  /** Runs a synchronous op; its result or -errno goes to `done`. */
  private sync<T>(what: string, fn: () => T, done: (err: number, v?: T) => void): void {
    let v: T;
    try {
      v = fn();
    } catch (e) {
      done(this.errnoOf(e, what));
      return;
    }
    done(0, v);
  }

  /**
   * The kernel releases a tracefs file before close() returns; FUSE sends
   * RELEASE asynchronously, and another worker thread may deliver the
   * caller's next request first. So an operation that finds something busy
   * (EBUSY: an event file still open, an instance in use) while other files
   * are open runs once more after the releases in flight have arrived. EBUSY
   * leaves the state unchanged, so the retry is the same operation.
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

  /**
   * Runs an op that may wait. If the kernel interrupts the request first, it
   * is answered -EINTR at once and a late result goes to `late` (if given).
   */
  private mayWait<T>(
    what: string,
    req: FuseRequest,
    fn: () => T | Promise<T>,
    done: (err: number, v?: T) => void,
    late?: (v: T) => void,
  ): void {
    let answered = false;
    // req.signal makes an AbortController: only an op that waits needs one.
    let listening = false;
    const cache = this.cache;
    const queuedBefore = cache?.queued ?? 0;
    const reply = (err: number, v?: T) => {
      if (answered) return;
      answered = true;
      this.waiting.delete(reply);
      if (listening) req.signal.removeEventListener('abort', onAbort);
      done(err, v);
    };
    const onAbort = () => reply(-errno.EINTR);
    // What the operation removed is gone for the kernel too before it
    // returns (e.g. `test -d` right after a write to dynamic_events).
    const answer = (err: number, v?: T) => {
      if (answered) return;
      if (!cache || cache.queued === queuedBefore) return reply(err, v);
      void cache.settled().then(() => {
        if (!answered) reply(err, v);
        else if (!err && v !== undefined) late?.(v);
      });
    };
    let p: T | Promise<T>;
    try {
      p = fn();
    } catch (e) {
      answer(this.errnoOf(e, what));
      return;
    }
    if (!(p instanceof Promise)) {
      answer(0, p);
      return;
    }
    if (req.interrupted) {
      onAbort();
    } else {
      this.waiting.add(reply);
      req.signal.addEventListener('abort', onAbort, { once: true });
      listening = true;
    }
    p.then(
      (v) => {
        if (answered) late?.(v);
        else answer(0, v);
      },
      (e) => {
        if (answered) {
          if (!isKernelError(e)) this.errnoOf(e, `${what} (after interrupt)`);
          return;
        }
        answer(this.errnoOf(e, what));
      },
    );
  }

  private handle(fh: number): Handle | undefined {
    return this.fds.get(fh);
  }

  private waker(fh: number): () => void {
    let w = this.wakers.get(fh);
    if (!w) {
      w = () => this.notifyPoll(fh);
      this.wakers.set(fh, w);
    }
    return w;
  }

  /** Ends waiting requests (ENOTCONN) and closes every open file: the mount is gone. */
  releaseAll(): void {
    for (const answer of [...this.waiting]) answer(-errno.ENOTCONN);
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

  /** The operation table handed to fuse-native. */
  ops(): Partial<FuseOps> {
    const fs = this.fs;
    return {
      getattr: (path, cb, req) => {
        this.sync(
          'getattr',
          () => {
            const st = toFuseStat(fs.stat(path, callerOf(req)));
            const cache = this.cache;
            if (cache) {
              // libfuse calls getattr for LOOKUP, and for the directory MKDIR made.
              if (req.opcode === FUSE_LOOKUP || req.opcode === FUSE_MKDIR) cache.looked(req, fs.nodeAt(path));
              else cache.named(req.nodeid, fs.nodeAt(path));
            }
            return st;
          },
          (err, st) => cb(err, st),
        );
      },
      fgetattr: (path, fd, cb, req) => {
        this.sync(
          'fgetattr',
          () => {
            const h = this.handle(fd);
            this.named(req, h?.node ?? fs.nodeAt(path));
            return toFuseStat(h ? fs.statNode(h.node) : fs.stat(path, callerOf(req)));
          },
          (err, st) => cb(err, st),
        );
      },
      readdir: (path, cb, req) => {
        this.sync(
          'readdir',
          () => {
            const names = ['.', '..', ...fs.readdir(path, callerOf(req))];
            this.named(req, fs.nodeAt(path));
            return names;
          },
          (err, names) => cb(err, names),
        );
      },
      access: (path, mode, cb, req) => {
        this.sync('access', () => fs.access(path, mode, callerOf(req)), (err) => cb(err));
      },
      open: (path, flags, cb, req) => {
        this.mayWait(
          'open',
          req,
          this.afterReleases(() => fs.open(path, flags, callerOf(req))),
          (err, h) => {
            if (err || !h) return cb(err || -errno.EIO);
            this.named(req, h.node);
            const fh = this.fds.add(h);
            cb(0, fh, OPEN_DIRECT_IO | (h.file.nonseekable ? OPEN_NONSEEKABLE : 0));
          },
          (h) => h.release(), // opened after the caller gave up: nobody will close it
        );
      },
      create: (_path, _mode, cb) => cb(-errno.EACCES), // tracefs directories have no create
      read: (path, fd, buf, len, pos, cb, req) => {
        const h = this.handle(fd);
        if (!h) return cb(-errno.EBADF);
        if (req.fileFlags !== undefined) h.setStatusFlags(req.fileFlags);
        this.mayWait(
          `read ${path}`,
          req,
          () => h.read(len, pos, req.signal),
          (err, data) => {
            if (err) return cb(err);
            if (!data) return cb(0);
            const n = Math.min(len, data.length);
            data.copy(buf, 0, 0, n);
            cb(n);
          },
        );
      },
      write: (path, fd, buf, len, pos, cb, req) => {
        const h = this.handle(fd);
        if (!h) return cb(-errno.EBADF);
        if (req.fileFlags !== undefined) h.setStatusFlags(req.fileFlags);
        // The buffer is libfuse's: copy it, it is gone once answered.
        const data = Buffer.from(buf.subarray(0, len));
        this.mayWait(`write ${path}`, req, this.afterReleases(() => h.write(data, pos)), (err, n) => cb(err || (n ?? 0)));
      },
      release: (_path, fd, cb) => {
        const h = this.fds.remove(fd);
        this.wakers.delete(fd);
        if (!h) return cb(0);
        this.sync('release', () => h.release(), () => cb(0));
      },
      truncate: (path, _size, cb, req) => {
        this.sync('truncate', () => fs.truncate(path, callerOf(req)), (err) => cb(err));
      },
      ftruncate: (path, fd, _size, cb, req) => {
        const h = this.handle(fd);
        this.sync('ftruncate', () => fs.truncate(h ? h.node.path : path, callerOf(req)), (err) => cb(err));
      },
      mkdir: (path, _mode, cb, req) => {
        this.sync('mkdir', () => fs.mkdir(path, callerOf(req)), (err) => cb(err));
      },
      rmdir: (path, cb, req) => {
        // Answered without waiting for the invalidations it queues: they need the lock the kernel holds for this rmdir.
        const rmdir = this.afterReleases(() => fs.rmdir(path, callerOf(req)));
        let r: void | Promise<void>;
        try {
          r = rmdir();
        } catch (e) {
          return cb(this.errnoOf(e, 'rmdir'));
        }
        if (!(r instanceof Promise)) return cb(0);
        r.then(() => cb(0), (e: unknown) => cb(this.errnoOf(e, 'rmdir')));
      },
      // The VFS answers these for tracefs (no such inode operations): EPERM.
      unlink: (_path, cb) => cb(-errno.EPERM),
      rename: (_src, _dest, cb) => cb(-errno.EPERM),
      link: (_src, _dest, cb) => cb(-errno.EPERM),
      symlink: (_src, _dest, cb) => cb(-errno.EPERM),
      mknod: (_path, _mode, _dev, cb) => cb(-errno.EPERM),
      chown: (path, uid, gid, cb, req) => {
        this.sync(
          'chown',
          () => fs.chown(path, uid === UNCHANGED_ID ? undefined : uid, gid === UNCHANGED_ID ? undefined : gid, callerOf(req)),
          (err) => cb(err),
        );
      },
      chmod: (path, mode, cb, req) => {
        this.sync('chmod', () => fs.chmod(path, mode & 0o7777, callerOf(req)), (err) => cb(err));
      },
      utimens: (path, atime, mtime, cb, req) => {
        this.sync('utimens', () => fs.utimens(path, atime, mtime, callerOf(req)), (err) => cb(err));
      },
      statfs: (_path, cb) => {
        const s = fs.statfs();
        cb(0, { bsize: s.bsize, frsize: s.bsize, blocks: 0, bfree: 0, bavail: 0, files: 0, ffree: 0, favail: 0, fsid: 0, flag: 0, namemax: s.namelen });
      },
      poll: (path, fd, cb) => {
        const h = this.handle(fd);
        if (!h) return cb(-errno.EBADF);
        this.sync(`poll ${path}`, () => h.poll(this.waker(fd)), (err, mask) => cb(err, mask ?? 0));
      },
    };
  }
}
