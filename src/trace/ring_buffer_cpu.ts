/**
 * One CPU's ring buffer (struct ring_buffer_per_cpu): a ring of sub-buffers
 * plus a reader page outside it, the writer's reserve/commit, the consuming
 * reader's page swap, and the counters `per_cpu/cpuN/stats` shows.
 *
 * Commits are immediate (JavaScript has no interrupts), so the commit page is
 * always the tail page.
 */
import { BufferPage } from './ring_buffer_page.js';
import {
  BUF_PAGE_HDR_SIZE,
  RB_EVNT_HDR_SIZE,
  RB_EVNT_MIN_SIZE,
  RB_LEN_TIME_EXTEND,
  RB_MAX_SMALL_DATA,
  RB_MISSED_EVENTS,
  RB_MISSED_STORED,
  RINGBUF_TYPE_DATA_TYPE_LEN_MAX,
  RINGBUF_TYPE_PADDING,
  RINGBUF_TYPE_TIME_EXTEND,
  RINGBUF_TYPE_TIME_STAMP,
  TS_DELTA_LIMIT,
  eventData,
  eventLength,
  eventLengthAt,
  extendValueAt,
  makeHeader,
  timeDeltaOf,
  writeExtend,
  writeU64,
} from './ring_buffer_event.js';

/** What a per-CPU buffer needs from the buffer it belongs to. */
export interface RingBufferParent {
  readonly subbufSize: number;
  readonly overwrite: boolean;
  readonly absTimeStamps: boolean;
  readonly lengthWord: boolean;
  /** Largest event payload (ring_buffer_max_event_size() before the abs adjustment). */
  readonly maxDataSize: number;
  now(): number;
  committed(cpu: number): void;
}

/** A data event found by a reader. */
export interface PeekedEvent {
  page: BufferPage;
  /** Offset of the event header in page.buf. */
  off: number;
  ts: number;
  /** Events lost before this one (overwritten), -1 when unknown. */
  lost: number;
}

const MOVED = 1;
const DROPPED = 2;

export class CpuBuffer {
  nrPages = 0;
  head!: BufferPage;
  tail!: BufferPage;
  reader!: BufferPage;

  /** Events committed (ever, since the last reset). */
  entries = 0;
  /** Events lost when the writer overwrote the oldest page. */
  overrun = 0;
  commitOverrun = 0;
  /** Events refused by a full buffer in non-overwrite mode. */
  dropped = 0;
  entriesBytes = 0;
  /** Events consumed by readers. */
  read = 0;
  readBytes = 0;
  pagesTouched = 0;
  pagesLost = 0;
  pagesRead = 0;
  pagesRemoved = 0;
  /** Generation of the page list (resize): invalidates iterators. */
  listGen = 0;

  writeStamp = 0;
  readStamp = 0;
  lostEvents = 0;
  lastOverrun = 0;
  /** ring_buffer_record_disable_cpu() nesting. */
  recordDisabled = 0;
  /** Open non-consuming iterators: the buffer cannot be resized meanwhile (EBUSY). */
  resizeDisabled = 0;
  /** Page and offset of the last reservation, for commit(). */
  private resPage: BufferPage | null = null;

  constructor(
    readonly cpu: number,
    readonly rb: RingBufferParent,
    nrPages: number,
  ) {
    this.allocate(nrPages);
  }

  get capacity(): number {
    return this.rb.subbufSize - BUF_PAGE_HDR_SIZE;
  }

  /** Events in the buffer: committed minus overwritten minus consumed. */
  get numEntries(): number {
    return this.entries - (this.overrun + this.read);
  }

  get bytes(): number {
    return this.entriesBytes - this.readBytes;
  }

