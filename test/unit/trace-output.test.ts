import { describe, expect, it } from 'vitest';
import { errCode, fixture, setup, traceLines } from '../helpers/tracefs.js';

const LINE = /^ {0,16}\S+-\d+ +\[\d{3}\] [.dDbXnNlLBph Zz0-9]{5} +\d+\.\d{6}: /;

describe('trace output layout', () => {
  it('shows an empty nop trace byte for byte as the kernel', async () => {
    const { read } = setup({ cpus: 2 });
    expect(await read('trace')).toBe(fixture('trace.empty-nop.txt'));
    expect(await read('per_cpu/cpu1/trace')).toBe(fixture('trace.empty-nop.txt'));
  });

  it('shows a trace_marker write with the writer comm and pid, preempt depth 1 on 7.2', async () => {
    const { read, write, shell } = setup({ cpus: 2 });
    const bash = shell('bash', 1);
    await write('trace_marker', 'hello\n', bash);
    const text = await read('trace');
    expect(text).toContain('# entries-in-buffer/entries-written: 1/1   #P:2\n');
    const [line] = traceLines(text);
    expect(line).toMatch(LINE);
    expect(line).toMatch(new RegExp(`^ {12}bash-${bash.pid} {4}\\[001\\] \\.\\.\\.1\\. +\\d+\\.\\d{6}: tracing_mark_write: hello$`));
  });

  it('shows flags ..... on 6.12, and its own tracing_mark_write', async () => {
    const { read, write } = setup({ series: '6.12' });
    await write('trace_marker', 'hello\n');
    expect(traceLines(await read('trace'))[0]).toMatch(/\[000\] \.\.\.\.\. /);
    await write('options/sym-offset', '1');
    expect(traceLines(await read('trace'))[0]).toMatch(/: tracing_mark_write\+0xdf\/0x280: hello$/);
  });

  it('keeps newlines of a marker and adds one when missing', async () => {
    const { read, write } = setup();
    await write('trace_marker', 'a\nb\nc');
    await write('trace_marker', 'nonl');
    await write('trace_marker', '\n');
    const lines = (await read('trace')).split('\n').filter((l) => !l.startsWith('#'));
    expect(lines[0]).toMatch(/tracing_mark_write: a$/);
    expect(lines.slice(1, 3)).toEqual(['b', 'c']);
    expect(lines[3]).toMatch(/tracing_mark_write: nonl$/);
    expect(lines[4]).toMatch(/tracing_mark_write: $/);
  });

  it('splits a marker bigger than an event can be, the writer writing the rest', async () => {
    const { fs, read, root } = setup();
    const h = await fs.open('trace_marker', 0o1 | 0o1000, root);
    const data = Buffer.alloc(4078, 'X');
    const n = await h.write(data, 0);
    expect(n).toBe(4054); // max event 4072 - print entry 16 - 2
    expect(await h.write(data.subarray(n), 0)).toBe(24);
    h.release();
    const bodies = traceLines(await read('trace')).map((l) => l.replace(/^.*tracing_mark_write: /, ''));
    expect(bodies.map((b) => b.length)).toEqual([4054, 24]);
    expect(bodies.join('')).toBe(data.toString());
  });

  it('caps one marker write at 4096 bytes', async () => {
    const { write } = setup();
    expect(await write('trace_marker', Buffer.alloc(5000, 'y'))).toBe(4054);
  });

  it('refuses markers with the kernel errnos', async () => {
    const { write } = setup();
    await write('options/markers', '0');
    expect(await errCode(write('trace_marker', 'x'))).toBe('EINVAL');
    await write('options/markers', '1');
    await write('tracing_on', '0');
    expect(await errCode(write('trace_marker', 'x'))).toBe('EBADF');
    expect(await errCode(write('trace_marker_raw', 'abcdefgh'))).toBe('EBADF');
    await write('tracing_on', '1');
    await write('options/copy_trace_marker', '0');
    expect(await errCode(write('trace_marker', 'x'))).toBe('ENODEV');
  });

  it('prints trace_marker_raw records with their bytes rounded up to 4', async () => {
    const { read, write, fs } = setup();
    await write('trace_marker_raw', Buffer.from('\x01\x00\x00\x00ABCDE', 'latin1'));
    expect(traceLines(await read('trace'))[0]).toMatch(/: # 1 buf: 41 42 43 44 45 [0-9a-f]{2} [0-9a-f]{2} [0-9a-f]{2}$/);
    expect(await read('per_cpu/cpu0/stats')).toContain('bytes: 24\n');
    expect(await errCode(write('trace_marker_raw', 'abc'))).toBe('EINVAL');
    expect(await errCode(write('trace_marker_raw', Buffer.alloc(4100)))).toBe('EINVAL');
    expect(await errCode(write('trace_marker_raw', Buffer.alloc(4072)))).toBe('EINVAL');
    expect(await errCode(write('trace_marker_raw', Buffer.alloc(4065)))).toBe('EINVAL');
    expect(await write('trace_marker_raw', Buffer.alloc(4064))).toBe(4064);
    void fs;
  });

  it('reserves room for "<faulted>" in markers on 6.12', async () => {
    const { read, write } = setup({ series: '6.12' });
    await write('trace_marker', 'hello\n');
    expect(await read('per_cpu/cpu0/stats')).toContain('bytes: 32\n');
    await write('trace_marker_raw', Buffer.from('\x01\x00\x00\x00ABCDE', 'latin1'));
    const line = traceLines(await read('trace'))[1];
    expect(line.replace(/^.*buf:/, '').trim().split(' ')).toHaveLength(16);
  });

  it('applies sym-offset, sym-addr, raw, hex, bin, fields, printk-msg-only', async () => {
    const { read, write } = setup();
    await write('trace_marker', 'hello\n');
    const last = async () => traceLines(await read('trace')).at(-1)!;
    await write('options/sym-offset', '1');
    expect(await last()).toMatch(/: tracing_mark_write\+0x81\/0x180: hello$/);
    await write('options/sym-addr', '1');
    expect(await last()).toMatch(/: tracing_mark_write\+0x81\/0x180 <ffffffff[0-9a-f]{8}>: hello$/);
    await write('options/sym-offset', '0');
    await write('options/sym-addr', '0');
    await write('options/fields', '1');
    expect(await last()).toMatch(/: UNKNOWN TYPE 5$/);
    await write('options/fields', '0');
    await write('options/raw', '1');
    expect(await last()).toMatch(/^\d+ 0 \d+ # ffffffff[0-9a-f]{8} hello$/);
    await write('options/raw', '0');
    await write('options/hex', '1');
    const hex = (await read('trace')).split('\n');
    expect(hex.at(-3)).toMatch(/^[0-9a-f]{8} 00000000 [0-9a-f]{16} type: 5$/);
    await write('options/hex', '0');
    await write('options/printk-msg-only', '1');
    expect((await read('trace')).endsWith('|         |\nhello\n')).toBe(true);
    await write('options/printk-msg-only', '0');
    await write('options/context-info', '0');
    expect(await read('trace')).toBe('# tracer: nop\n#\ntracing_mark_write: hello\n');
  });

  it('drops the irq columns without irq-info, adds TGID with record-tgid', async () => {
    const { read, write, root } = setup();
    await write('options/irq-info', '0');
    await write('trace_marker', 'x\n');
    const t = await read('trace');
    expect(t).toContain('#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n#              | |         |         |         |\n');
    expect(traceLines(t)[0]).toMatch(/\[000\] +\d+\.\d{6}: tracing_mark_write: x$/);
    await write('options/irq-info', '1');
    await write('options/record-tgid', '1');
    await write('trace_marker', 'y\n');
    const t2 = await read('trace');
    expect(t2).toContain('#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n');
    expect(traceLines(t2)[1]).toContain(`-${root.pid} `);
    expect(traceLines(t2)[1]).toMatch(new RegExp(`\\( *${root.pid}\\) \\[000\\]`));
    expect(await read('saved_tgids')).toContain(`${root.pid} ${root.pid}\n`);
  });

  it('prints the latency format', async () => {
    const { read, write } = setup();
    await write('options/latency-format', '1');
    expect(await read('trace')).toBe('# tracer: nop\n#\n');
    await write('trace_marker', 'lat\n');
    await write('trace_marker', 'lat2\n');
    const t = await read('trace');
    expect(t).toMatch(/^# tracer: nop\n#\n# nop latency trace v1\.1\.5 on 7\.2\.13\+deb14-amd64\n/);
    expect(t).toContain('# latency: 0 us, #2/2, CPU#0 | (M:PREEMPT(lazy) VP:0, KP:0, SP:0 HP:0 #P:2)\n');
    expect(t).toContain('#    | task: -0 (uid:0 nice:0 policy:0 rt_prio:0)\n');
    expect(t).toContain('#  cmd     pid     |||||| time  |   caller     \n#     \\   /        ||||||  \\    |    /       \n');
    const lines = traceLines(t);
    expect(lines[0]).toMatch(/^ {6}sh-\d+ +0\.\.\.1\. +\d+us.: tracing_mark_write: lat$/);
    await write('options/verbose', '1');
    const v = traceLines(await read('trace'));
    expect(v[0]).toMatch(/^ +sh +\d+ +0 0 00000001 00000000 \[[0-9a-f]{8}\] \d+\.\d{3}ms \(\+\d+\.\d{3}ms\): tracing_mark_write: lat$/);
    expect(v[1]).toMatch(/ 00000001 00000001 .*\(\+0\.000ms\): /);
  });

  it('shows trace_clock counter and uptime timestamps as integers', async () => {
    const { read, write } = setup();
    await write('trace_clock', 'counter');
    await write('trace_marker', 'c\n');
    // Switching resets both buffers, each reading the counter once: the event is the third tick.
    expect(traceLines(await read('trace'))[0]).toMatch(/\[000\] \.\.\.1\. {12}3: tracing_mark_write: c$/);
    const stats = await read('per_cpu/cpu0/stats');
    expect(stats).toMatch(/oldest event ts: 3\nnow ts: \d+\n/);
  });
});

describe('output annotations', () => {
  it('marks where a CPU buffer starts after overruns, and lost events in trace_pipe', async () => {
    const { read, write, shell, fs } = setup();
    const c1 = shell('sh', 1);
    for (let i = 0; i < 300; i++) await write('trace_marker', `m${i}\n`);
    await write('trace_marker', 'a\n', c1);
    await write('trace_marker', 'b\n', c1);
    const t = await read('trace');
    expect(t).toContain('# entries-in-buffer/entries-written: 157/302   #P:2\n');
    // As the kernel: line 168, after the 12 header lines and CPU 0's 155 events.
    expect(t.split('\n').indexOf('##### CPU 1 buffer started ####')).toBe(167);
    expect(t.split('\n').filter((l) => l.startsWith('#####'))).toHaveLength(1);
    const h = await fs.open('trace_pipe', 0o4000);
    const out = (await h.read(65536, 0)).toString('latin1');
    h.release();
    expect(out.split('\n')[0]).toBe('CPU:0 [LOST 145 EVENTS]');
  });
});
