/**
 * A non-consuming reader of one CPU's buffer (struct ring_buffer_iter), as the
 * `trace` file uses: it walks from the reader page through the ring up to the
 * commit, and notices when the writer overwrote the page under it.
 */
import type { BufferPage } from './ring_buffer_page.js';
import type { CpuBuffer, PeekedEvent } from './ring_buffer_cpu.js';
import {
  BUF_PAGE_HDR_SIZE,
  RINGBUF_TYPE_PADDING,
  RINGBUF_TYPE_TIME_EXTEND,
  RINGBUF_TYPE_TIME_STAMP,
  eventLengthAt,
  extendValueAt,
  timeDeltaOf,
} from './ring_buffer_event.js';

export class RingBufferIter {
  private page!: BufferPage;
  /** Offset of the current event in the page's data area. */
  private head = 0;
  private readStamp = 0;
  private pageGen = 0;
  private cacheRead = 0;
  private cacheReader!: BufferPage;
  private cacheListGen = 0;
  /** The writer overwrote events this iterator had not shown yet. */
  missed = false;

  private closed = false;

  /** ring_buffer_read_start(): the CPU buffer may not be resized until close(). */
  constructor(readonly cpu: CpuBuffer) {
    cpu.resizeDisabled++;
    this.reset();
  }

  /** ring_buffer_read_finish(). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cpu.resizeDisabled--;
  }

  /** rb_iter_reset(): back to the consuming reader's position. */
  reset(): void {
    const cb = this.cpu;
    this.page = cb.reader;
    this.head = cb.reader.read;
    this.pageGen = this.page.generation;
    this.cacheReader = cb.reader;
    this.cacheRead = cb.read;
    this.cacheListGen = cb.listGen;
    this.readStamp = this.head ? cb.readStamp : this.page.timeStamp;
  }

  private incPage(): void {
    const cb = this.cpu;
    this.page = this.page === cb.reader ? cb.head : this.page.next;
    this.head = 0;
    this.pageGen = this.page.generation;
    this.readStamp = this.page.timeStamp;
  }

  /** ring_buffer_iter_empty(). */
  private atEnd(): boolean {
    const cb = this.cpu;
    const commitPage = cb.tail;
    const commit = commitPage.commit;
    return (
      (this.page === commitPage && this.head >= commit) ||
      (this.page === cb.reader && commitPage === cb.head && cb.head.read === commit && this.head === cb.reader.commit)
    );
  }

  /** The next data event and its timestamp, or null at the end (ring_buffer_iter_peek()). */
  peek(): PeekedEvent | null {
    const cb = this.cpu;
    if (this.cacheRead !== cb.read || this.cacheReader !== cb.reader || this.cacheListGen !== cb.listGen) this.reset();
    let ts = 0;
    for (let loops = 0, max = cb.nrPages + 4; loops < max; loops++) {
      if (this.atEnd() || cb.numEntries === 0) return null;
      const page = this.page;
      if (this.head >= page.commit) {
        this.incPage();
        continue;
      }
      const off = BUF_PAGE_HDR_SIZE + this.head;
      if (page.generation !== this.pageGen || this.head + 4 > page.commit) {
        // The writer went over this page: start it again and say so.
        this.pageGen = page.generation;
        this.head = 0;
        this.readStamp = page.timeStamp;
        this.missed = true;
        continue;
      }
      const h = page.buf.readUInt32LE(off);
      const type = h & 31;
      const len = eventLengthAt(page.buf, off);
      if (len < 0) {
        this.incPage();
        continue;
      }
      if (this.head + len > page.commit) {
        this.head = page.commit;
        continue;
      }
      if (type === RINGBUF_TYPE_PADDING) {
        this.head += len;
        continue;
      }
      if (type === RINGBUF_TYPE_TIME_EXTEND) {
        this.readStamp += extendValueAt(page.buf, off);
        this.head += len;
        loops--;
        continue;
      }
      if (type === RINGBUF_TYPE_TIME_STAMP) {
        ts = this.readStamp = extendValueAt(page.buf, off);
        this.head += len;
        loops--;
        continue;
      }
      if (!ts) ts = this.readStamp + timeDeltaOf(h);
      return { page, off, ts, lost: 0 };
    }
    return null;
  }

  /** Steps past the event peek() returned. */
  advance(): void {
    const page = this.page;
    const off = BUF_PAGE_HDR_SIZE + this.head;
    if (this.head >= page.commit) return;
    const h = page.buf.readUInt32LE(off);
    const len = eventLengthAt(page.buf, off);
    if (len < 0) return;
    this.readStamp += timeDeltaOf(h);
    this.head += len;
    if (this.head >= page.commit && page !== this.cpu.tail) this.incPage();
  }

  /** ring_buffer_iter_dropped(): reports (once) that events were missed. */
  dropped(): boolean {
    const d = this.missed;
    this.missed = false;
    return d;
  }
}
