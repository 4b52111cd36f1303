/** The FUSE adapter without a mount: requests handed to it as the session hands them, answers recorded. */
import { describe, expect, it } from 'vitest';
import { FuseAdapter } from '../../src/fuse/adapter.js';
import { type FuseAttr, type FuseNotices, type FuseReplies, FuseRequest } from '../../src/fuse/session.js';
import { KernelError } from '../../src/kernel/errno.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { Dir, File, POLLIN } from '../../src/tracefs/node.js';
import { Tracefs } from '../../src/tracefs/tracefs.js';
import { watchTree } from '../../src/tracefs/tree_watch.js';

type Answer =
  | { err: number }
  | { entry: number; attr: FuseAttr }
  | { attr: FuseAttr }
  | { fh: number; directIo: boolean; nonseekable: boolean }
  | { data: string }
  | { written: number }
  | { mask: number }
  | { names: string[] };

/** Records answers by request, as the session would send them; a second answer to one request is a bug. */
class Recorder implements FuseReplies, FuseNotices {
  readonly answers = new Map<FuseRequest, (a: Answer) => void>();
  twice = 0;
  woken: number[] = [];
  private put(req: FuseRequest, a: Answer): boolean {
    if (req.answered) {
      this.twice++;
      return false;
    }
    req.answered = true;
    this.answers.get(req)?.(a);
    return true;
  }
  err(req: FuseRequest, errno: number) {
    this.put(req, { err: errno });
  }
  entry(req: FuseRequest, nodeId: number, attr: FuseAttr) {
    this.put(req, { entry: nodeId, attr });
  }
  attr(req: FuseRequest, attr: FuseAttr) {
    this.put(req, { attr });
  }
  open(req: FuseRequest, fh: number, o: { directIo?: boolean; nonseekable?: boolean }) {
    return this.put(req, { fh, directIo: o.directIo === true, nonseekable: o.nonseekable === true });
  }
  data(req: FuseRequest, data: Buffer, n: number) {
    this.put(req, { data: data.subarray(0, n).toString('latin1') });
  }
  written(req: FuseRequest, n: number) {
    this.put(req, { written: n });
  }
  poll(req: FuseRequest, mask: number) {
    this.put(req, { mask });
  }
  statfs(req: FuseRequest) {
    this.put(req, { err: 0 });
  }
  dir(req: FuseRequest, names: readonly string[], _i: Float64Array, _m: Int32Array, offset: number) {
    this.put(req, { names: names.slice(offset) });
  }
  notifyPoll(fh: number) {
    this.woken.push(fh);
    return true;
  }
  forgetPoll() {}
  notices: string[] = [];
  invalEntry(parent: number, name: string) {
    this.notices.push(`inval ${parent} ${name}`);
    return 1;
  }
  notifyDelete(parent: number, child: number, name: string) {
    this.notices.push(`delete ${parent} ${child} ${name}`);
    return 1;
  }
  invalInode() {
    return 0;
  }
  flushNotices() {
    return Promise.resolve();
  }
}

let slot = 0;
const ROOT = { pid: process.pid, uid: 0, gid: 0 };

