/** One sub-buffer of a per-CPU ring buffer, with the bookkeeping struct buffer_page keeps beside it. */
import { BUF_PAGE_HDR_SIZE, writeU64 } from './ring_buffer_event.js';

export class BufferPage {
  private data: Buffer | null = null;
  /** Next free byte in the data area (the writer's tail index). */
  write = 0;
  /** Bytes of the data area committed (readers stop here). */
  commit = 0;
  /** Events reserved on this page. */
  entries = 0;
  /** The consuming reader's position (on the reader page). */
  read = 0;
  /** Where the last event ended when the page was padded out. */
  realEnd = 0;
  /** Timestamp of the first event on the page (the header's time_stamp). */
  timeStamp = 0;
  /** Bumped each time the writer starts the page over: tells iterators their page was overwritten. */
  generation = 0;
  next: BufferPage = this;
  prev: BufferPage = this;

  constructor(readonly size: number) {}

  /** The sub-buffer as the kernel lays it out: 16-byte header, then event data (allocated on first use, let go when emptied). */
  get buf(): Buffer {
    return (this.data ??= Buffer.alloc(this.size));
  }

  get capacity(): number {
    return this.size - BUF_PAGE_HDR_SIZE;
  }

  /** Starts the page over for the writer (rb_tail_page_update / rb_clear_buffer_page). */
  clear(): void {
    this.write = 0;
    this.commit = 0;
    this.entries = 0;
    this.read = 0;
    this.realEnd = 0;
    this.generation++;
  }

  /** Starts the page over, holding nothing: its bytes go until the writer comes back (the kernel keeps the page; only what it costs here changes). */
  empty(): void {
    this.clear();
    this.data = null;
  }

  /** Writes time_stamp and commit into the page header, as a reader receives them. */
  syncHeader(commitFlags = 0): void {
    writeU64(this.buf, 0, this.timeStamp);
    writeU64(this.buf, 8, this.commit + commitFlags);
  }
}
