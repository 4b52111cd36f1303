/** The FUSE adapter without a mount: ops called as fuse-native calls them. */
import { describe, expect, it } from 'vitest';
import { FuseAdapter, OPEN_DIRECT_IO, OPEN_NONSEEKABLE } from '../../src/fuse/adapter.js';
import type { FuseOps, FuseRequest, FuseStat } from '../../src/fuse/native.js';
import { KernelError } from '../../src/kernel/errno.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { Dir, File, POLLIN } from '../../src/tracefs/node.js';
import { Tracefs } from '../../src/tracefs/tracefs.js';

class Req implements FuseRequest {
  static next = 1;
  readonly id = Req.next++;
  readonly opcode = 0;
  readonly nodeid = 0;
  private readonly ac = new AbortController();
  constructor(
    readonly op = 'test',
    readonly pid = process.pid,
    readonly uid = 0,
    readonly gid = 0,
  ) {}
  get interrupted() {
    return this.ac.signal.aborted;
  }
  get signal() {
    return this.ac.signal;
  }
  interrupt() {
    this.ac.abort();
  }
}

/** Calls an op and resolves with the arguments of its callback. */
function call<K extends keyof FuseOps>(ops: Partial<FuseOps>, name: K, ...args: unknown[]): Promise<unknown[]> {
  return new Promise((ok) => {
    const fn = ops[name] as (...a: unknown[]) => void;
    const req = (args.length && args[args.length - 1] instanceof Req ? args.pop() : new Req()) as Req;
    fn(...args, (...res: unknown[]) => ok(res), req);
  });
}

function setup() {
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
  const fs = new Tracefs(root, new Kernel({ cpus: 1 }));
  const logs: string[] = [];
  const notified: number[] = [];
  const adapter = new FuseAdapter(fs, { log: (m) => logs.push(m), notifyPoll: (fh) => notified.push(fh) });
  return { fs, adapter, ops: adapter.ops(), logs, notified, released, release: (b: Buffer) => release?.(b), wake: () => wake?.(), opened: () => opened };
}

