/**
 * A remote's side of the trace remote callbacks (struct
 * trace_remote_callbacks) for a remote writing into simple ring buffers —
 * remote_test's module, the simulated hypervisor: it allocates and frees the
 * buffers the tracing side reads, makes them writable, resets them, keeps
 * which events it may write, and writes the selftest event for write_event.
 */
import { fail } from '../../kernel/errno.js';
import { encodeRemoteEvent, type RemoteEventDef, type TraceRemoteDef } from '../../kernel/remote_event.js';
import type { RingBuffer } from '../ring_buffer.js';
import { SimpleRingBuffer } from './simple_ring_buffer.js';

export class RemoteWriter {
  private buffer: SimpleRingBuffer | null = null;
  /** Ids of the events it writes (enable_event()). */
  private readonly enabled = new Set<number>();
  private readonly selftest: RemoteEventDef;

  constructor(
    readonly def: TraceRemoteDef,
    private readonly nrCpus: number,
    /** trace_clock_global(), in ns. */
    private readonly clock: () => number,
  ) {
    const ev = def.events.find((e) => e.name === def.selftest);
    if (!ev) throw new Error(`trace remote ${def.name}: no ${def.selftest} event`);
    this.selftest = ev;
  }

  /** load_trace_buffer(): `size` bytes per CPU, on every possible CPU. */
  load(size: number): RingBuffer {
    if (this.buffer) fail('EINVAL');
    this.buffer = new SimpleRingBuffer(this.nrCpus, size, this.clock);
    return this.buffer.rb;
  }

  /** unload_trace_buffer(). */
  unload(): void {
    this.buffer?.enableTracing(false);
    this.buffer = null;
  }

  /** enable_tracing(). */
  enableTracing(on: boolean): void {
    if (!this.buffer) fail('ENODEV');
    this.buffer.enableTracing(on);
  }

  /** reset(): one CPU's pages and counters. */
  reset(cpu: number): void {
    if (!this.buffer) fail('ENODEV');
    this.buffer.reset(cpu);
  }

  /** enable_event(). */
  enableEvent(id: number, on: boolean): void {
    if (this.def.enableOnlySelftest && id !== this.selftest.id) fail('EINVAL');
    if (on) this.enabled.add(id);
    else this.enabled.delete(id);
  }

  /** What a write of `value` to write_event does on `cpu`: the selftest event, if it can be recorded. */
  writeEvent(cpu: number, value: bigint): void {
    const rec = encodeRemoteEvent(this.selftest, { [this.selftest.fields[0]!.name]: value });
    const written = this.enabled.has(this.selftest.id) && !!this.buffer && this.buffer.write(cpu, rec);
    if (!written && this.def.writeEventRefuses) fail('ENODEV');
  }
}
