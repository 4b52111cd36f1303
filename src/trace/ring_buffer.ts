/**
 * A trace buffer (struct trace_buffer): one ring buffer per CPU sharing the
 * sub-buffer size, overwrite mode, clock and timestamp mode; resizing; and the
 * waiters of blocking readers (trace_pipe, trace_pipe_raw).
 */
import { fail } from '../kernel/errno.js';
import { CpuBuffer, type RingBufferParent } from './ring_buffer_cpu.js';
import { BUF_PAGE_HDR_SIZE, PAGE_SIZE, RB_LEN_TIME_EXTEND } from './ring_buffer_event.js';

/** Every CPU at once, as RING_BUFFER_ALL_CPUS. */
export const ALL_CPUS = -1;

type Waiter = () => void;

export class RingBuffer implements RingBufferParent {
  readonly cpus: CpuBuffer[];
  subbufOrder = 0;
  overwrite = true;
  absTimeStamps = false;
  /** Every event keeps its length in array[0], whatever its size (as the simple ring buffer's writer lays them out). */
  lengthWord = false;
  /** ring_buffer_record_disable() nesting (tracing stopped, resize...). */
  recordDisabled = 0;
  /** Readers waiting for data: on which CPU (or any), and how full it must be (percent; 0: any data). */
  private readonly waiters = new Map<Waiter, { cpu: number; full: number }>();
  private wakePending = false;

  constructor(
    nrCpus: number,
    size: number,
    /** The trace clock, in its own units. */
    public clock: () => number,
  ) {
    const nrPages = this.pagesFor(size);
    this.cpus = Array.from({ length: nrCpus }, (_, cpu) => new CpuBuffer(cpu, this, nrPages));
  }

  get subbufSize(): number {
    return PAGE_SIZE << this.subbufOrder;
  }

  /** Data bytes in one sub-buffer. */
  get subbufCapacity(): number {
    return this.subbufSize - BUF_PAGE_HDR_SIZE;
  }

  get maxDataSize(): number {
    return this.subbufCapacity - 8;
  }

  /** ring_buffer_max_event_size(): the largest payload one event may have. */
  maxEventSize(): number {
    return this.absTimeStamps ? this.maxDataSize - RB_LEN_TIME_EXTEND : this.maxDataSize;
  }

  now(): number {
    return this.clock();
  }

  /** Pages needed for `size` bytes per CPU (at least two). */
  pagesFor(size: number): number {
    return Math.max(2, Math.ceil(size / this.subbufCapacity));
  }

  /** Bytes a CPU buffer holds (ring_buffer_size()). */
  size(cpu: number): number {
    return this.cpus[cpu].nrPages * this.subbufCapacity;
  }

  /**
   * Reserves room for an event on `cpu`: the payload offset in the returned
   * page buffer, or null when not recorded. Pair with commit(cpu).
   */
  reserve(cpu: number, length: number): { buf: Buffer; off: number } | null {
    if (this.recordDisabled) return null;
    const cb = this.cpus[cpu];
    if (!cb || cb.recordDisabled || length > this.maxDataSize) return null;
    const off = cb.reserve(length);
    if (off < 0) return null;
    return { buf: cb.reservedPage().buf, off };
  }

  commit(cpu: number): void {
    this.cpus[cpu].commit();
  }

  /** ring_buffer_write(): one event, copied in. */
  write(cpu: number, data: Buffer): boolean {
    if (this.recordDisabled) return false;
    const cb = this.cpus[cpu];
    if (!cb || cb.recordDisabled || data.length > this.maxDataSize) return false;
    return cb.write(data);
  }

  // ------------------------------------------------------------ counters

  entries(): number {
    let n = 0;
    for (const cb of this.cpus) n += cb.numEntries;
    return n;
  }

  overruns(): number {
    let n = 0;
    for (const cb of this.cpus) n += cb.overrun;
    return n;
  }

