/**
 * The writer side of a trace remote (simple_ring_buffer.c): per-CPU rings of
 * sub-buffers shared with the tracing side that reads them, always
 * overwriting the oldest page, with every event's length in array[0]. The
 * pages, the reader page and the counters are a RingBuffer's; what this adds
 * is the writer's status (writable or not) and the remote's descriptor
 * limits.
 */
import { fail } from '../../kernel/errno.js';
import { RingBuffer } from '../ring_buffer.js';
import { BUF_PAGE_HDR_SIZE, PAGE_SIZE } from '../ring_buffer_event.js';

/** The largest kmalloc() (KMALLOC_MAX_SIZE on x86_64): the buffer descriptor must fit in one. */
const KMALLOC_MAX_SIZE = 4 << 20;
/** What the emulator allocates for one remote at most: past it, page allocations fail (ENOMEM). */
const MAX_REMOTE_BYTES = 256 << 20;
const UINT_MAX = 2 ** 32 - 1;

/** __calc_nr_pages_ring_buffer_desc(): pages of one CPU, the reader page included. */
function remoteNrPages(size: number): number {
  return Math.max(Math.ceil(size / (PAGE_SIZE - BUF_PAGE_HDR_SIZE)), 2) + 1;
}

export class SimpleRingBuffer {
  readonly rb: RingBuffer;
  /** SIMPLE_RB_READY (true) or SIMPLE_RB_UNAVAILABLE, per CPU. */
  private readonly writable: boolean[];

  /**
   * Allocates `size` bytes per CPU (trace_remote_alloc_buffer() and the
   * writer's init): E2BIG when the page count overflows the descriptor,
   * ENOMEM when the descriptor or the pages cannot be had.
   */
  constructor(nrCpus: number, size: number, clock: () => number) {
    const nrPages = remoteNrPages(size);
    if (nrPages > UINT_MAX) fail('E2BIG');
    const descSize = 16 + nrCpus * (16 + 8 * nrPages);
    if (descSize > KMALLOC_MAX_SIZE || nrCpus * nrPages * PAGE_SIZE > MAX_REMOTE_BYTES) fail('ENOMEM');
    // The ring holds every page but the reader page.
    this.rb = new RingBuffer(nrCpus, (nrPages - 1) * (PAGE_SIZE - BUF_PAGE_HDR_SIZE), clock);
    this.rb.lengthWord = true;
    this.writable = new Array<boolean>(nrCpus).fill(false);
  }

  /** simple_ring_buffer_enable_tracing() on every CPU. */
  enableTracing(on: boolean): void {
    this.writable.fill(on);
  }

  /** simple_ring_buffer_reserve() + commit(): false when the CPU's buffer is not writable. */
  write(cpu: number, record: Buffer): boolean {
    if (!this.writable[cpu]) return false;
    return this.rb.write(cpu, record);
  }

  /** simple_ring_buffer_reset(): the pages emptied and the counters zeroed; writability unchanged. */
  reset(cpu: number): void {
    this.rb.reset(cpu);
  }
}