  /** Fresh pages (existing counters are kept, as when the sub-buffer size changes). */
  allocate(nrPages: number): void {
    const size = this.rb.subbufSize;
    const pages = Array.from({ length: nrPages }, () => new BufferPage(size));
    for (let i = 0; i < nrPages; i++) {
      pages[i].next = pages[(i + 1) % nrPages];
      pages[i].prev = pages[(i + nrPages - 1) % nrPages];
    }
    this.nrPages = nrPages;
    this.head = this.tail = pages[0];
    this.reader = new BufferPage(size);
    this.reader.next = this.head;
    this.reader.prev = this.head.prev;
    this.listGen++;
  }

  /** rb_reset_cpu(): empty pages, zero counters. */
  reset(): void {
    let p = this.head;
    for (let i = 0; i < this.nrPages; i++) {
      p.empty();
      p = p.next;
    }
    this.reader.empty();
    this.reader.next = this.head;
    this.reader.prev = this.head.prev;
    this.tail = this.head;
    this.entries = this.overrun = this.commitOverrun = this.dropped = 0;
    this.entriesBytes = this.read = this.readBytes = 0;
    this.pagesTouched = this.pagesLost = this.pagesRead = 0;
    this.writeStamp = this.readStamp = 0;
    this.lostEvents = this.lastOverrun = 0;
    this.pagesRemoved = 0;
    this.listGen++;
  }

  // ---------------------------------------------------------------- writer

  /**
   * Reserves room for `dataLen` payload bytes (rb_reserve_next_event()).
   * Returns the payload offset in `reservedPage().buf`, or -1 when the event
   * is not recorded (dropped events are counted).
   */
  reserve(dataLen: number): number {
    const abs = this.rb.absTimeStamps;
    const lengthWord = this.rb.lengthWord;
    let length = lengthWord ? ((dataLen + 3) & ~3) + RB_EVNT_HDR_SIZE + 4 : eventLength(dataLen);
    if (abs) {
      length += RB_LEN_TIME_EXTEND;
      if (length > this.rb.maxDataSize) return -1;
    }
    const capacity = this.capacity;
    for (let loops = 0; loops < 1000; loops++) {
      const page = this.tail;
      const w = page.write;
      const ts = this.rb.now();
      let delta = 0;
      let extend = 0;
      if (!abs && w !== 0) {
        delta = ts - this.writeStamp;
        if (delta < 0) delta = 0;
        if (delta >= TS_DELTA_LIMIT) extend = RB_LEN_TIME_EXTEND;
      }
      const total = length + extend;
      if (w + total > capacity) {
        if (this.moveTail(w, total) === DROPPED) return -1;
        continue;
      }
      const buf = page.buf;
      let off = BUF_PAGE_HDR_SIZE + w;
      if (abs) {
        writeExtend(buf, off, RINGBUF_TYPE_TIME_STAMP, ts);
        off += RB_LEN_TIME_EXTEND;
      } else if (extend) {
        writeExtend(buf, off, RINGBUF_TYPE_TIME_EXTEND, delta);
        off += RB_LEN_TIME_EXTEND;
        delta = 0;
      }
      const evLen = length - (abs ? RB_LEN_TIME_EXTEND : 0) - RB_EVNT_HDR_SIZE;
      let dataOff: number;
      if (evLen > RB_MAX_SMALL_DATA || lengthWord) {
        buf.writeUInt32LE(makeHeader(0, delta), off);
        buf.writeUInt32LE(evLen, off + 4);
        dataOff = off + 8;
      } else {
        buf.writeUInt32LE(makeHeader(evLen / 4, delta), off);
        dataOff = off + 4;
      }
      if (w === 0) page.timeStamp = ts;
      this.writeStamp = ts;
      page.write = w + total;
      page.entries++;
      this.entriesBytes += total;
      this.resPage = page;
      return dataOff;
    }
    return -1;
  }

  /** The page the last reserve() wrote into. */
  reservedPage(): BufferPage {
    return this.resPage!;
  }

  /** rb_commit(): the reserved event becomes visible. */
  commit(): void {
    const page = this.resPage!;
    this.resPage = null;
    page.commit = page.write;
    this.entries++;
    this.rb.committed(this.cpu);
  }