function setup(signalEnds?: (pid: number) => boolean) {
  const root = new Dir('', 0o755);
  let release: ((b: Buffer) => void) | undefined;
  const released: string[] = [];
  let opened = 0;
  let wake: (() => void) | undefined;
  root.add(new File('plain', 0o644, {
    read: (_f, size, pos) => Buffer.from('hello world\n').subarray(pos, pos + size),
    write: (_f, d) => d.length,
    release: () => void released.push('plain'),
  }));
  root.add(new File('private', 0o600, { read: () => Buffer.alloc(0) }));
  root.add(new File('stream', 0o444, {
    open(f) {
      f.nonseekable = true;
    },
    read: () => new Promise<Buffer>((ok) => (release = ok)),
    poll(_f, w) {
      wake = w;
      return 0;
    },
  }));
  root.add(new File('slowopen', 0o444, {
    open: () => new Promise<void>((ok) => setTimeout(ok, 50)).then(() => void opened++),
    release: () => void released.push('slowopen'),
  }));
  root.add(new File('buggy', 0o444, {
    read() {
      throw new TypeError('oops');
    },
  }));
  root.add(new Dir('sub', 0o750));
  const tree = root.add(new Dir('tree', 0o755));
  tree.add(new Dir('deeper', 0o755)).add(new File('leaf', 0o444, { read: () => Buffer.alloc(0) }));
  tree.add(new File('other', 0o444, { read: () => Buffer.alloc(0) }));
  const fs = new Tracefs(root, new Kernel({ cpus: 1 }));
  const logs: string[] = [];
  const adapter = new FuseAdapter(fs, { log: (m) => logs.push(m), signalEnds });
  const rec = new Recorder();
  adapter.attach(rec, rec);
  /** A request from `who`, and its answer. */
  const ask = (run: (req: FuseRequest) => void, who = ROOT): { req: FuseRequest; answer: Promise<Answer> } => {
    const req = new FuseRequest(++slot, who.pid, who.uid, who.gid);
    const answer = new Promise<Answer>((ok) => rec.answers.set(req, ok));
    run(req);
    return { req, answer };
  };
  const call = (run: (req: FuseRequest) => void, who = ROOT) => ask(run, who).answer;
  /** The node id of a name in the root, as a lookup gives it. */
  const id = async (name: string): Promise<number> => ((await call((r) => adapter.lookup(r, 1, name))) as { entry: number }).entry;
  const open = async (name: string, flags = 0) => ((await call(async (r) => adapter.open(r, await id(name), flags))) as { fh: number }).fh;
  return { root, fs, adapter, rec, ask, call, id, open, logs, released, release: (b: Buffer) => release?.(b), wake: () => wake?.(), opened: () => opened };
}

