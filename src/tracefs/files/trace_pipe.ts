/**
 * trace_pipe (consuming text reader, blocks while empty) and trace_pipe_raw /
 * snapshot_raw (whole sub-buffers, as trace-cmd reads them).
 */
import { fail, KernelError } from '../../kernel/errno.js';
import { ALL_CPUS, type RingBuffer } from '../../trace/ring_buffer.js';
import type { TraceArray } from '../../trace/trace_array.js';
import { TraceIterator } from '../../trace/trace_iterator.js';
import { O_DIRECT, O_NONBLOCK, POLLIN, POLLRDNORM, type FileOps, type OpenFile } from '../node.js';
import { trFile } from './common.js';
import type { Interruption } from '../../kernel/syscall.js';

/** Largest text one trace_pipe read produces (TRACE_SEQ_BUFFER_SIZE - 1). */
const PIPE_READ_MAX = 8191;

/**
 * Sleeps until data is on `cpu` (at least `full` percent of its buffer
 * written, when asked), the buffers are woken, or the reader is interrupted
 * (EINTR). The caller checks again what it waited for.
 */
export function waitOn(buffers: () => RingBuffer[], cpu: number, abort: Interruption, full = 0): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (abort.aborted) return reject(new KernelError('EINTR'));
    const unregs: (() => void)[] = [];
    const done = () => {
      for (const u of unregs) u();
      abort.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      reject(new KernelError('EINTR'));
    };
    const onWake = () => {
      done();
      resolve();
    };
    for (const rb of buffers()) unregs.push(rb.addWaiter(cpu, onWake, full));
    abort.addEventListener('abort', onAbort, { once: true });
  });
}

/** Poll mask of a pipe-like reader (trace_poll()). */
function pollMask(tr: TraceArray, rb: () => RingBuffer, cpu: number, wake: () => void): number {
  if (tr.options.has('block')) return POLLIN | POLLRDNORM;
  const full = cpu === ALL_CPUS ? 0 : tr.bufferPercent;
  if (rb().watermarkHit(cpu, full)) return POLLIN | POLLRDNORM;
  rb().addWaiter(cpu, wake, full);
  return 0;
}

/** trace_pipe and per_cpu/cpuN/trace_pipe. */
export function tracePipeFile(tr: TraceArray, cpu = ALL_CPUS): FileOps {
  interface State {
    iter: TraceIterator;
    leftover: string;
  }
  return trFile(tr, {
    open(f) {
      tr.traceRef++;
      f.private = { iter: new TraceIterator(tr, { cpu, consuming: true }), leftover: '' } satisfies State;
    },
    async read(f, size, _pos, abort) {
      const st = f.private as State;
      if (st.leftover) return take(st, size);
      const iter = st.iter;
      // tracing_wait_pipe(): an empty pipe blocks, whether tracing is on or not.
      while (iter.empty()) {
        if (f.flags & O_NONBLOCK) fail('EAGAIN');
        await waitOn(() => [tr.buffer, tr.snapshotBuffer], cpu, abort);
      }
      const cnt = Math.min(size, PIPE_READ_MAX);
      iter.resetIndex();
      let text = '';
      for (;;) {
        const e = iter.next();
        if (!e) break;
        text += iter.line(e);
        iter.consume(e);
        if (text.length >= cnt) break;
      }
      st.leftover = text;
      return take(st, size);
    },
    poll(_f, wake) {
      return pollMask(tr, () => tr.buffer, cpu, wake);
    },
    release() {
      tr.traceRef--;
    },
  });

  function take(st: State, size: number): Buffer {
    const out = st.leftover.slice(0, size);
    st.leftover = st.leftover.slice(out.length);
    return Buffer.from(out, 'latin1');
  }
}

/** Whole sub-buffers from `first` on, up to `size` bytes: what tracing_buffers_splice_read() moves at once. */
function splicedPages(cb: RingBuffer['cpus'][number], first: Buffer, size: number): Buffer {
  const pages = [first];
  for (let n = first.length; n + first.length <= size; n += first.length) {
    const next = cb.readPage(first.length);
    if (!next) break;
    pages.push(next);
  }
  return Buffer.concat(pages);
}

/** trace_pipe_raw (and snapshot_raw with `snapshot`): sub-buffer images of one CPU. */
export function tracePipeRawFile(tr: TraceArray, cpu: number, snapshot = false): FileOps {
  interface State {
    page: Buffer | null;
    read: number;
  }
  const buffer = () => (snapshot ? tr.snapshotBuffer : tr.buffer);
  return trFile(tr, {
    open(f: OpenFile) {
      tr.traceRef++;
      f.private = { page: null, read: 0 } satisfies State;
    },
    async read(f, size, _pos, abort) {
      const st = f.private as State;
      if (!size) return Buffer.alloc(0);
      for (;;) {
        if (st.page && st.read < st.page.length) {
          const out = st.page.subarray(st.read, Math.min(st.page.length, st.read + size));
          st.read += out.length;
          return Buffer.from(out);
        }
        const cb = buffer().cpus[cpu];
        const page = cb.readPage(size);
        // A splice (which the exec namespace's watcher turns into O_DIRECT reads) moves as many pages as fit.
        if (page && f.flags & O_DIRECT && size >= 2 * page.length) return splicedPages(cb, page, size);
        if (page) {
          st.page = page;
          st.read = 0;
          continue;
        }
        if (!cb.empty) return Buffer.alloc(0);
        if (f.flags & O_NONBLOCK) fail('EAGAIN');
        // A read wakes for any data; a splice (tracing_buffers_splice_read()) once buffer_percent of the CPU's buffer is written.
        await waitOn(() => [buffer()], cpu, abort, f.flags & O_DIRECT && !snapshot ? tr.bufferPercent : 0);
      }
    },
    poll(_f, wake) {
      return pollMask(tr, buffer, cpu, wake);
    },
    release() {
      tr.traceRef--;
    },
  });
}
