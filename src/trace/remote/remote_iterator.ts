/**
 * A reader of a trace remote (struct trace_remote_iterator): consuming
 * (trace_pipe) or not (trace), of one CPU or of all, merged by timestamp,
 * and the remote's line layout: `[CPU]\tSECS.USECS: ` then the event's own
 * print, after a `CPU:N [LOST M EVENTS]` line when events were lost.
 */
import { decodeRemoteEvent, remoteEventId } from '../../kernel/remote_event.js';
import { ALL_CPUS, type RingBuffer } from '../ring_buffer.js';
import { eventData, type PeekedEvent } from '../ring_buffer_cpu.js';
import { RingBufferIter } from '../ring_buffer_iter.js';
import type { TraceRemote } from './trace_remote.js';

interface Found {
  cpu: number;
  ts: number;
  ev: PeekedEvent;
  lost: number;
}

export class RemoteIterator {
  /** Non-consuming: one ring buffer iterator per CPU read. */
  private readonly iters = new Map<number, RingBufferIter>();
  private readonly buffer: RingBuffer;

  /** The remote's buffer must be loaded and held (TraceRemote.get()). */
  constructor(
    readonly remote: TraceRemote,
    readonly cpu: number,
    readonly consuming: boolean,
  ) {
    this.buffer = remote.buffer!;
    if (!consuming) for (const c of this.cpus()) this.iters.set(c, new RingBufferIter(this.buffer.cpus[c]!));
  }

  private cpus(): number[] {
    return this.cpu === ALL_CPUS ? this.buffer.cpus.map((_, i) => i) : [this.cpu];
  }

  /** ring_buffer_read_finish() of each iterator. */
  close(): void {
    for (const it of this.iters.values()) it.close();
  }

  empty(): boolean {
    return this.buffer.empty(this.cpu);
  }

  private peek(cpu: number): { ev: PeekedEvent; lost: number } | null {
    if (this.buffer.empty(cpu)) return null;
    if (this.consuming) {
      const ev = this.buffer.cpus[cpu]!.peek();
      return ev && { ev, lost: ev.lost };
    }
    const it = this.iters.get(cpu)!;
    const ev = it.peek();
    return ev && { ev, lost: it.dropped() ? 1 : 0 };
  }

  /** trace_remote_iter_read_event(): the next event, the oldest of all CPUs when reading all. */
  private next(): Found | null {
    let found: Found | null = null;
    for (const cpu of this.cpus()) {
      const p = this.peek(cpu);
      if (p && (!found || p.ev.ts < found.ts)) found = { cpu, ts: p.ev.ts, ev: p.ev, lost: p.lost };
    }
    return found;
  }

  /** trace_remote_iter_move(). */
  private move(f: Found): void {
    if (this.consuming) this.buffer.cpus[f.cpu]!.consume();
    else this.iters.get(f.cpu)!.advance();
  }

  /** trace_remote_iter_print_event(). */
  private line(f: Found): string {
    let out = f.lost ? `CPU:${f.cpu} [LOST ${f.lost} EVENTS]\n` : '';
    const us = Math.floor(f.ts / 1000);
    const secs = Math.floor(us / 1e6);
    out += `[${String(f.cpu).padStart(3, '0')}]\t${String(secs).padStart(5)}.${String(us % 1e6).padStart(6, '0')}: `;
    const { start, len } = eventData(f.ev.page.buf, f.ev.off);
    const rec = f.ev.page.buf.subarray(start, start + len);
    const id = remoteEventId(rec);
    const ev = this.remote.findEvent(id);
    if (!ev) return `${out}UNKNOWN id=${id}\n`;
    const text = ev.def.show(decodeRemoteEvent(ev.def, rec));
    return `${out}${ev.def.name}${text ? ` ${text}` : ''}\n`;
  }

  /** Lines of the events read, as many as fit in `max` bytes (all of them without a limit); each read is moved past. */
  read(max = Infinity): string {
    let text = '';
    for (;;) {
      const f = this.next();
      if (!f) break;
      const l = this.line(f);
      if (text.length + l.length > max) break;
      text += l;
      this.move(f);
    }
    return text;
  }
}