  empty(cpu = ALL_CPUS): boolean {
    if (cpu !== ALL_CPUS) return this.cpus[cpu].empty;
    return this.cpus.every((cb) => cb.empty);
  }

  // ------------------------------------------------------------ state changes

  reset(cpu = ALL_CPUS): void {
    for (const cb of this.cpusOf(cpu)) cb.reset();
  }

  /** ring_buffer_resize(): `size` bytes per CPU, data kept where it still fits. */
  resize(size: number, cpu = ALL_CPUS): void {
    const nrPages = this.pagesFor(size);
    if (this.cpusOf(cpu).some((cb) => cb.resizeDisabled > 0)) fail('EBUSY');
    for (const cb of this.cpusOf(cpu)) {
      const diff = nrPages - cb.nrPages;
      if (diff > 0) cb.insertPages(diff);
      else if (diff < 0) cb.removePages(-diff);
    }
  }

  /** ring_buffer_subbuf_order_set(): new sub-buffers of the same total capacity; events are lost. */
  setSubbufOrder(order: number): void {
    if (order < 0 || order > 7) fail('EINVAL');
    if (order === this.subbufOrder) return;
    if (this.cpus.some((cb) => cb.resizeDisabled > 0)) fail('EBUSY');
    const oldCapacity = this.subbufCapacity;
    this.subbufOrder = order;
    for (const cb of this.cpus) {
      const nrPages = Math.max(2, Math.ceil((oldCapacity * cb.nrPages) / this.subbufCapacity));
      cb.allocate(nrPages);
    }
  }

  private cpusOf(cpu: number): CpuBuffer[] {
    if (cpu === ALL_CPUS) return this.cpus;
    const cb = this.cpus[cpu];
    return cb ? [cb] : [];
  }

  // ------------------------------------------------------------ waiting readers

  /**
   * Registers a reader waiting for data on `cpu` (or any), woken once at
   * least `full` percent of that CPU's buffer is written (0: any data), as
   * ring_buffer_wait() and ring_buffer_poll_wait() do; returns the
   * unregister function. A waiter registered again (a poll of the same
   * file) is kept once, with its latest condition.
   */
  addWaiter(cpu: number, wake: Waiter, full = 0): () => void {
    const w = { cpu, full };
    this.waiters.set(wake, w);
    return () => {
      if (this.waiters.get(wake) === w) this.waiters.delete(wake);
    };
  }

  /** Wakes every waiter (ring_buffer_wake_waiters()); they re-check their condition. */
  wakeWaiters(): void {
    const all = [...this.waiters.keys()];
    this.waiters.clear();
    for (const wake of all) wake();
  }

  /**
   * An event was committed on `cpu`: the waiters whose condition now holds
   * wake (rb_wakeups()), once the burst of commits in progress is done. A
   * reader waiting for a fuller buffer sleeps on: waking it on every event
   * would make a poller's own system calls, traced, wake it again.
   */
  committed(cpu: number): void {
    void cpu;
    if (this.waiters.size === 0 || this.wakePending) return;
    this.wakePending = true;
    queueMicrotask(() => {
      this.wakePending = false;
      const ready: Waiter[] = [];
      for (const [wake, w] of this.waiters) if (this.watermarkHit(w.cpu, w.full)) ready.push(wake);
      for (const wake of ready) this.waiters.delete(wake);
      for (const wake of ready) wake();
    });
  }

  /** rb_watermark_hit(): data on `cpu`, and at least `full` percent of it written when asked. */
  watermarkHit(cpu: number, full: number): boolean {
    if (cpu === ALL_CPUS) return !this.empty();
    const cb = this.cpus[cpu];
    if (cb.empty) return false;
    if (!full) return true;
    if (cb.reader === cb.tail) return false;
    const dirty = cb.dirtyPages() + 1;
    return dirty * 100 >= full * cb.nrPages;
  }
}