describe('FUSE adapter', () => {
  it('looks up names into node ids the kernel then uses, and answers a missing name with ENOENT', async () => {
    const { adapter, call, id } = setup();
    const plain = await id('plain');
    expect(plain).toBeGreaterThan(1);
    expect(await id('plain')).toBe(plain);
    expect(await call((r) => adapter.getattr(r, plain, undefined))).toMatchObject({ attr: { mode: 0o100644, size: 0, uid: 0, gid: 0, nlink: 1 } });
    expect(await call((r) => adapter.lookup(r, 1, 'sub'))).toMatchObject({ attr: { mode: 0o040750, nlink: 2 } });
    expect(await call((r) => adapter.lookup(r, 1, 'nope'))).toEqual({ err: 2 });
    // Forgotten as often as looked up: the id is gone.
    adapter.forget(new Float64Array([plain, 2]), 1);
    expect(await call((r) => adapter.getattr(r, plain, undefined))).toEqual({ err: 2 });
  });

  it('deletes what the kernel caches inside a directory removed behind its back, deepest first, so its nodes can go', async () => {
    const { root, adapter, rec, call, id } = setup();
    const unwatch = watchTree(root, adapter.cache);
    const tree = await id('tree');
    const entry = async (parent: number, name: string) => ((await call((r) => adapter.lookup(r, parent, name))) as { entry: number }).entry;
    const deeper = await entry(tree, 'deeper');
    const leaf = await entry(deeper, 'leaf');
    root.remove('tree');
    unwatch();
    expect(rec.notices).toEqual([`delete ${deeper} ${leaf} leaf`, `delete ${tree} ${deeper} deeper`, 'inval 1 tree']);
    // Once the kernel forgets them, nothing of the removed tree is held.
    adapter.forget(new Float64Array([leaf, 1, deeper, 1, tree, 1]), 3);
    expect(await call((r) => adapter.getattr(r, deeper, undefined))).toEqual({ err: 2 });
  });

  it('lists . and .. first, from the offset asked', async () => {
    const { adapter, call, id } = setup();
    const fh = ((await call((r) => adapter.opendir(r, 1))) as { fh: number }).fh;
    expect(await call((r) => adapter.readdir(r, 1, fh, 4096, 0))).toEqual({ names: ['.', '..', 'plain', 'private', 'stream', 'slowopen', 'buggy', 'sub', 'tree'] });
    expect(await call((r) => adapter.readdir(r, 1, fh, 4096, 6))).toEqual({ names: ['buggy', 'sub', 'tree'] });
    const plain = await id('plain');
    expect(await call((r) => adapter.opendir(r, plain))).toEqual({ err: 20 });
  });

  it('opens with direct_io (and nonseekable when the file says so), reads and writes through the fd table', async () => {
    const { adapter, call, id, open, released } = setup();
    const fh = await open('plain', 2);
    expect(fh).toBeGreaterThan(0);
    expect(await call((r) => adapter.read(r, 0, fh, 5, 6, 2))).toEqual({ data: 'world' });
    expect(await call((r) => adapter.write(r, 0, fh, Buffer.from('abc'), 0, 2))).toEqual({ written: 3 });
    expect(adapter.fds.size).toBe(1);
    expect(await call((r) => adapter.release(r, 0, fh))).toEqual({ err: 0 });
    expect(released).toEqual(['plain']);
    expect(adapter.fds.size).toBe(0);
    expect(await call((r) => adapter.read(r, 0, fh, 5, 0, 0))).toEqual({ err: 9 });
    const stream = await id('stream');
    expect(await call((r) => adapter.open(r, stream, 0))).toMatchObject({ directIo: true, nonseekable: true });
  });

  it('checks permissions with the caller of the request', async () => {
    const { adapter, call, id } = setup();
    const priv = await id('private');
    expect(await call((r) => adapter.open(r, priv, 0), { pid: 1, uid: 1000, gid: 1000 })).toEqual({ err: 13 });
    expect(await call((r) => adapter.open(r, priv, 0), { pid: 1, uid: 0, gid: 0 })).toMatchObject({ directIo: true });
    const plain = await id('plain');
    expect(await call((r) => adapter.setattr(r, plain, undefined, { uid: 5, gid: 6 }), { pid: 1, uid: 1000, gid: 1000 })).toEqual({ err: 1 });
  });

  it('answers EINTR at once when the kernel interrupts a waiting read, and nothing more for its late result', async () => {
    const { adapter, ask, open, release, rec } = setup();
    const fh = await open('stream');
    const { req, answer } = ask((r) => adapter.read(r, 0, fh, 16, 0, 0));
    await new Promise((r) => setTimeout(r, 10));
    req.interrupt();
    adapter.interrupted(req);
    expect(await answer).toEqual({ err: 4 });
    release(Buffer.from('late'));
    await new Promise((r) => setTimeout(r, 10));
    expect(rec.twice).toBe(0);
  });

  it('holds opens until the RELEASE of a file whose reader a signal is ending (kill of a cat trace_pipe), at most 200 ms', async () => {
    const KILLED = 4242;
    const { adapter, ask, call, id, open } = setup((pid) => pid === KILLED);
    const plain = await id('plain');
    /** A read of `fh` by `who`, blocked, then interrupted by a signal. */
    const interruptRead = async (fh: number, who = { pid: KILLED, uid: 0, gid: 0 }) => {
      const { req } = ask((r) => adapter.read(r, 0, fh, 16, 0, 0), who);
      await new Promise((r) => setTimeout(r, 5));
      req.interrupt();
      adapter.interrupted(req);
    };
    /** How long an open of another file takes now. */
    const openMs = async () => {
      const t = Date.now();
      expect(await call((r) => adapter.open(r, plain, 0))).toMatchObject({ fh: expect.any(Number) });
      return Date.now() - t;
    };
    const fh = await open('stream');
    await interruptRead(fh);
    let opened = false;
    const next = openMs().then(() => (opened = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(opened).toBe(false);
    await call((r) => adapter.release(r, 0, fh));
    await next;
    // No RELEASE comes (the file was shared): the open goes on after the bound.
    const fh2 = await open('stream');
    await interruptRead(fh2);
    expect(await openMs()).toBeGreaterThanOrEqual(150);
    // A reader that lives on (its signal handled) holds nothing.
    await interruptRead(fh2, ROOT);
    expect(await openMs()).toBeLessThan(100);
  });

  it('closes a file whose open completed after the caller was interrupted', async () => {
    const { adapter, ask, id, released, opened } = setup();
    const slow = await id('slowopen');
    const { req, answer } = ask((r) => adapter.open(r, slow, 0));
    req.interrupt();
    adapter.interrupted(req);
    expect(await answer).toEqual({ err: 4 });
    await new Promise((r) => setTimeout(r, 100));
    expect(opened()).toBe(1);
    expect(released).toEqual(['slowopen']);
    expect(adapter.fds.size).toBe(0);
  });

  it('turns a bug into EIO, logged', async () => {
    const { adapter, call, open, logs } = setup();
    const fh = await open('buggy');
    expect(await call((r) => adapter.read(r, 0, fh, 4, 0, 0))).toEqual({ err: 5 });
    expect(logs.join('\n')).toMatch(/read buggy: TypeError: oops/);
  });

  it('sets what setattr asks and keeps what it leaves alone', async () => {
    const { adapter, call, id, fs } = setup();
    const plain = await id('plain');
    expect(await call((r) => adapter.setattr(r, plain, undefined, { gid: 42 }))).toMatchObject({ attr: { uid: 0, gid: 42 } });
    expect(fs.stat('plain')).toMatchObject({ uid: 0, gid: 42 });
    expect(await call((r) => adapter.setattr(r, plain, undefined, { mode: 0o100600 }))).toMatchObject({ attr: { mode: 0o100600 } });
    expect(await call((r) => adapter.setattr(r, plain, undefined, { size: 0 }))).toMatchObject({ attr: { mode: 0o100600 } });
    expect(await call((r) => adapter.setattr(r, 1, undefined, { mtimeMs: 1000 }))).toMatchObject({ attr: { mtimeMs: 1000 } });
  });

  it('answers poll with the file mask, and wakes pollers through notifyPoll', async () => {
    const { adapter, call, open, rec, wake } = setup();
    const fh = await open('stream');
    expect(await call((r) => adapter.poll(r, 0, fh))).toEqual({ mask: 0 });
    wake();
    expect(rec.woken).toEqual([fh]);
    const fh2 = await open('plain');
    expect(((await call((r) => adapter.poll(r, 0, fh2))) as { mask: number }).mask & POLLIN).toBe(POLLIN);
  });

  it('gives the VFS errnos of directory operations tracefs lacks', async () => {
    const { adapter, call, id } = setup();
    const sub = await id('sub');
    expect(await call((r) => adapter.mkdir(r, sub, 'x', 0o755))).toEqual({ err: 1 });
    expect(await call((r) => adapter.rmdir(r, 1, 'nope'))).toEqual({ err: 2 });
  });

  it('ends waiting requests with ENOTCONN when the mount goes away', async () => {
    const { adapter, call, open } = setup();
    const fh = await open('stream');
    const p = call((r) => adapter.read(r, 0, fh, 4, 0, 0));
    adapter.releaseAll();
    expect(await p).toEqual({ err: 107 });
    expect(adapter.fds.size).toBe(0);
  });

  it('maps KernelError to its errno', () => {
    const { adapter } = setup();
    expect(adapter.errnoOf(new KernelError('EBUSY'), 'x')).toBe(16);
  });
});
