import { describe, expect, it } from 'vitest';
import { RingBuffer } from '../../src/trace/ring_buffer.js';
import { RingBufferIter } from '../../src/trace/ring_buffer_iter.js';
import {
  BUF_PAGE_HDR_SIZE,
  RB_MISSED_EVENTS,
  eventData,
  eventLength,
  eventLengthAt,
  pageHeaderFormat,
  readU64,
} from '../../src/trace/ring_buffer_event.js';

/** A buffer on a settable clock. */
function make(size = 8160, nrCpus = 1) {
  const clock = { t: 1000 };
  const rb = new RingBuffer(nrCpus, size, () => clock.t);
  return { rb, clock, cb: rb.cpus[0] };
}

function payload(n: number, fill: number): Buffer {
  return Buffer.alloc(n, fill);
}

function readAll(rb: RingBuffer, cpu = 0): { ts: number; data: Buffer }[] {
  const it = new RingBufferIter(rb.cpus[cpu]);
  const out: { ts: number; data: Buffer }[] = [];
  for (let ev = it.peek(); ev; ev = it.peek()) {
    const { start, len } = eventData(ev.page.buf, ev.off);
    out.push({ ts: ev.ts, data: Buffer.from(ev.page.buf.subarray(start, start + len)) });
    it.advance();
  }
  return out;
}

describe('event encoding', () => {
  it('computes event lengths as rb_calculate_event_length()', () => {
    expect(eventLength(0)).toBe(8);
    expect(eventLength(4)).toBe(8);
    expect(eventLength(5)).toBe(16); // 12 would not fit a time extend or padding
    expect(eventLength(24)).toBe(28);
    expect(eventLength(112)).toBe(116);
    expect(eventLength(113)).toBe(124); // length word in array[0]
  });

  it('round-trips small and large events with their timestamps', () => {
    const { rb, clock } = make();
    const sizes = [1, 8, 23, 112, 113, 500];
    for (const [i, n] of sizes.entries()) {
      clock.t += 10 * (i + 1);
      rb.write(0, payload(n, i + 1));
    }
    const got = readAll(rb);
    expect(got.map((e) => e.ts)).toEqual([1010, 1030, 1060, 1100, 1150, 1210]);
    expect(got.map((e) => e.data.length)).toEqual([4, 12, 24, 112, 116, 500]);
    expect(got.every((e, i) => e.data[0] === i + 1)).toBe(true);
  });

  it('adds a time extend when the delta does not fit 27 bits', () => {
    const { rb, clock, cb } = make();
    rb.write(0, payload(8, 1));
    clock.t += 2 ** 27 + 5;
    rb.write(0, payload(8, 2));
    expect(readAll(rb).map((e) => e.ts)).toEqual([1000, 1000 + 2 ** 27 + 5]);
    // 16-byte event, 8-byte time extend, 16-byte event
    expect(cb.entriesBytes).toBe(16 + 8 + 16);
    const page = cb.tail;
    expect(page.buf.readUInt32LE(BUF_PAGE_HDR_SIZE + 16) & 31).toBe(30);
  });

  it('uses absolute time stamps in absolute mode', () => {
    const { rb, clock, cb } = make();
    rb.absTimeStamps = true;
    rb.write(0, payload(8, 1));
    clock.t = 5000;
    rb.write(0, payload(8, 2));
    expect(readAll(rb).map((e) => e.ts)).toEqual([1000, 5000]);
    expect(cb.tail.buf.readUInt32LE(BUF_PAGE_HDR_SIZE) & 31).toBe(31);
  });

  it('describes the page layout (events/header_page)', () => {
    expect(pageHeaderFormat()).toContain('\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n');
    expect(pageHeaderFormat(8192)).toContain('size:8176;');
  });
});

