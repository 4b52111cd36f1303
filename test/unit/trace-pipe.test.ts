import { describe, expect, it } from 'vitest';
import { O_DIRECT, O_NONBLOCK, O_RDONLY, POLLIN, POLLRDNORM } from '../../src/tracefs/node.js';
import { Task } from '../../src/kernel/task.js';
import type { Caller } from '../../src/kernel/caller.js';
import { testEmulator } from '../helpers/emulator.js';
import { errCode, setup, traceLines } from '../helpers/tracefs.js';

describe('trace_pipe', () => {
  it('consumes what it shows, without a header', async () => {
    const { fs, read, write } = setup();
    await write('trace_marker', 'one\n');
    await write('trace_marker', 'two\n');
    const h = await fs.open('trace_pipe', O_RDONLY);
    const text = (await h.read(65536, 0)).toString();
    h.release();
    expect(text.split('\n').filter(Boolean).map((l) => l.replace(/^.*: /, ''))).toEqual(['one', 'two']);
    expect(text.startsWith('#')).toBe(false);
    expect(traceLines(await read('trace'))).toHaveLength(0);
  });

  it('fails with EAGAIN when empty and opened O_NONBLOCK', async () => {
    const { fs } = setup();
    const h = await fs.open('trace_pipe', O_RDONLY | O_NONBLOCK);
    expect(await errCode(h.read(4096, 0))).toBe('EAGAIN');
    h.release();
  });

  it('blocks while empty and returns once a record arrives', async () => {
    const { fs, write } = setup();
    const h = await fs.open('trace_pipe', O_RDONLY);
    let done = false;
    const p = h.read(4096, 0).then((b) => {
      done = true;
      return b.toString();
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    // Turning tracing off does not end the wait (the kernel keeps blocking).
    await write('tracing_on', '0');
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    await write('tracing_on', '1');
    await write('trace_marker', 'wake up\n');
    expect(await p).toMatch(/tracing_mark_write: wake up\n$/);
    h.release();
  });

  it('ends a blocked read with EINTR when the reader is interrupted', async () => {
    const { fs } = setup();
    const h = await fs.open('trace_pipe', O_RDONLY);
    const ac = new AbortController();
    const t0 = Date.now();
    const p = errCode(h.read(4096, 0, ac.signal));
    setTimeout(() => ac.abort(), 20);
    expect(await p).toBe('EINTR');
    expect(Date.now() - t0).toBeLessThan(1000);
    h.release();
  });

  it('polls ready when data arrives, calling wake', async () => {
    const { fs, write } = setup();
    const h = await fs.open('trace_pipe', O_RDONLY);
    let woken = 0;
    expect(h.poll(() => woken++)).toBe(0);
    await write('trace_marker', 'ping\n');
    await new Promise((r) => setTimeout(r, 0));
    expect(woken).toBe(1);
    expect(h.poll(() => woken++)).toBe(POLLIN | POLLRDNORM);
    h.release();
  });

  it('is always readable with the block option', async () => {
    const { fs, write } = setup();
    await write('options/block', '1');
    const h = await fs.open('trace_pipe', O_RDONLY);
    expect(h.poll(() => {})).toBe(POLLIN | POLLRDNORM);
    h.release();
  });

  it('reads one CPU with per_cpu/cpuN/trace_pipe, and polls it against buffer_percent', async () => {
    const { fs, write, shell } = setup();
    const c1 = shell('sh', 1);
    await write('trace_marker', 'cpu0\n');
    await write('trace_marker', 'cpu1\n', c1);
    const h = await fs.open('per_cpu/cpu1/trace_pipe', O_RDONLY | O_NONBLOCK);
    // 1 page of 2 dirty: not the 100% asked for
    await write('buffer_percent', '100');
    expect(h.poll(() => {})).toBe(0);
    await write('buffer_percent', '0');
    expect(h.poll(() => {})).toBe(POLLIN | POLLRDNORM);
    const text = (await h.read(4096, 0)).toString();
    expect(text).toMatch(/^ +sh-\d+ +\[001\] .*cpu1\n$/);
    h.release();
  });

  it('wakes a poller of one CPU once buffer_percent of it is written, not at every event', async () => {
    const { fs, write } = setup();
    await write('buffer_size_kb', '16');
    const h = await fs.open('per_cpu/cpu0/trace_pipe_raw', O_RDONLY);
    let woken = 0;
    const wake = () => woken++;
    expect(h.poll(wake)).toBe(0);
    await write('trace_marker', 'first\n');
    await new Promise((r) => setTimeout(r, 0));
    // A poller's own traced system calls would wake it again and again (trace-cmd's recorders spun so).
    expect(woken).toBe(0);
    expect(h.poll(wake)).toBe(0);
    // Polled twice with the same wake: woken once.
    for (let i = 0; i < 200 && !woken; i++) {
      await write('trace_marker', `${'x'.repeat(100)} ${i}\n`);
      await new Promise((r) => setTimeout(r, 0));
    }
    expect(woken).toBe(1);
    expect(h.poll(wake)).toBe(POLLIN | POLLRDNORM);
    h.release();
  });

  it('wakes a blocked read of trace_pipe_raw at the first event, a splice at buffer_percent', async () => {
    const { fs, write } = setup();
    await write('buffer_size_kb', '16');
    const reader = await fs.open('per_cpu/cpu0/trace_pipe_raw', O_RDONLY);
    const splicer = await fs.open('per_cpu/cpu0/trace_pipe_raw', O_RDONLY | O_DIRECT);
    const done: string[] = [];
    const r = reader.read(4096, 0).then(() => done.push('read'));
    const s = splicer.read(65536, 0).then(() => done.push('splice'));
    await write('trace_marker', 'first\n');
    await r;
    expect(done).toEqual(['read']);
    for (let i = 0; i < 200 && done.length < 2; i++) {
      await write('trace_marker', `${'x'.repeat(100)} ${i}\n`);
      await new Promise((res) => setTimeout(res, 0));
    }
    await s;
    expect(done).toEqual(['read', 'splice']);
    reader.release();
    splicer.release();
  });

  it('a poll asked by FUSE is a system call of its own only for a caller whose calls its tracer does not report', async () => {
    const { fs, kernel } = testEmulator({ callPaths: true });
    const caller = (pid: number, reported: boolean): Caller => {
      const t = kernel.tasks.add(new Task(pid, pid, 'poller', 1));
      t.callsReported = reported;
      return { pid, uid: 0, gid: 0 };
    };
    await fs.writeFile('events/raw_syscalls/sys_enter/enable', '1');
    const polls = async () => (await fs.readFile('trace')).toString().split('\n').filter((l) => / sys_enter: NR 7 /.test(l)).length;
    const h1 = await fs.open('per_cpu/cpu0/trace_pipe_raw', O_RDONLY, caller(4900, false));
    h1.poll(() => {});
    expect(await polls()).toBe(1);
    const h2 = await fs.open('per_cpu/cpu0/trace_pipe_raw', O_RDONLY, caller(4901, true));
    h2.poll(() => {});
    h2.poll(() => {});
    expect(await polls()).toBe(1);
    h1.release();
    h2.release();
  });

  it('keeps the tracer from changing while open (EBUSY) and the instance from going', async () => {
    const { fs, write } = setup();
    fs.mkdir('instances/p');
    const h = await fs.open('instances/p/trace_pipe', O_RDONLY | O_NONBLOCK);
    expect(() => fs.rmdir('instances/p')).toThrow(expect.objectContaining({ code: 'EBUSY' }));
    h.release();
    fs.rmdir('instances/p');
    void write;
  });

  it('gives trace_pipe_raw pages a reader can decode', async () => {
    const { fs, write } = setup();
    await write('trace_marker', 'raw page\n');
    const h = await fs.open('per_cpu/cpu0/trace_pipe_raw', O_RDONLY | O_NONBLOCK);
    const page = await h.read(4096, 0);
    expect(page.length).toBe(4096);
    const commit = page.readUInt32LE(8);
    expect(commit).toBe(32);
    // first event: type_len 7 (28 bytes of data), then the print entry
    expect(page.readUInt32LE(16) & 31).toBe(7);
    expect(page.readUInt16LE(20)).toBe(5);
    expect(page.toString('latin1', 36, 45)).toBe('raw page\n');
    expect(await errCode(h.read(4096, 0))).toBe('EAGAIN');
    h.release();
  });
});

describe('trace_pipe_raw as the kernel hands it out', () => {
  it('gives a full sub-buffer whole, its commit where the last event ended', async () => {
    const { fs, read, write } = setup();
    for (let i = 0; i < 200; i++) await write('trace_marker', `m${i}\n`);
    const h = await fs.open('per_cpu/cpu0/trace_pipe_raw', O_RDONLY | O_NONBLOCK);
    const page = await h.read(4096, 0);
    h.release();
    expect(page.readUInt32LE(8)).toBe(0xfdc);
    expect(page.readUInt32LE(16)).toBe(6);
    const stats = await read('per_cpu/cpu0/stats');
    expect(stats).toMatch(/^entries: 55\noverrun: 0\ncommit overrun: 0\nbytes: 1540\n/);
    expect(stats).toContain('read events: 145\n');
  });

  it('a read() gives one sub-buffer, a splice (an O_DIRECT read under exec) as many whole ones as fit', async () => {
    const { fs, write } = setup();
    await write('buffer_size_kb', '64');
    for (let i = 0; i < 600; i++) await write('trace_marker', `m${i}\n`);
    const h = await fs.open('per_cpu/cpu0/trace_pipe_raw', O_RDONLY | O_NONBLOCK);
    expect((await h.read(65536, 0)).length).toBe(4096);
    h.setStatusFlags(O_NONBLOCK | O_DIRECT);
    const spliced = await h.read(8192 + 100, 0);
    expect(spliced.length).toBe(8192);
    // each one a page of its own, with its commit
    expect([spliced.readUInt32LE(8), spliced.readUInt32LE(4096 + 8)]).toEqual([0xfdc, 0xfdc]);
    h.release();
  });
});

describe('00basic/trace_pipe.tc replayed', () => {
  it('trace never consumes, trace_pipe does', async () => {
    const { fs, write, read } = setup();
    for (const dir of ['', 'instances/foo/']) {
      if (dir) fs.mkdir('instances/foo');
      await write(`${dir}trace_marker`, 'test input 1\n');
      expect(await read(`${dir}trace`)).toContain('test input 1');
      expect(await read(`${dir}trace`)).toContain('test input 1');
      const h = await fs.open(`${dir}trace_pipe`, O_RDONLY);
      const first = (await h.read(4096, 0)).toString().split('\n')[0];
      h.release();
      expect(first).toContain('test input 1');
      expect(await read(`${dir}trace`)).not.toContain('test input 1');
    }
  });
});
