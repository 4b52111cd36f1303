/**
 * The writes and checks of the kernel's test.d/00basic tests on the core
 * files, replayed through the library API at the top level and in an
 * instance (ftracetest reruns `# flags: instance` tests in one).
 */
import { describe, expect, it } from 'vitest';
import { O_RDONLY, O_TRUNC, O_WRONLY } from '../../src/tracefs/node.js';
import { entryHeaderFormat, pageHeaderFormat } from '../../src/trace/ring_buffer_event.js';
import type { Tracefs } from '../../src/tracefs/tracefs.js';
import { errCode, setup } from '../helpers/tracefs.js';

/** What the tests' sed scripts pull out of events/header_page, header_event and ftrace/print/format. */
function layout(subbufSize: number) {
  const hp = pageHeaderFormat(subbufSize);
  const dataLine = hp.split('\n').find((l) => l.includes('data'))!;
  const size = Number(/size:(\d+)/.exec(dataLine)![1]);
  const offset = Number(/offset:(\d+)/.exec(dataLine)![1]);
  const bits = [...entryHeaderFormat().matchAll(/(type_len|time_delta|array)\s*:\s*(\d+)/g)].map((m) => Number(m[2]));
  const eventHeaderSize = Math.floor((bits.reduce((a, b) => a + b, 0) + 7) / 8);
  const printBufOffset = 16; // events/ftrace/print/format: field:char buf[];	offset:16;
  return { size, offset, markerMeta: eventHeaderSize + printBufOffset };
}

/** A shell's `echo`: writes until everything is taken (short writes continue). */
async function echo(fs: Tracefs, path: string, data: string | Buffer): Promise<void> {
  const buf = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  const h = await fs.open(path, O_WRONLY | O_TRUNC);
  try {
    for (let off = 0; off < buf.length; ) off += await h.write(buf.subarray(off), 0);
  } finally {
    h.release();
  }
}

/** awk ' /tracing_mark_write:/ { sub(/^.*tracing_mark_write: /,""); printf "%s", $0; [exit] }' trace */
function markerText(trace: string, firstOnly: boolean): string {
  let out = '';
  for (const line of trace.split('\n')) {
    if (!line.includes('tracing_mark_write:')) continue;
    out += line.replace(/^.*tracing_mark_write: /, '');
    if (firstOnly) break;
  }
  return out;
}

async function inBoth(fn: (d: string, ctx: ReturnType<typeof setup>) => Promise<void>) {
  const ctx = setup();
  // ftracetest's initialize_ftrace: reset_tracer
  await ctx.write('current_tracer', 'nop');
  await fn('', ctx);
  ctx.fs.mkdir('instances/ftracetest');
  await fn('instances/ftracetest/', ctx);
}

