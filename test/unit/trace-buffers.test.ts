import { describe, expect, it } from 'vitest';
import { errCode, setup, traceLines } from '../helpers/tracefs.js';

function stat(text: string, name: string): number {
  const m = new RegExp(`^${name}: (\\d+)$`, 'm').exec(text);
  if (!m) throw new Error(`no ${name} in ${text}`);
  return Number(m[1]);
}

describe('per_cpu stats', () => {
  it('has the kernel layout on an empty buffer', async () => {
    const { read } = setup();
    expect(await read('per_cpu/cpu0/stats')).toMatch(
      /^entries: 0\noverrun: 0\ncommit overrun: 0\nbytes: 0\noldest event ts: {5}0\.000000\nnow ts: +\d+\.\d{6}\ndropped events: 0\nread events: 0\n$/,
    );
  });

  it('counts exactly in overwrite mode (300 markers in the 7 KB boot buffer, as the kernel)', async () => {
    const { read, write } = setup();
    for (let i = 0; i < 300; i++) await write('trace_marker', `m${i}\n`);
    const s = await read('per_cpu/cpu0/stats');
    expect([stat(s, 'entries'), stat(s, 'overrun'), stat(s, 'bytes'), stat(s, 'dropped events')]).toEqual([155, 145, 4360, 0]);
    expect(await read('trace')).toContain('# entries-in-buffer/entries-written: 155/300   #P:2\n');
    const lines = traceLines(await read('trace'));
    expect(lines[0]).toMatch(/tracing_mark_write: m145$/);
    expect(lines).toHaveLength(155);
  });

  it('drops and counts in non-overwrite mode (marker writes fail with EBADF)', async () => {
    const { read, write } = setup();
    await write('options/overwrite', '0');
    const fails: number[] = [];
    for (let i = 0; i < 300; i++) if ((await errCode(write('trace_marker', `n${i}\n`))) === 'EBADF') fails.push(i);
    expect(fails).toEqual([290, 291, 292, 293, 294, 295, 296, 297, 298, 299]);
    const s = await read('per_cpu/cpu0/stats');
    expect([stat(s, 'entries'), stat(s, 'overrun'), stat(s, 'bytes'), stat(s, 'dropped events')]).toEqual([290, 0, 8160, 10]);
    expect(await read('trace')).toContain('# entries-in-buffer/entries-written: 290/290   #P:2\n');
  });

  it('counts read events after trace_pipe consumed them', async () => {
    const { read, write, fs } = setup();
    for (let i = 0; i < 3; i++) await write('trace_marker', `r${i}\n`);
    const h = await fs.open('trace_pipe', 0o4000);
    await h.read(65536, 0);
    h.release();
    const s = await read('per_cpu/cpu0/stats');
    expect([stat(s, 'entries'), stat(s, 'read events'), stat(s, 'bytes')]).toEqual([0, 3, 0]);
  });

  it('keeps exact totals with 20 concurrent writers x 1000 markers', async () => {
    const { read, write, shell, fs } = setup({ cpus: 4 });
    const writers = Array.from({ length: 20 }, (_, i) => shell(`w${i}`, i % 4));
    await Promise.all(
      writers.map(async (c, i) => {
        for (let k = 0; k < 1000; k++) await write('trace_marker', `writer ${i} line ${k}\n`, c);
      }),
    );
    const header = (await read('trace')).split('\n')[2];
    const m = /entries-in-buffer\/entries-written: (\d+)\/(\d+)/.exec(header)!;
    expect(Number(m[2])).toBe(20000);
    let entries = 0;
    let overrun = 0;
    for (let cpu = 0; cpu < 4; cpu++) {
      const s = await read(`per_cpu/cpu${cpu}/stats`);
      entries += stat(s, 'entries');
      overrun += stat(s, 'overrun');
      expect(stat(s, 'dropped events')).toBe(0);
    }
    expect(entries).toBe(Number(m[1]));
    expect(entries + overrun).toBe(20000);
    expect(traceLines(await read('trace'))).toHaveLength(entries);
    void fs;
  });
});