  /** Reserve, copy and commit in one step (ring_buffer_write()). */
  write(data: Buffer): boolean {
    const len = data.length;
    const off = this.reserve(len);
    if (off < 0) return false;
    const buf = this.resPage!.buf;
    // A native copy costs more than a short loop for the small records most events are.
    if (len <= 64) for (let i = 0; i < len; i++) buf[off + i] = data[i];
    else data.copy(buf, off);
    this.commit();
    return true;
  }

  /** rb_move_tail(): the event does not fit on the tail page. */
  private moveTail(tail: number, length: number): number {
    const tailPage = this.tail;
    const next = tailPage.next;
    if (next === this.head && tailPage !== this.reader) {
      if (!this.rb.overwrite) {
        this.dropped++;
        this.resetTail(tailPage, tail, length);
        tailPage.commit = tailPage.write;
        return DROPPED;
      }
      // Overwrite: the oldest page goes, and its events are counted.
      this.overrun += next.entries;
      this.entriesBytes -= next.commit;
      this.pagesLost++;
      this.head = next.next;
    }
    this.resetTail(tailPage, tail, length);
    tailPage.commit = tailPage.write;
    next.clear();
    this.tail = next;
    this.pagesTouched++;
    return MOVED;
  }

  /** rb_reset_tail(): pad out the rest of the page the event did not fit on. */
  private resetTail(page: BufferPage, tail: number, length: number): void {
    void length;
    const bsize = page.capacity;
    if (tail >= bsize) {
      if (tail === bsize) page.realEnd = 0;
      return;
    }
    const off = BUF_PAGE_HDR_SIZE + tail;
    page.realEnd = tail;
    if (tail > bsize - RB_EVNT_MIN_SIZE) {
      // No room for an event: a null padding marks the end.
      page.buf.writeUInt32LE(makeHeader(RINGBUF_TYPE_PADDING, 0), off);
      page.write = tail;
      return;
    }
    page.buf.writeUInt32LE(makeHeader(RINGBUF_TYPE_PADDING, 1), off);
    page.buf.writeUInt32LE(bsize - tail - RB_EVNT_HDR_SIZE, off + 4);
    this.entriesBytes += bsize - tail;
    page.write = bsize;
  }

  // ---------------------------------------------------------------- reader

  /** rb_get_reader_page(): the reader page, swapped with the head page when read through. */
  getReaderPage(): BufferPage | null {
    let reader: BufferPage | null = null;
    for (let loops = 0; loops < 3; loops++) {
      reader = this.reader;
      if (reader.read < reader.commit) break;
      reader = null;
      if (this.tail === this.reader) break;
      if (this.numEntries === 0) break;
      const old = this.reader;
      // read through: back in the ring, empty
      old.empty();
      const head = this.head;
      const prev = head.prev;
      const after = head.next;
      old.next = after;
      old.prev = prev;
      prev.next = old;
      after.prev = old;
      this.head = after;
      this.pagesRead++;
      this.reader = head;
      head.read = 0;
      if (this.overrun !== this.lastOverrun) {
        this.lostEvents = this.overrun - this.lastOverrun;
        this.lastOverrun = this.overrun;
      }
    }
    if (reader && reader.read === 0) this.readStamp = reader.timeStamp;
    return reader;
  }

  /** rb_advance_reader(): step over the event at the reader's position. */
  private advanceReader(reader: BufferPage): void {
    const off = BUF_PAGE_HDR_SIZE + reader.read;
    const h = reader.buf.readUInt32LE(off);
    const type = h & 31;
    if (type <= RINGBUF_TYPE_DATA_TYPE_LEN_MAX) this.read++;
    this.updateReadStamp(reader.buf, off, h);
    const length = eventLengthAt(reader.buf, off);
    reader.read += length;
    this.readBytes += length;
  }

