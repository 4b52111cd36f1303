import { describe, expect, it } from 'vitest';
import { writeCommonHeader } from '../../src/trace/event_type.js';
import { O_APPEND, O_RDONLY, O_TRUNC, O_WRONLY } from '../../src/tracefs/node.js';
import { errCode, setup, traceLines } from '../helpers/tracefs.js';

describe('the trace file', () => {
  it('is cleared by opening for write with O_TRUNC (echo > trace), not by >>', async () => {
    const { fs, read, write, shell } = setup();
    const c1 = shell('sh', 1);
    await write('trace_marker', 'a\n');
    await write('trace_marker', 'b\n', c1);
    await write('trace', '\n', undefined, true);
    expect(traceLines(await read('trace'))).toHaveLength(2);
    await write('per_cpu/cpu1/trace', '\n');
    expect(traceLines(await read('trace')).map((l) => l.slice(-1))).toEqual(['a']);
    const h = await fs.open('trace', O_WRONLY | O_TRUNC);
    h.release();
    expect(traceLines(await read('trace'))).toHaveLength(0);
    expect(await read('per_cpu/cpu0/stats')).toContain('entries: 0\noverrun: 0\n');
    void O_APPEND;
  });

  it('pauses recording while open with pause-on-trace', async () => {
    const { fs, read, write } = setup();
    await write('options/pause-on-trace', '1');
    const h = await fs.open('trace', O_RDONLY);
    // The buffer refuses records meanwhile: a marker write fails as with tracing off.
    expect(await errCode(write('trace_marker', 'while open\n'))).toBe('EBADF');
    h.release();
    await write('trace_marker', 'after\n');
    expect(traceLines(await read('trace')).map((l) => l.replace(/^.*: /, ''))).toEqual(['after']);
  });

  it('keeps reading a consistent position across reads of any size', async () => {
    const { fs, read, write } = setup();
    for (let i = 0; i < 50; i++) await write('trace_marker', `line ${i}\n`);
    const whole = await read('trace');
    const h = await fs.open('trace', O_RDONLY);
    let got = '';
    for (let pos = 0; ; ) {
      const b = await h.read(97, pos);
      if (!b.length) break;
      got += b.toString('latin1');
      pos += b.length;
    }
    // a read at an earlier position starts over
    expect((await h.read(10, 0)).toString()).toBe(whole.slice(0, 10));
    h.release();
    expect(got).toBe(whole);
  });

  it('renders every record of a full 1408 KiB buffer of each CPU', async () => {
    const { tracing, fs, root, taskOf } = setup({ cpus: 2 });
    const tr = tracing.top;
    tr.updateBuffers();
    const data = Buffer.alloc(26);
    writeCommonHeader(data, tracing.ftraceTypes.print.id, { task: taskOf(root), cpu: 0, flags: 0, preemptCount: 1 });
    data.write('hello wor\n\0', 16, 'latin1');
    for (let cpu = 0; cpu < 2; cpu++) for (let i = 0; i < 60000; i++) tr.record(cpu, data);
    const text = await fs.readFile('trace');
    expect(traceLines(text).length).toBe(tr.buffer.entries());
    expect(tr.buffer.entries()).toBeGreaterThan(80000);
  });
});