describe('test.d/00basic on the core files', () => {
  it('basic1: README, trace, tracing_on and trace_pipe are files', () => {
    const { fs } = setup();
    for (const f of ['README', 'trace', 'tracing_on', 'trace_pipe']) expect(fs.stat(f).mode & 0o170000).toBe(0o100000);
  });

  it('basic2: every available tracer can be set, then nop', () =>
    inBoth(async (d, { read, write }) => {
      for (const t of (await read(`${d}available_tracers`)).trim().split(/\s+/)) await write(`${d}current_tracer`, `${t}\n`);
      await write(`${d}current_tracer`, 'nop\n');
    }));

  it('basic3: every clock can be set and is then bracketed', () =>
    inBoth(async (d, { read, write }) => {
      const clocks = (await read(`${d}trace_clock`)).replace(/[[\]]/g, '').trim().split(/\s+/);
      expect(clocks).toHaveLength(10);
      for (const c of clocks) {
        await write(`${d}trace_clock`, `${c}\n`);
        expect(await read(`${d}trace_clock`)).toContain(`[${c}]`);
      }
      await write(`${d}trace_clock`, 'local\n');
    }));

  it('ringbuffer_size: halve, double, restore, all CPUs then cpu0', () =>
    inBoth(async (d, { read, write }) => {
      for (const f of [`${d}buffer_size_kb`, `${d}per_cpu/cpu0/buffer_size_kb`]) {
        const orig = Number((await read(f)).trim());
        expect(Number.isInteger(orig)).toBe(true);
        await write(f, `${Math.floor(orig / 2)}\n`);
        await write(f, `${orig * 2}\n`);
        await write(f, `${orig}\n`);
        expect(await read(f)).toBe(`${orig}\n`);
      }
    }));

  it('ringbuffer_subbuf_size: markers bigger than a sub-buffer are broken up, losing nothing', () =>
    inBoth(async (d, { read, write, fs, tracing }) => {
      const orig = (await read(`${d}buffer_subbuf_size_kb`)).trim();
      const tr = d ? tracing.instances.get('ftracetest')! : tracing.top;
      for (const a of [4, 8, 16, 32]) {
        await write(`${d}buffer_subbuf_size_kb`, `${a}\n`);
        const { size, offset } = layout(tr.buffer.subbufSize);
        expect(size).toBeGreaterThanOrEqual(a * 1024 - offset);
        const str = 'X'.repeat(size);
        await write(`${d}trace`, '\n');
        await echo(fs, `${d}trace_marker`, `${str}\n`);
        const trace = await read(`${d}trace`);
        expect(markerText(trace, true)).not.toBe(str);
        expect(markerText(trace, false)).toBe(str);
      }
      await write(`${d}buffer_subbuf_size_kb`, `${orig}\n`);
    }));

  it('trace_marker: a marker filling a sub-buffer is broken, all of it found', () =>
    inBoth(async (d, { read, write, fs }) => {
      const { size, markerMeta } = layout(4096);
      expect(markerMeta).toBe(24);
      const str = 'X'.repeat(size - 2);
      await write(`${d}trace`, '\n');
      await echo(fs, `${d}trace_marker`, str);
      const trace = await read(`${d}trace`);
      expect(markerText(trace, true)).not.toBe(str);
      expect(markerText(trace, false)).toBe(str);
    }));

  it('trace_marker_raw: the id is required, too big fails, sizes round up to 4', () =>
    inBoth(async (d, { read, write, fs }) => {
      const orig = Number((await read(`${d}buffer_size_kb`)).trim());
      if (orig < 12) await write(`${d}buffer_size_kb`, '12\n');
      expect(await errCode(write(`${d}trace_marker_raw`, 'abc'))).not.toBe('ok');
      const { size } = layout(4096);
      const raw = (id: number, cnt: number) => {
        const b = Buffer.alloc(4 + cnt, 'X');
        b.writeUInt32LE(id >>> 0, 0);
        return b;
      };
      expect(await errCode(write(`${d}trace_marker_raw`, raw(0xdeadbeef, size)))).not.toBe('ok');
      const ids = [...Array(10).keys()].flatMap((i) => [1 + i, 101 + i, 1001 + i]).sort((a, b) => a - b);
      for (const i of ids) await write(`${d}trace_marker_raw`, raw(i, i));
      await write(`${d}trace_marker`, 'stop\n');
      const h = await fs.open(`${d}trace_pipe`, O_RDONLY);
      let text = '';
      while (text.split('\n').length <= 31) text += (await h.read(65536, 0)).toString('latin1');
      h.release();
      const lines = text.split('\n').slice(0, 31);
      let checked = 0;
      for (const line of lines) {
        if (!/.*: # [0-9a-f]* /.test(line)) continue;
        const f = line.trim().split(/\s+/);
        const i = f.indexOf('#');
        const cnt = parseInt(f[i + 1], 16);
        const num = f.length - (i + 3); // the bytes after "buf:"
        expect(num).toBe(Math.floor((cnt + 3) / 4) * 4);
        checked++;
      }
      expect(checked).toBe(30);
      await write(`${d}buffer_size_kb`, `${orig}\n`);
    }));
});