  private updateReadStamp(buf: Buffer, off: number, h: number): void {
    const type = h & 31;
    if (type === RINGBUF_TYPE_PADDING) return;
    if (type === RINGBUF_TYPE_TIME_EXTEND) this.readStamp += extendValueAt(buf, off);
    else if (type === RINGBUF_TYPE_TIME_STAMP) this.readStamp = extendValueAt(buf, off);
    else this.readStamp += timeDeltaOf(h);
  }

  /** rb_buffer_peek(): the next data (or discarded) event for a consuming reader. */
  private peekRaw(): (PeekedEvent & { padding: boolean }) | null {
    let ts = 0;
    for (let loops = 0; loops < 3; loops++) {
      const reader = this.getReaderPage();
      if (!reader) return null;
      const off = BUF_PAGE_HDR_SIZE + reader.read;
      const h = reader.buf.readUInt32LE(off);
      const type = h & 31;
      if (type === RINGBUF_TYPE_PADDING) return { page: reader, off, ts: 0, lost: 0, padding: true };
      if (type === RINGBUF_TYPE_TIME_EXTEND) {
        this.advanceReader(reader);
        continue;
      }
      if (type === RINGBUF_TYPE_TIME_STAMP) {
        ts = extendValueAt(reader.buf, off);
        this.advanceReader(reader);
        continue;
      }
      if (!ts) ts = this.readStamp + timeDeltaOf(h);
      return { page: reader, off, ts, lost: this.lostEvents, padding: false };
    }
    return null;
  }

  /** ring_buffer_peek(): the next event without consuming it. */
  peek(): PeekedEvent | null {
    for (let loops = 0; loops < 1000; loops++) {
      const ev = this.peekRaw();
      if (!ev) return null;
      if (!ev.padding) return ev;
      this.advanceReader(ev.page);
    }
    return null;
  }

  /** ring_buffer_consume(): the next event, consumed. Its bytes stay valid until the next write. */
  consume(): PeekedEvent | null {
    for (let loops = 0; loops < 1000; loops++) {
      const ev = this.peekRaw();
      if (!ev) return null;
      this.lostEvents = 0;
      this.advanceReader(ev.page);
      if (!ev.padding) return ev;
    }
    return null;
  }

  get empty(): boolean {
    return this.numEntries === 0;
  }

  /**
   * ring_buffer_read_page(): moves the next run of events into a page image
   * for trace_pipe_raw (header included). Returns null when nothing can be read.
   */
  readPage(len: number): Buffer | null {
    if (len <= BUF_PAGE_HDR_SIZE) return null;
    const size0 = this.rb.subbufSize;
    len = Math.min(len - BUF_PAGE_HDR_SIZE, size0 - BUF_PAGE_HDR_SIZE);
    const reader = this.getReaderPage();
    if (!reader) return null;
    const out = Buffer.alloc(size0);
    let read = reader.read;
    const size = reader.commit;
    const missed = this.lostEvents;
    let commit: number;
    let timeStamp: number;
    if (read || len < size - read || this.tail === this.reader) {
      if (len > size - read) len = size - read;
      const firstLen = this.tsLength(reader.buf, BUF_PAGE_HDR_SIZE + read);
      if (len < firstLen) return null;
      timeStamp = this.readStamp;
      let pos = 0;
      for (;;) {
        const off = BUF_PAGE_HDR_SIZE + reader.read;
        const evSize = eventLengthAt(reader.buf, off);
        reader.buf.copy(out, BUF_PAGE_HDR_SIZE + pos, off, off + evSize);
        len -= evSize;
        this.advanceReader(reader);
        pos += evSize;
        if (reader.read >= size) break;
        if (len < this.tsLength(reader.buf, BUF_PAGE_HDR_SIZE + reader.read)) break;
      }
      commit = pos;
      read = 0;
    } else {
      // The whole page goes to the reader.
      this.read += reader.entries;
      this.readBytes += reader.commit;
      reader.buf.copy(out, BUF_PAGE_HDR_SIZE, BUF_PAGE_HDR_SIZE, BUF_PAGE_HDR_SIZE + size);
      timeStamp = reader.timeStamp;
      commit = reader.realEnd || reader.commit;
      reader.read = size;
      reader.write = size;
    }
    this.lostEvents = 0;
    let flags = 0;
    if (missed) {
      if (missed > 0 && size0 - BUF_PAGE_HDR_SIZE - commit >= 8) {
        writeU64(out, BUF_PAGE_HDR_SIZE + commit, missed);
        flags += RB_MISSED_STORED;
      }
      flags += RB_MISSED_EVENTS;
    }
    writeU64(out, 0, timeStamp);
    writeU64(out, 8, commit + flags);
    return out;
  }

