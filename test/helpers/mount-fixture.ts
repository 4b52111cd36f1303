/**
 * A small Tracefs of test files for the e2e tests: each file shows one
 * behaviour the FUSE layer must carry (blocking, poll, O_TRUNC, callers).
 */
import { Kernel } from '../../src/kernel/kernel.js';
import { fail, KernelError } from '../../src/kernel/errno.js';
import { Dir, File, O_NONBLOCK, type OpenFile, POLLIN, POLLRDNORM } from '../../src/tracefs/node.js';
import { Tracefs } from '../../src/tracefs/tracefs.js';
import type { Caller } from '../../src/kernel/caller.js';
import type { Interruption } from '../../src/kernel/syscall.js';

export interface OpenRecord {
  file: string;
  flags: number;
  caller: Caller;
}

/** A pipe-like source: reads wait for data (interruptibly), poll says when there is some. */
export class TestPipe {
  private data: Buffer[] = [];
  private waiters = new Set<() => void>();

  push(s: string): void {
    this.data.push(Buffer.from(s));
    const w = [...this.waiters];
    this.waiters.clear();
    for (const f of w) f();
  }

  get ready(): boolean {
    return this.data.length > 0;
  }

  async read(size: number, abort: Interruption): Promise<Buffer> {
    while (!this.ready) {
      if (abort.aborted) throw new KernelError('EINTR');
      await new Promise<void>((ok) => {
        const done = () => {
          abort.removeEventListener('abort', done);
          this.waiters.delete(done);
          ok();
        };
        this.waiters.add(done);
        abort.addEventListener('abort', done, { once: true });
      });
    }
    const all = Buffer.concat(this.data);
    const out = all.subarray(0, size);
    this.data = all.length > size ? [all.subarray(size)] : [];
    return out;
  }

  poll(wake: () => void): number {
    if (this.ready) return POLLIN | POLLRDNORM;
    this.waiters.add(wake);
    return 0;
  }
}

export interface Fixture {
  fs: Tracefs;
  opens: OpenRecord[];
  writes: { file: string; len: number; data: string }[];
  pipe: TestPipe;
  counter: { n: number };
  /** Reads of `block` currently waiting. */
  blocked: { n: number; interrupted: number };
}

function seqText(text: () => string) {
  return {
    read(_f: OpenFile, size: number, pos: number) {
      return Buffer.from(text(), 'latin1').subarray(pos, pos + size);
    },
  };
}

export function buildFixture(): Fixture {
  const opens: OpenRecord[] = [];
  const writes: Fixture['writes'] = [];
  const pipe = new TestPipe();
  const counter = { n: 0 };
  const blocked = { n: 0, interrupted: 0 };
  const root = new Dir('', 0o755);
  const record = (name: string) => (f: OpenFile) => {
    opens.push({ file: name, flags: f.flags, caller: f.caller });
  };

  // Content generated on every read (direct_io makes each read reach us).
  root.add(new File('counter', 0o444, { open: record('counter'), ...seqText(() => `count ${++counter.n}\n`) }));
  // Records opens (O_TRUNC, O_APPEND) and writes (one write op per write(2)).
  let text = '';
  root.add(
    new File('log', 0o644, {
      open(f) {
        record('log')(f);
        if (f.flags & 0o1000) text = '';
      },
      ...seqText(() => text),
      write(_f, data) {
        writes.push({ file: 'log', len: data.length, data: data.toString('latin1') });
        text += data.toString('latin1');
        return data.length;
      },
    }),
  );
  // The caller of the open, as the file sees it.
  root.add(
    new File('whoami', 0o666, {
      open: record('whoami'),
      read(f, size, pos) {
        return Buffer.from(`${f.caller.pid} ${f.caller.uid} ${f.caller.gid}\n`).subarray(pos, pos + size);
      },
      write(_f, data) {
        return data.length;
      },
    }),
  );
  // A read that never completes unless interrupted.
  root.add(
    new File('block', 0o444, {
      read(_f, _size, _pos, abort) {
        blocked.n++;
        return new Promise<Buffer>((_ok, ko) => {
          abort.addEventListener(
            'abort',
            () => {
              blocked.n--;
              blocked.interrupted++;
              ko(new KernelError('EINTR'));
            },
            { once: true },
          );
        });
      },
    }),
  );
  // A stream: blocking, consuming reads; poll-ready when data arrives.
  root.add(
    new File('pipe', 0o444, {
      open(f) {
        f.nonseekable = true;
      },
      read: (f, size, _pos, abort) => {
        // O_NONBLOCK, as given to open or set later by fcntl(F_SETFL): nothing to read is EAGAIN.
        if (f.flags & O_NONBLOCK && !pipe.ready) fail('EAGAIN');
        return pipe.read(size, abort);
      },
      poll: (_f, wake) => pipe.poll(wake),
    }),
  );
  // A read that takes 20 s (longer than fuse-native's old 15 s timeout).
  root.add(
    new File('slow', 0o444, {
      read(_f, _size, pos) {
        if (pos > 0) return Buffer.alloc(0);
        return new Promise<Buffer>((ok) => setTimeout(() => ok(Buffer.from('slow done\n')), 20_000));
      },
    }),
  );
  // A file whose read has a bug: EIO, and the daemon lives on.
  root.add(
    new File('buggy', 0o444, {
      read() {
        throw new TypeError('a bug');
      },
    }),
  );
  root.add(new Dir('sub', 0o750)).add(new File('inner', 0o440, seqText(() => 'inner\n')));
  const fs = new Tracefs(root, new Kernel({ cpus: 2 }));
  return { fs, opens, writes, pipe, counter, blocked };
}
