import { describe, expect, it } from 'vitest';
import { errCode, fixture, setup, traceLines } from '../helpers/tracefs.js';

describe('snapshot', () => {
  it('shows the help text when freed, per file kind', async () => {
    const { read } = setup();
    expect(await read('snapshot')).toBe(fixture('snapshot.freed.txt'));
    expect(await read('per_cpu/cpu0/snapshot')).toBe(fixture('percpu-snapshot.freed.txt'));
  });

  it('swaps the live buffer with the spare one (echo 1), as often as asked', async () => {
    const { read, write } = setup();
    await write('trace_marker', 'before\n');
    await write('snapshot', '1');
    await write('trace_marker', 'after\n');
    const snap = await read('snapshot');
    expect(snap).toContain('# entries-in-buffer/entries-written: 1/1   #P:2\n');
    expect(traceLines(snap)[0]).toMatch(/tracing_mark_write: before$/);
    expect(traceLines(await read('trace')).map((l) => l.replace(/^.*: /, ''))).toEqual(['after']);
    // A second snapshot brings the previous one back live.
    await write('snapshot', '1');
    expect(traceLines(await read('trace')).map((l) => l.replace(/^.*: /, ''))).toEqual(['before']);
  });

  it('clears with any other number, frees with 0', async () => {
    const { read, write } = setup();
    await write('trace_marker', 'x\n');
    await write('snapshot', '1');
    await write('snapshot', '2');
    expect(await read('snapshot')).toBe(
      fixture('snapshot.freed.txt').replace('Snapshot is freed', 'Snapshot is allocated'),
    );
    await write('snapshot', '0');
    expect(await read('snapshot')).toBe(fixture('snapshot.freed.txt'));
    expect(await errCode(write('snapshot', 'x'))).toBe('EINVAL');
  });

  it('refuses 0 and 1 on per-CPU snapshot files (no per-CPU swap in these kernels)', async () => {
    const { write } = setup();
    expect(await errCode(write('per_cpu/cpu0/snapshot', '0'))).toBe('EINVAL');
    expect(await errCode(write('per_cpu/cpu0/snapshot', '1'))).toBe('EINVAL');
    expect(await errCode(write('per_cpu/cpu0/snapshot', '2'))).toBe('ok');
  });

  it('sizes the spare buffer as the live one and follows resizes', async () => {
    const { write, tracing } = setup();
    await write('snapshot', '1');
    const tr = tracing.top;
    expect(tr.snapshotBuffer.cpus[0].nrPages).toBe(tr.buffer.cpus[0].nrPages);
    await write('buffer_size_kb', '40');
    expect(tr.snapshotBuffer.cpus[0].nrPages).toBe(tr.buffer.cpus[0].nrPages);
    await write('snapshot', '0');
    expect(tr.snapshotBuffer.cpus[0].nrPages).toBe(2);
  });

  it('00basic/snapshot.tc and snapshot1.tc replayed, top and instance', async () => {
    const { fs, read, write } = setup();
    fs.mkdir('instances/foo');
    for (const d of ['', 'instances/foo/']) {
      // snapshot.tc
      await write(`${d}tracing_on`, '0');
      await write(`${d}snapshot`, '1');
      expect(await read(`${d}snapshot`)).toContain('Snapshot is allocated');
      expect(await read(`${d}tracing_on`)).toBe('0\n');
      await write(`${d}tracing_on`, '1');
      await write(`${d}snapshot`, '1');
      expect(await read(`${d}tracing_on`)).toBe('1\n');
      // snapshot1.tc
      const orig = (await read(`${d}tracing_cpumask`)).trim();
      await write(`${d}tracing_cpumask`, '0');
      await write(`${d}snapshot`, '1');
      await write(`${d}tracing_cpumask`, orig);
      await write(`${d}tracing_on`, '1');
      await write(`${d}trace_marker`, 'test input 1\n');
      expect(await read(`${d}trace`)).toContain('test input 1');
    }
  });
});

describe('snapshots taken inside the kernel (triggers)', () => {
  it('say so in the trace and stop tracing without a spare buffer, else swap', async () => {
    const { read, write, tracing, root, taskOf } = setup();
    const tr = tracing.top;
    const ctx = { task: taskOf(root), cpu: 0, flags: 0, preemptCount: 0 };
    tr.snapshotFromKernel(ctx);
    const lines = traceLines(await read('trace')).map((l) => l.replace(/^.*\d: /, ''));
    expect(lines).toEqual([
      'tracing_snapshot_instance_cond: *** SNAPSHOT NOT ALLOCATED ***',
      'tracing_snapshot_instance_cond: *** stopping trace here!   ***',
    ]);
    expect(await read('tracing_on')).toBe('0\n');
    await write('tracing_on', '1');
    await write('snapshot', '1');
    await write('trace_marker', 'kept\n');
    tr.snapshotFromKernel(ctx);
    expect(await read('snapshot')).toContain('tracing_mark_write: kept');
  });
});

describe('error_log', () => {
  it('lays out entries as the kernel and keeps the last 8', async () => {
    const { read, tracing } = setup();
    for (let i = 1; i <= 10; i++) {
      const cmd = `f:cap${i} no_such_function_${i}`;
      tracing.errorLog.log(tracing.top, 'trace_fprobe', cmd, cmd.indexOf('no_such'), 'Invalid probed address or symbol');
    }
    const norm = (s: string) => s.replace(/^\[ *\d+\.\d{6}\]/gm, '[TS]');
    expect(norm(await read('error_log'))).toBe(norm(fixture('error_log.after-10-errors.txt')));
  });

  it('is per trace array and cleared by echo > error_log', async () => {
    const { fs, read, write, tracing } = setup();
    fs.mkdir('instances/e');
    const inst = tracing.instances.get('e')!;
    tracing.errorLog.log(inst, 'event', 'x == 1', 2, 'Invalid operator');
    expect(await read('error_log')).toBe('');
    expect(await read('instances/e/error_log')).toMatch(/^\[ +\d+\.\d{6}\] event: error: Invalid operator\n  Command: x == 1\n {13}\^\n$/);
    await write('instances/e/error_log', '\n', undefined, true);
    expect(await read('instances/e/error_log')).not.toBe('');
    await write('instances/e/error_log', '\n');
    expect(await read('instances/e/error_log')).toBe('');
  });
});