  /** rb_event_ts_length(): an event with the time extend before it. */
  private tsLength(buf: Buffer, off: number): number {
    const type = buf.readUInt32LE(off) & 31;
    if (type === RINGBUF_TYPE_TIME_EXTEND || type === RINGBUF_TYPE_TIME_STAMP) {
      return RB_LEN_TIME_EXTEND + eventLengthAt(buf, off + RB_LEN_TIME_EXTEND);
    }
    return eventLengthAt(buf, off);
  }

  /** Oldest timestamp still in the buffer (ring_buffer_oldest_event_ts()). */
  oldestEventTs(): number {
    const page = this.tail === this.reader ? this.reader : this.head;
    return page.timeStamp;
  }

  /** Pages written and not yet read (ring_buffer_nr_dirty_pages()). */
  dirtyPages(): number {
    const cnt = this.pagesTouched - this.pagesLost;
    return cnt < this.pagesRead ? 0 : cnt - this.pagesRead;
  }

  // ---------------------------------------------------------------- resize

  /** Removes `n` pages after the tail (the oldest), counting what they held as overrun. */
  removePages(n: number): void {
    let tailPage = this.tail;
    if (tailPage === this.reader) tailPage = tailPage.next;
    let p = tailPage.next;
    let headRemoved = false;
    for (let i = 0; i < n; i++) {
      if (p === this.head) headRemoved = true;
      if (p.entries) {
        this.overrun += p.entries;
        this.entriesBytes -= p.commit;
        this.pagesLost++;
      }
      p = p.next;
    }
    tailPage.next = p;
    p.prev = tailPage;
    if (headRemoved) this.head = p;
    this.pagesRemoved += n;
    this.nrPages -= n;
    this.listGen++;
  }

  /** Inserts `n` empty pages just before the head page. */
  insertPages(n: number): void {
    const head = this.head;
    let prev = head.prev;
    for (let i = 0; i < n; i++) {
      const p = new BufferPage(this.rb.subbufSize);
      p.prev = prev;
      prev.next = p;
      prev = p;
    }
    prev.next = head;
    head.prev = prev;
    this.nrPages += n;
    this.listGen++;
  }

  /** Debug aid: the data events on a page, with their timestamps. */
  static *events(page: BufferPage, from = 0): Generator<{ off: number; ts: number }> {
    let stamp = page.timeStamp;
    let off = BUF_PAGE_HDR_SIZE + from;
    const end = BUF_PAGE_HDR_SIZE + page.commit;
    while (off < end) {
      const h = page.buf.readUInt32LE(off);
      const type = h & 31;
      const len = eventLengthAt(page.buf, off);
      if (len < 0) return;
      if (type === RINGBUF_TYPE_TIME_EXTEND) stamp += extendValueAt(page.buf, off);
      else if (type === RINGBUF_TYPE_TIME_STAMP) stamp = extendValueAt(page.buf, off);
      else if (type !== RINGBUF_TYPE_PADDING) {
        stamp += timeDeltaOf(h);
        yield { off, ts: stamp };
      }
      off += len;
    }
  }
}

export { eventData };