describe('buffer sizes', () => {
  it('is minimal and "expanded" until first use, which a tracer write is', async () => {
    const { read, write } = setup();
    expect(await read('buffer_size_kb')).toBe('7 (expanded: 1408)\n');
    expect(await read('buffer_total_size_kb')).toBe('14 (expanded: 2816)\n');
    expect(await read('per_cpu/cpu0/buffer_size_kb')).toBe('7\n');
    await write('trace_marker', 'not a use\n');
    expect(await read('buffer_size_kb')).toBe('7 (expanded: 1408)\n');
    expect(await errCode(write('current_tracer', 'nosuch'))).toBe('EINVAL');
    expect(await read('buffer_size_kb')).toBe('1410\n');
    expect(await read('buffer_total_size_kb')).toBe('2820\n');
  });

  it('grows on a snapshot write too, and instances start full size', async () => {
    const { read, write, fs } = setup();
    await write('snapshot', '2');
    expect(await read('buffer_size_kb')).toBe('1410\n');
    fs.mkdir('instances/foo');
    expect(await read('instances/foo/buffer_size_kb')).toBe('1410\n');
    expect(await read('instances/foo/buffer_total_size_kb')).toBe('2820\n');
  });

  it('resizes all CPUs or one, as the kernel rounds pages', async () => {
    const { read, write } = setup();
    expect(await errCode(write('buffer_size_kb', '0'))).toBe('EINVAL');
    expect(await errCode(write('buffer_size_kb', 'x'))).toBe('EINVAL');
    await write('buffer_size_kb', '100');
    expect(await read('buffer_size_kb')).toBe('103\n');
    expect(await read('buffer_total_size_kb')).toBe('206\n');
    await write('per_cpu/cpu0/buffer_size_kb', '20');
    expect(await read('per_cpu/cpu0/buffer_size_kb')).toBe('23\n');
    expect(await read('buffer_size_kb')).toBe('X\n');
    expect(await read('buffer_total_size_kb')).toBe('126\n');
    expect(await read('per_cpu/cpu1/buffer_size_kb')).toBe('103\n');
  });

  it('cannot be resized while trace is open for reading (EBUSY)', async () => {
    const { fs, read, write } = setup();
    const h = await fs.open('trace', 0);
    expect(await errCode(write('buffer_size_kb', '100'))).toBe('EBUSY');
    expect(await errCode(write('buffer_subbuf_size_kb', '8'))).toBe('EBUSY');
    h.release();
    await write('buffer_size_kb', '100');
    expect(await read('buffer_size_kb')).toBe('103\n');
  });

  it('keeps events that still fit when resized', async () => {
    const { read, write } = setup();
    await write('buffer_size_kb', '100');
    for (let i = 0; i < 10; i++) await write('trace_marker', `k${i}\n`);
    await write('buffer_size_kb', '200');
    expect(traceLines(await read('trace'))).toHaveLength(10);
  });

  it('frees the buffer to the minimum when free_buffer is closed', async () => {
    const { read, write, fs } = setup();
    await write('current_tracer', 'nop');
    await write('free_buffer', '\n');
    expect(await read('buffer_size_kb')).toBe('7\n');
    expect(await read('buffer_total_size_kb')).toBe('14\n');
    expect(await read('tracing_on')).toBe('1\n');
    await write('options/disable_on_free', '1');
    expect(await errCode(fs.readFile('free_buffer'))).toBe('EINVAL');
    expect(await read('tracing_on')).toBe('0\n');
  });

  it('takes the sub-buffer sizes the kernel takes', async () => {
    const { read, write, tracing } = setup();
    const results: string[] = [];
    for (const v of ['0', '1', '3', '4', '5', '8', '64', '512', '513', 'abc']) {
      const e = await errCode(write('buffer_subbuf_size_kb', v));
      results.push(`${v}:${e}:${(await read('buffer_subbuf_size_kb')).trim()}`);
    }
    expect(results).toEqual([
      '0:EINVAL:4', '1:ok:4', '3:ok:4', '4:ok:4', '5:ok:8', '8:ok:8', '64:ok:64', '512:ok:512', '513:EINVAL:512', 'abc:EINVAL:512',
    ]);
    // buffer_size_kb still shows what was asked for
    expect(await read('buffer_size_kb')).toBe('7 (expanded: 1408)\n');
    expect(tracing.top.buffer.maxEventSize()).toBe(512 * 1024 - 16 - 8);
  });

  it('sets buffer_percent within 0..100', async () => {
    const { read, write } = setup();
    expect(await read('buffer_percent')).toBe('50\n');
    expect(await errCode(write('buffer_percent', '101'))).toBe('EINVAL');
    await write('buffer_percent', '0');
    expect(await read('buffer_percent')).toBe('0\n');
  });
});

