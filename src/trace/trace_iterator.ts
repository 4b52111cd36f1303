/**
 * Reading a trace array's buffer as text (struct trace_iterator): records of
 * every CPU merged in time order, each printed in the layout the options ask
 * for. Non-consuming for `trace` and `snapshot`, consuming for `trace_pipe`.
 */
import type { OutputContext, TraceRecord } from './event_type.js';
import type { EventPrinters, PrintableEventType } from './ftrace_entries.js';
import {
  ContextPrinter,
  LAT_HELP_HEADER,
  funcHelpHeader,
  funcHelpHeaderIrq,
  hexField,
  latencyTraceHeader,
  printLatContext,
  snapshotHelp,
  type ContextFields,
} from './output.js';
import { ALL_CPUS, type RingBuffer } from './ring_buffer.js';
import type { PeekedEvent } from './ring_buffer_cpu.js';
import { eventData } from './ring_buffer_event.js';
import { RingBufferIter } from './ring_buffer_iter.js';
import type { TraceArray } from './trace_array.js';
import type { Tracer, TracerPrintContext } from './tracer.js';

interface TraceIteratorOptions {
  /** Read the snapshot buffer (snapshot, per_cpu/cpuN/snapshot). */
  snapshot?: boolean;
  /** One CPU's buffer, or ALL_CPUS. */
  cpu?: number;
  /** trace_pipe: entries are consumed as they are printed. */
  consuming?: boolean;
}

/** A record as the iterator hands it to printers: the bigint timestamp is made only if a printer asks. */
class BufferRecord implements TraceRecord {
  constructor(
    readonly cpu: number,
    readonly tsNum: number,
    readonly data: Buffer,
  ) {}

  get ts(): bigint {
    return BigInt(this.tsNum);
  }
}

interface Entry {
  cpu: number;
  ev: PeekedEvent;
  /** Lost events to report before it: -1 for an unknown number. */
  lost: number;
  /** Generation of its page when found. */
  gen: number;
}

export class TraceIterator implements TracerPrintContext, OutputContext {
  readonly cpuFile: number;
  readonly snapshot: boolean;
  /** Reads the snapshot buffer: the `snapshot` file, or `trace` under a tracer that keeps its maximum there (print_max). */
  private readonly maxBuffer: boolean;
  readonly consuming: boolean;
  readonly tracer: Tracer;
  readonly latencyFormat: boolean;
  readonly timeInNs: boolean;
  /** The buffer had overruns when opened: mark where each CPU's events start. */
  private readonly annotate: boolean;
  private readonly started = new Set<number>();
  private readonly iters: (RingBufferIter | null)[] = [];
  /** Peeked next record of each CPU (undefined: not peeked yet). */
  private readonly heads: (Entry | null | undefined)[] = [];
  private readonly cpuList: number[];
  private readonly fixedBuffer: RingBuffer | null;
  /** Records before the snapshot's start, not shown (skipped_entries, all CPUs). */
  private skipped = 0;
  /** Index of the current entry (iter->idx): from 0 in `trace`, from 1 in each trace_pipe read. */
  idx = -1;
  /** The entry being printed (for lookahead on its CPU). */
  private current: Entry | null = null;
  /** A consuming lookahead already consumed the current entry (TRACE_TYPE_NO_CONSUME). */
  private currentConsumed = false;
  private readonly contextPrinter: ContextPrinter;
  /** The context columns of the record being printed (reused: one per line would be garbage). */
  private readonly fields: ContextFields = { comm: '', pid: 0, cpu: 0, flags: 0, preemptCount: 0, ts: 0 };

  constructor(
    readonly tr: TraceArray,
    opts: TraceIteratorOptions = {},
  ) {
    this.cpuFile = opts.cpu ?? ALL_CPUS;
    this.snapshot = opts.snapshot ?? false;
    this.consuming = opts.consuming ?? false;
    this.tracer = tr.tracer;
    this.maxBuffer = this.snapshot || (!this.consuming && this.tracer.printMax === true);
    this.latencyFormat = tr.options.has('latency-format');
    this.timeInNs = tr.clock.inNs;
    this.contextPrinter = new ContextPrinter(tr.profile);
    const rb = this.buffer;
    this.annotate = !this.consuming && rb.overruns() > 0;
    // A non-consuming reader keeps reading the buffer it opened, even across a snapshot swap.
    this.fixedBuffer = this.consuming ? null : rb;
    if (this.consuming) this.idx = 0;
    this.cpuList = this.cpuFile === ALL_CPUS ? rb.cpus.map((cb) => cb.cpu) : [this.cpuFile];
    if (!this.consuming) {
      for (const cb of rb.cpus) {
        const it = this.cpuFile === ALL_CPUS || this.cpuFile === cb.cpu ? new RingBufferIter(cb) : null;
        this.iters.push(it);
        // tracing_iter_reset(): a maximum swapped in keeps older records on CPUs never reset; they are skipped.
        if (it && this.maxBuffer) {
          const start = this.timeStart;
          for (let ev = it.peek(); ev && ev.ts < start; ev = it.peek()) {
            it.advance();
            this.skipped++;
          }
        }
      }
    }
  }