describe('FUSE adapter', () => {
  it('stats nodes, and answers a missing path with -ENOENT', async () => {
    const { ops } = setup();
    const [err, st] = (await call(ops, 'getattr', '/plain')) as [number, FuseStat];
    expect(err).toBe(0);
    expect(st).toMatchObject({ mode: 0o100644, size: 0, uid: 0, gid: 0, nlink: 1 });
    expect((await call(ops, 'getattr', '/sub'))[1]).toMatchObject({ mode: 0o040750, nlink: 2 });
    expect((await call(ops, 'getattr', '/nope'))[0]).toBe(-2);
  });

  it('lists . and .. first', async () => {
    const { ops } = setup();
    expect(await call(ops, 'readdir', '/')).toEqual([0, ['.', '..', 'plain', 'private', 'stream', 'slowopen', 'buggy', 'sub']]);
    expect((await call(ops, 'readdir', '/plain'))[0]).toBe(-20);
  });

  it('opens with direct_io (and nonseekable when the file says so), reads and writes through the fd table', async () => {
    const { ops, adapter, released } = setup();
    const [err, fh, flags] = (await call(ops, 'open', '/plain', 2)) as number[];
    expect(err).toBe(0);
    expect(fh).toBeGreaterThan(0);
    expect(flags).toBe(OPEN_DIRECT_IO);
    const buf = Buffer.alloc(5);
    expect(await call(ops, 'read', '/plain', fh, buf, 5, 6)).toEqual([5]);
    expect(buf.toString()).toBe('world');
    const data = Buffer.from('abc');
    expect(await call(ops, 'write', '/plain', fh, data, 3, 0)).toEqual([3]);
    expect(adapter.fds.size).toBe(1);
    expect(await call(ops, 'release', '/plain', fh)).toEqual([0]);
    expect(released).toEqual(['plain']);
    expect(adapter.fds.size).toBe(0);
    expect((await call(ops, 'read', '/plain', fh, buf, 5, 0))[0]).toBe(-9);
    const s = (await call(ops, 'open', '/stream', 0)) as number[];
    expect(s[2]).toBe(OPEN_DIRECT_IO | OPEN_NONSEEKABLE);
  });

  it('checks permissions with the caller of the request', async () => {
    const { ops } = setup();
    expect((await call(ops, 'open', '/private', 0, new Req('open', 1, 1000, 1000)))[0]).toBe(-13);
    expect((await call(ops, 'open', '/private', 0, new Req('open', 1, 0, 0)))[0]).toBe(0);
    expect((await call(ops, 'chown', '/plain', 5, 6, new Req('chown', 1, 1000, 1000)))[0]).toBe(-1);
  });

  it('answers -EINTR at once when the kernel interrupts a waiting read, and ignores its late result', async () => {
    const { ops, release } = setup();
    const [, fh] = (await call(ops, 'open', '/stream', 0)) as number[];
    const req = new Req('read');
    const buf = Buffer.alloc(16);
    const p = call(ops, 'read', '/stream', fh, buf, 16, 0, req);
    await new Promise((r) => setTimeout(r, 10));
    req.interrupt();
    expect(await p).toEqual([-4]);
    release(Buffer.from('late'));
    await new Promise((r) => setTimeout(r, 10));
    expect(buf.toString('latin1', 0, 4)).not.toBe('late');
  });

  it('closes a file whose open completed after the caller was interrupted', async () => {
    const { ops, adapter, released, opened } = setup();
    const req = new Req('open');
    const p = call(ops, 'open', '/slowopen', 0, req);
    req.interrupt();
    expect(await p).toEqual([-4]);
    await new Promise((r) => setTimeout(r, 100));
    expect(opened()).toBe(1);
    expect(released).toEqual(['slowopen']);
    expect(adapter.fds.size).toBe(0);
  });

  it('turns a bug into -EIO, logged', async () => {
    const { ops, logs } = setup();
    const [, fh] = (await call(ops, 'open', '/buggy', 0)) as number[];
    expect(await call(ops, 'read', '/buggy', fh, Buffer.alloc(4), 4, 0)).toEqual([-5]);
    expect(logs.join('\n')).toMatch(/read \/buggy: TypeError: oops/);
  });

  it('copies write data before the op may wait', async () => {
    const root = new Dir('', 0o755);
    let seen = '';
    root.add(new File('w', 0o644, {
      write: async (_f, d) => {
        await new Promise((r) => setTimeout(r, 5));
        seen = d.toString();
        return d.length;
      },
    }));
    const ops = new FuseAdapter(new Tracefs(root, new Kernel({ cpus: 1 }))).ops();
    const [, fh] = (await call(ops, 'open', '/w', 1)) as number[];
    const buf = Buffer.from('data!');
    const p = call(ops, 'write', '/w', fh, buf, 4, 0);
    buf.fill(0);
    expect(await p).toEqual([4]);
    expect(seen).toBe('data');
  });

  it('keeps ids a chown leaves unchanged (-1)', async () => {
    const { ops, fs } = setup();
    expect(await call(ops, 'chown', '/plain', 0xffffffff, 42)).toEqual([0]);
    expect(fs.stat('plain')).toMatchObject({ uid: 0, gid: 42 });
    expect(await call(ops, 'chmod', '/plain', 0o100600)).toEqual([0]);
    expect(fs.stat('plain').mode).toBe(0o100600);
  });

  it('answers poll with the file mask, and wakes pollers through notifyPoll', async () => {
    const { ops, notified, wake } = setup();
    const [, fh] = (await call(ops, 'open', '/stream', 0)) as number[];
    expect(await call(ops, 'poll', '/stream', fh)).toEqual([0, 0]);
    wake();
    expect(notified).toEqual([fh]);
    const [, fh2] = (await call(ops, 'open', '/plain', 0)) as number[];
    expect(((await call(ops, 'poll', '/plain', fh2))[1] as number) & POLLIN).toBe(POLLIN);
  });

  it('gives the VFS errnos of operations tracefs lacks', async () => {
    const { ops } = setup();
    expect(await call(ops, 'create', '/x', 0o644)).toEqual([-13]);
    expect(await call(ops, 'unlink', '/plain')).toEqual([-1]);
    expect(await call(ops, 'mkdir', '/sub/x', 0o755)).toEqual([-1]);
    expect(await call(ops, 'truncate', '/plain', 0)).toEqual([0]);
    expect(await call(ops, 'truncate', '/sub', 0)).toEqual([-21]);
  });

  it('ends waiting requests with -ENOTCONN when the mount goes away', async () => {
    const { ops, adapter } = setup();
    const [, fh] = (await call(ops, 'open', '/stream', 0)) as number[];
    const p = call(ops, 'read', '/stream', fh, Buffer.alloc(4), 4, 0);
    adapter.releaseAll();
    expect(await p).toEqual([-107]);
    expect(adapter.fds.size).toBe(0);
  });

  it('maps KernelError to its errno', () => {
    const { adapter } = setup();
    expect(adapter.errnoOf(new KernelError('EBUSY'), 'x')).toBe(-16);
  });
});
