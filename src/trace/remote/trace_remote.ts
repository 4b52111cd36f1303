/**
 * A trace remote as tracing sees it (struct trace_remote): an entity outside
 * the kernel writing events into ring buffers the kernel only reads. Its
 * buffer is loaded on first use (tracing on, a reader) and unloaded as soon
 * as nothing needs it — tracing off, no reader, nothing left to read —, so
 * buffer_size_kb says `(loaded)` or `(unloaded)`. Its events are switched on
 * and off in the remote itself.
 */
import { fail } from '../../kernel/errno.js';
import type { RemoteEventDef } from '../../kernel/remote_event.js';
import { ALL_CPUS, type RingBuffer } from '../ring_buffer.js';
import type { RemoteWriter } from './remote_writer.js';

/** A remote's event (struct remote_event) and whether it is on. */
export interface RemoteEvent {
  readonly def: RemoteEventDef;
  enabled: boolean;
}

const UINT_MAX = 2 ** 32 - 1;

export class TraceRemote {
  /** Bytes per CPU the next load allocates (trace_buffer_size). */
  bufferSize = 7 << 10;
  tracingOn = false;
  /** Open readers (trace, trace_pipe): the buffer stays loaded while any is. */
  nrReaders = 0;
  /** The loaded buffer, read here and written by the remote. */
  buffer: RingBuffer | null = null;
  readonly events: readonly RemoteEvent[];

  constructor(
    readonly writer: RemoteWriter,
    readonly nrCpus: number,
  ) {
    this.events = writer.def.events.map((def) => ({ def, enabled: false }));
  }

  get name(): string {
    return this.writer.def.name;
  }

  get loaded(): boolean {
    return this.buffer !== null;
  }

  /** trace_remote_load(). */
  private load(): RingBuffer {
    return (this.buffer ??= this.writer.load(this.bufferSize));
  }

  /** trace_remote_try_unload(): only when not read, not writable and empty. */
  tryUnload(): void {
    const buffer = this.buffer;
    if (!buffer || this.nrReaders || this.tracingOn || !buffer.empty()) return;
    this.buffer = null;
    this.writer.unload();
  }

  /** tracing_on: a non-zero value loads the buffer and lets the remote write. */
  setTracingOn(on: boolean): void {
    if (on) {
      if (this.tracingOn) return;
      this.load();
      try {
        this.writer.enableTracing(true);
      } catch (e) {
        this.tryUnload();
        throw e;
      }
      this.tracingOn = true;
    } else {
      if (!this.tracingOn) return;
      this.writer.enableTracing(false);
      this.tracingOn = false;
      this.tryUnload();
    }
  }

  /** buffer_size_kb's write (KiB): EINVAL for 0 or a size that overflows, EBUSY while loaded. */
  setBufferSizeKb(kb: bigint): void {
    if (kb === 0n || kb << 10n >= 1n << 64n) fail('EINVAL');
    if (this.loaded) fail('EBUSY');
    this.bufferSize = Number(kb << 10n);
  }

  bufferSizeText(): string {
    return `${Math.floor(this.bufferSize / 1024)} (${this.loaded ? 'loaded' : 'unloaded'})\n`;
  }

  /** trace's write (trace_remote_reset()): one CPU or all emptied, then unloaded if nothing needs it. */
  reset(cpu: number): void {
    const buffer = this.buffer;
    if (!buffer) return;
    for (const c of cpu === ALL_CPUS ? buffer.cpus.map((_, i) => i) : [cpu]) this.writer.reset(c);
    this.tryUnload();
  }

  /** trace_remote_get(): a reader holds the (loaded) buffer. */
  get(): void {
    if (this.nrReaders === UINT_MAX) fail('EBUSY');
    this.load();
    this.nrReaders++;
  }

  /** trace_remote_put(). */
  put(): void {
    if (!this.nrReaders) return;
    this.nrReaders--;
    if (!this.nrReaders) this.tryUnload();
  }

  /** Whether the loaded buffer has `cpu` (every CPU has one when ALL_CPUS). */
  hasCpu(cpu: number): boolean {
    return cpu === ALL_CPUS || (!!this.buffer && cpu < this.buffer.cpus.length);
  }

  /** trace_remote_enable_event(). */
  enableEvent(ev: RemoteEvent, on: boolean): void {
    if (ev.enabled === on) return;
    this.writer.enableEvent(ev.def.id, on);
    ev.enabled = on;
  }

  /** events/enable's write: every event, the first error reported once all were tried. */
  enableAll(on: boolean): void {
    let err: unknown;
    for (const ev of this.events) {
      try {
        this.enableEvent(ev, on);
      } catch (e) {
        err ??= e;
      }
    }
    if (err) throw err;
  }

  /** events/enable's read: 0, 1, or X when mixed. */
  enabledState(): string {
    const states = new Set(this.events.map((e) => e.enabled));
    return states.size > 1 ? 'X' : states.has(true) ? '1' : '0';
  }

  findEvent(id: number): RemoteEvent | undefined {
    return this.events.find((e) => e.def.id === id);
  }
}