  /** Releases the per-CPU readers (the buffers may be resized again). */
  close(): void {
    for (const it of this.iters) it?.close();
  }

  get buffer(): RingBuffer {
    return this.fixedBuffer ?? (this.maxBuffer ? this.tr.snapshotBuffer : this.tr.buffer);
  }

  private get timeStart(): number {
    return this.maxBuffer ? this.tr.snapshotTimeStart : this.tr.timeStart;
  }

  option(name: string): boolean {
    return this.tr.option(name);
  }

  /** trace_empty(). */
  empty(): boolean {
    if (!this.consuming) return this.findNext() === null;
    for (const cpu of this.cpuList) if (!this.buffer.cpus[cpu].empty) return false;
    return true;
  }

  /** __find_next_entry(): the earliest pending record across the CPUs read. */
  private findNext(): Entry | null {
    let best: Entry | null = null;
    for (const cpu of this.cpuList) {
      let e: Entry | null | undefined;
      if (this.consuming) {
        const ev = this.buffer.cpus[cpu].peek();
        e = ev ? { cpu, ev, lost: ev.lost, gen: ev.page.generation } : null;
      } else {
        // A non-consuming reader's next record per CPU stays valid until that CPU advances.
        e = this.heads[cpu];
        // ...unless the writer went over its page meanwhile.
        if (e && e.ev.page.generation !== e.gen) e = undefined;
        if (e === undefined) {
          const it = this.iters[cpu]!;
          const ev = it.peek();
          e = ev ? { cpu, ev, lost: it.dropped() ? -1 : 0, gen: ev.page.generation } : null;
          this.heads[cpu] = e;
        }
      }
      if (e && (!best || e.ev.ts < best.ev.ts)) best = e;
    }
    return best;
  }

  /** The next record, or null when none is left (trace_find_next_entry_inc()). */
  next(): Entry | null {
    const e = this.findNext();
    if (!e) return null;
    this.idx++;
    if (!this.consuming) {
      this.iters[e.cpu]!.advance();
      this.heads[e.cpu] = undefined;
    }
    return e;
  }

  /** trace_iterator_reset() at the start of each trace_pipe read. */
  resetIndex(): void {
    this.idx = 0;
    this.started.clear();
  }

  /** trace_consume(): for consuming readers, once the record was printed. */
  consume(e: Entry): void {
    if (this.currentConsumed) {
      this.currentConsumed = false;
      return;
    }
    if (this.consuming) this.buffer.cpus[e.cpu].consume();
  }

  /** The next record on the current entry's CPU (get_return_for_leaf()). */
  peekSameCpu(): TraceRecord | null {
    const e = this.current;
    if (!e) return null;
    if (this.consuming) {
      const cb = this.buffer.cpus[e.cpu];
      if (!this.currentConsumed) {
        cb.consume();
        this.currentConsumed = true;
      }
      const ev = cb.peek();
      return ev ? this.record({ cpu: e.cpu, ev, lost: 0, gen: ev.page.generation }) : null;
    }
    const ev = this.iters[e.cpu]?.peek();
    return ev ? this.record({ cpu: e.cpu, ev, lost: 0, gen: ev.page.generation }) : null;
  }

  /** The peeked record was printed with the current one. */
  skipSameCpu(): void {
    const e = this.current;
    if (!e) return;
    if (this.consuming) {
      // The next consume() takes the peeked record.
      this.currentConsumed = false;
      return;
    }
    this.iters[e.cpu]?.advance();
    this.heads[e.cpu] = undefined;
  }

  record(e: Entry): BufferRecord {
    const buf = e.ev.page.buf;
    const { start, len } = eventData(buf, e.ev.off);
    return new BufferRecord(e.cpu, e.ev.ts, buf.subarray(start, start + len));
  }

  // ------------------------------------------------------------------ header

  /** s_show() of the header: `# tracer:` then the legend (or the snapshot help). */
  header(): string {
    const tr = this.tr;
    let s = `# tracer: ${this.tracer.name}\n#\n`;
    if (this.snapshot && this.empty()) return s + snapshotHelp(tr.allocatedSnapshot, this.cpuFile !== ALL_CPUS);
    if (this.tracer.printHeader) return s + this.tracer.printHeader(this);
    return s + this.defaultHeader();
  }

  /** trace_default_header(). */
  defaultHeader(): string {
    const tr = this.tr;
    if (!tr.options.has('context-info')) return '';
    const verbose = tr.options.has('verbose');
    const nr = tr.tracing.kernel.numOnlineCpus();
    if (this.latencyFormat) {
      if (this.empty()) return '';
      return latencyTraceHeader(tr, this.buffer, this.maxBuffer ? tr.maxTrace : undefined, this.skipped) + (verbose ? '' : LAT_HELP_HEADER);
    }
    if (verbose) return '';
    const tgid = tr.options.has('record-tgid');
    return tr.options.has('irq-info') ? funcHelpHeaderIrq(this.buffer, nr, tgid) : funcHelpHeader(this.buffer, nr, tgid);
  }