describe('overwrite and non-overwrite accounting', () => {
  it('counts every overwritten event as overrun (entries + overrun = written)', () => {
    const { rb, clock, cb } = make(8160);
    let written = 0;
    for (let i = 0; i < 1000; i++) {
      clock.t++;
      if (rb.write(0, payload(20 + (i % 7), i & 0xff))) written++;
    }
    expect(written).toBe(1000);
    expect(cb.numEntries + cb.overrun).toBe(1000);
    expect(cb.overrun).toBeGreaterThan(0);
    expect(readAll(rb)).toHaveLength(cb.numEntries);
    expect(cb.dropped).toBe(0);
  });

  it('pads the end of a page and counts the padding in bytes', () => {
    const { rb, cb } = make(8160);
    // 28-byte events: 145 per 4080-byte page, 20 bytes of padding
    for (let i = 0; i < 146; i++) rb.write(0, payload(24, 1));
    expect(cb.entriesBytes).toBe(145 * 28 + 20 + 28);
    const p = cb.head;
    expect(p.commit).toBe(4080);
    expect(p.buf.readUInt32LE(BUF_PAGE_HDR_SIZE + 145 * 28) & 31).toBe(29);
  });

  it('drops and counts new events when full in non-overwrite mode', () => {
    const { rb, cb } = make(8160);
    rb.overwrite = false;
    let ok = 0;
    for (let i = 0; i < 300; i++) if (rb.write(0, payload(24, 1))) ok++;
    expect(ok).toBe(290);
    expect(cb.numEntries).toBe(290);
    expect(cb.dropped).toBe(10);
    expect(cb.overrun).toBe(0);
    expect(cb.bytes).toBe(8160);
  });

  it('consumes through the reader page and reports lost events', () => {
    const { rb, cb } = make(8160);
    for (let i = 0; i < 300; i++) rb.write(0, payload(24, i & 0xff));
    const first = cb.consume()!;
    expect(first.lost).toBe(145);
    let n = 1;
    while (cb.consume()) n++;
    expect(n).toBe(155);
    expect(cb.read).toBe(155);
    expect(cb.numEntries).toBe(0);
    expect(cb.bytes).toBe(0);
    // More writes after a consuming read use the reader page too.
    for (let i = 0; i < 400; i++) rb.write(0, payload(24, 1));
    expect(cb.numEntries + cb.overrun + cb.read).toBe(700);
  });

  it('keeps entries + overrun + read = written when reading while writing', () => {
    const { rb, clock, cb } = make(4 * 4080);
    let written = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 37; i++) {
        clock.t += 3;
        if (rb.write(0, payload(10 + ((round + i) % 90), 7))) written++;
      }
      for (let i = 0; i < round % 13; i++) cb.consume();
    }
    expect(cb.numEntries + cb.overrun + cb.read).toBe(written);
    expect(readAll(rb)).toHaveLength(cb.numEntries);
  });
});

describe('pages for readers', () => {
  it('hands out a page image with header and events (trace_pipe_raw)', () => {
    const { rb, clock, cb } = make(8160);
    for (let i = 0; i < 200; i++) {
      clock.t += 2;
      rb.write(0, payload(24, i & 0xff));
    }
    const page = cb.readPage(4096)!;
    expect(page.length).toBe(4096);
    expect(readU64(page, 0)).toBe(1002);
    // The padding at the end is not handed out: commit is where the last event ended.
    const commit = readU64(page, 8);
    expect(commit).toBe(4060);
    let off = BUF_PAGE_HDR_SIZE;
    let n = 0;
    while (off < BUF_PAGE_HDR_SIZE + commit) {
      if ((page.readUInt32LE(off) & 31) !== 29) n++;
      off += eventLengthAt(page, off);
    }
    expect(n).toBe(145);
    expect(cb.read).toBe(145);
  });

  it('flags missed events on the page after an overrun', () => {
    const { rb, cb } = make(8160);
    for (let i = 0; i < 300; i++) rb.write(0, payload(24, 1));
    const page = cb.readPage(4096)!;
    const commit = readU64(page, 8);
    expect(commit >= RB_MISSED_EVENTS).toBe(true);
  });
});

describe('resize', () => {
  it('grows and shrinks, counting what the removed pages held', () => {
    const { rb, cb } = make(8160);
    rb.resize(4080 * 4);
    expect(cb.nrPages).toBe(4);
    for (let i = 0; i < 145 * 4; i++) rb.write(0, payload(24, 1));
    expect(cb.numEntries).toBe(580);
    rb.resize(4080 * 2);
    expect(cb.nrPages).toBe(2);
    expect(cb.numEntries + cb.overrun).toBe(580);
    expect(readAll(rb)).toHaveLength(cb.numEntries);
  });

  it('changes the sub-buffer size keeping the capacity', () => {
    const { rb, cb } = make(354 * 4080);
    rb.setSubbufOrder(1);
    expect(rb.subbufSize).toBe(8192);
    expect(cb.nrPages).toBe(Math.ceil((354 * 4080) / 8176));
    expect(rb.maxEventSize()).toBe(8168);
  });
});