describe('tracing_cpumask', () => {
  it('reads and parses the kernel hex bitmap', async () => {
    const { read, write } = setup();
    expect(await read('tracing_cpumask')).toBe('3\n');
    expect(await errCode(write('tracing_cpumask', 'f'))).toBe('EOVERFLOW');
    expect(await errCode(write('tracing_cpumask', 'zz'))).toBe('EINVAL');
    expect(await errCode(write('tracing_cpumask', '1,00000000'))).toBe('EOVERFLOW');
    await write('tracing_cpumask', ' 2 ');
    expect(await read('tracing_cpumask')).toBe('2\n');
  });

  it('stops recording on masked CPUs', async () => {
    const { read, write, shell } = setup();
    const c1 = shell('sh', 1);
    await write('tracing_cpumask', '2');
    expect(await errCode(write('trace_marker', 'cpu0\n'))).toBe('EBADF');
    await write('trace_marker', 'cpu1\n', c1);
    expect(traceLines(await read('trace'))).toHaveLength(1);
  });

  it('formats larger masks in 32-bit groups', async () => {
    const { read, write } = setup({ cpus: 40 });
    expect(await read('tracing_cpumask')).toBe('ff,ffffffff\n');
    await write('tracing_cpumask', '1,00000001');
    expect(await read('tracing_cpumask')).toBe('01,00000001\n');
  });
});

describe('trace_clock', () => {
  it('lists the clocks and marks the current one; a switch resets the buffer', async () => {
    const { read, write } = setup();
    expect(await read('trace_clock')).toBe('[local] global counter uptime perf mono mono_raw boot tai x86-tsc\n');
    await write('trace_marker', 'before\n');
    await write('trace_clock', ' global ');
    expect(await read('trace_clock')).toBe('local [global] counter uptime perf mono mono_raw boot tai x86-tsc\n');
    expect(traceLines(await read('trace'))).toHaveLength(0);
    expect(await errCode(write('trace_clock', 'foo'))).toBe('EINVAL');
    await write('trace_clock', 'tai');
    await write('trace_marker', 'tai\n');
    expect(traceLines(await read('trace'))[0]).toMatch(/\] \.\.\.1\. \d{10}\.\d{6}: tracing_mark_write: tai$/);
    await write('trace_clock', 'x86-tsc');
    await write('trace_marker', 'tsc\n');
    expect(traceLines(await read('trace'))[0]).toMatch(/\] \.\.\.1\. +\d+: tracing_mark_write: tsc$/);
    expect(await read('per_cpu/cpu0/stats')).toMatch(/oldest event ts: \d+\nnow ts: \d+\n/);
  });

  it('shows the timestamp mode', async () => {
    const { read, write, tracing } = setup();
    expect(await read('timestamp_mode')).toBe('[delta] absolute\n');
    expect(await errCode(write('timestamp_mode', 'absolute'))).toBe('EINVAL');
    tracing.top.setTimeStampAbs(true);
    expect(await read('timestamp_mode')).toBe('delta [absolute]\n');
    await write('trace_marker', 'abs\n');
    expect(traceLines(await read('trace'))).toHaveLength(1);
    expect(await read('per_cpu/cpu0/stats')).toContain('bytes: 36\n');
  });
});