  // ------------------------------------------------------------------ records

  /** The context columns of a record in the current layout. */
  context(rec: TraceRecord): string {
    const ts = rec instanceof BufferRecord ? rec.tsNum : Number(rec.ts);
    return this.contextOf(rec, ts, this.idx, ts);
  }

  private contextOf(rec: TraceRecord, ts: number, idx: number, nextTs: number): string {
    const tr = this.tr;
    const d = rec.data;
    const pid = d.readInt32LE(4);
    const c = this.fields;
    c.comm = tr.tracing.cmdlines.find(pid);
    c.pid = pid;
    c.cpu = rec.cpu;
    c.flags = d[2];
    c.preemptCount = d[3];
    c.ts = ts;
    if (this.latencyFormat) {
      return printLatContext(c, {
        profile: tr.profile,
        verbose: tr.options.has('verbose'),
        inNs: this.timeInNs,
        timeStart: this.timeStart,
        nextTs,
        idx,
      });
    }
    const tgid = tr.options.has('record-tgid') ? tr.tracing.cmdlines.findTgid(pid) : undefined;
    return this.contextPrinter.print(c, tgid, tr.options.has('irq-info'), this.timeInNs);
  }

  /** print_trace_line(): one record (and the lost-events note before it). */
  line(e: Entry): string {
    const tr = this.tr;
    const rec = this.record(e);
    this.current = e;
    this.currentConsumed = false;
    let s = '';
    if (e.lost) s += e.lost < 0 ? `CPU:${e.cpu} [LOST EVENTS]\n` : `CPU:${e.cpu} [LOST ${e.lost} EVENTS]\n`;
    if (this.tracer.printLine) {
      const out = this.tracer.printLine(rec, this);
      if (out !== undefined) return s + out;
    }
    const d = rec.data;
    const type = d.readUInt16LE(0);
    const ev = tr.tracing.eventTypes.byId(type) as (PrintableEventType & EventPrinters) | undefined;
    const opt = tr.options;
    if (ev?.msgOnly && opt.has('trace_printk') && opt.has('printk-msg-only')) return s + ev.msgOnly(rec);
    const ctxInfo = opt.has('context-info');
    if (opt.has('bin')) {
      if (ctxInfo) s += pidCpuTs(rec).toString('latin1');
      return s + (ev ? `type: ${type}\n` : '');
    }
    if (opt.has('hex')) {
      if (ctxInfo) {
        const b = pidCpuTs(rec);
        s += hexField(b.subarray(0, 4)) + hexField(b.subarray(4, 8)) + hexField(b.subarray(8, 16));
      }
      if (ev) s += `type: ${type}\n`;
      return s + '\n';
    }
    if (opt.has('raw')) {
      if (ctxInfo) s += `${d.readInt32LE(4)} ${e.cpu} ${rec.ts} `;
      if (!ev) return s + `${type} ?\n`;
      return s + withNewline(ev.raw ? ev.raw(rec, this) : `type: ${type}`);
    }
    // print_trace_fmt()
    if (this.annotate && opt.has('annotate') && !this.started.has(e.cpu)) {
      this.started.add(e.cpu);
      if (this.idx > 1) s += `##### CPU ${e.cpu} buffer started ####\n`;
    }
    if (ctxInfo) {
      const nextTs = this.latencyFormat ? this.peekNextTs(rec.tsNum) : 0;
      s += this.contextOf(rec, rec.tsNum, this.idx, nextTs);
    }
    if (!ev) return s + `Unknown type ${type}\n`;
    if (opt.has('fields')) {
      if (ev.fieldsOutput) return s + withNewline(ev.fieldsOutput(rec, this));
      if (ev.internal) return s + `UNKNOWN TYPE ${type}\n`;
    }
    const out = ev.output(rec, this);
    return ev.outputNoNewline ? s + out + '\n' : s + withNewline(out);
  }

  /** The timestamp of the record after the current one (latency format's delay mark). */
  private peekNextTs(current: number): number {
    const e = this.findNext();
    return e ? e.ev.ts : current;
  }
}

/** Event printers return their text with or without the final newline; the line gets exactly one. */
function withNewline(s: string): string {
  return s.charCodeAt(s.length - 1) === 10 ? s : s + '\n';
}

/** The pid, CPU and timestamp of the bin and hex layouts. */
function pidCpuTs(rec: BufferRecord): Buffer {
  const b = Buffer.alloc(16);
  b.writeInt32LE(rec.data.readInt32LE(4), 0);
  b.writeInt32LE(rec.cpu, 4);
  b.writeBigUInt64LE(rec.ts, 8);
  return b;
}
