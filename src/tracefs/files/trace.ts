/**
 * `trace` and per_cpu/cpuN/trace: the buffer as text, header first, read
 * without consuming; opening for write with O_TRUNC empties the buffer.
 * The text is produced as it is read, so a reader of a full buffer that
 * stops early (head) costs only what it read.
 */
import { ALL_CPUS } from '../../trace/ring_buffer.js';
import type { TraceArray } from '../../trace/trace_array.js';
import { TraceIterator } from '../../trace/trace_iterator.js';
import { O_TRUNC, type FileOps, type OpenFile } from '../node.js';
import { trFile } from './common.js';

/** Per-open state of a text reader of a buffer (the seq_file of s_show()). */
export class TraceReader {
  private iter!: TraceIterator;
  private pending = '';
  private pos = 0;
  private started = false;
  private done = false;

  constructor(private readonly make: () => TraceIterator) {
    this.restart();
  }

  private restart(): void {
    this.iter?.close();
    this.iter = this.make();
    this.pending = '';
    this.pos = 0;
    this.started = false;
    this.done = false;
  }

  close(): void {
    this.iter.close();
  }

  /** Up to `size` bytes at `pos` (sequential reads continue; others start over). */
  read(size: number, pos: number): Buffer {
    if (pos !== this.pos) {
      this.restart();
      while (this.pos < pos) {
        const skipped = this.take(pos - this.pos);
        if (skipped.length === 0) break;
      }
    }
    return this.take(size);
  }

  private take(size: number): Buffer {
    this.fill(size);
    const out = this.pending.slice(0, size);
    this.pending = this.pending.slice(out.length);
    this.pos += out.length;
    return Buffer.from(out, 'latin1');
  }

  private fill(size: number): void {
    if (!this.started) {
      this.started = true;
      this.pending += this.iter.header();
    }
    while (!this.done && this.pending.length < size) {
      const e = this.iter.next();
      if (!e) {
        this.done = true;
        break;
      }
      this.pending += this.iter.line(e);
    }
  }
}

interface TraceFileOptions {
  cpu?: number;
}

/** tracing_open(): the trace file of `tr` (one CPU or all). */
export function traceFile(tr: TraceArray, opts: TraceFileOptions = {}): FileOps {
  const cpu = opts.cpu ?? ALL_CPUS;
  interface State {
    reader?: TraceReader;
    paused?: boolean;
  }
  return trFile(tr, {
    open(f: OpenFile) {
      const st: State = {};
      f.private = st;
      if (f.writable && f.flags & O_TRUNC) {
        // A latency tracer's `trace` is its maximum: that is what truncating clears.
        if (tr.tracer.printMax) tr.clearSnapshot(cpu);
        else tr.reset(cpu);
      }
      if (f.readable) {
        if (tr.options.has('pause-on-trace')) {
          tr.stop();
          st.paused = true;
        }
        st.reader = new TraceReader(() => new TraceIterator(tr, { cpu }));
      }
    },
    read(f, size, pos) {
      return (f.private as State).reader!.read(size, pos);
    },
    // tracing_write_stub(): writes are accepted and ignored.
    write(_f, data) {
      return data.length;
    },
    release(f) {
      const st = f.private as State | undefined;
      st?.reader?.close();
      if (st?.paused) tr.start();
    },
  });
}
