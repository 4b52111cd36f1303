/**
 * Trace remotes (remotes/, 7.2 and 7.3): remote_test's `test` remote and the
 * simulated hypervisor's, through the library API — loaded and unloaded
 * states, write_event into per-CPU buffers, trace and trace_pipe lines,
 * lost events, reset, the events/ files and the errnos of bad input.
 */
import { describe, expect, it } from 'vitest';
import { O_RDONLY, O_WRONLY } from '../../src/tracefs/node.js';
import { echo, errCode, setup } from '../helpers/tracefs.js';

const R = 'remotes/test';

/** The remote_test set-up of the selftests (setup_remote()). */
async function testRemote(opts: { series?: '7.2' | '7.3' } = {}) {
  const s = setup({ cpus: 2, ...opts });
  s.kernel.modules.load('remote_test');
  const w = (file: string, text: string, caller = s.root) => echo(s.fs, `${R}/${file}`, text, false, caller);
  const r = (file: string) => s.read(`${R}/${file}`);
  /** One read(2) of a trace_pipe (it never ends). */
  const pipe = async (file: string) => {
    const h = await s.fs.open(`${R}/${file}`, O_RDONLY, s.root);
    try {
      return (await h.read(65536, 0)).toString('latin1');
    } finally {
      h.release();
    }
  };
  await w('tracing_on', '0\n');
  await w('trace', '\n');
  await w('buffer_size_kb', '7\n');
  await w('events/enable', '0\n');
  await w('events/test/selftest/enable', '1\n');
  await w('tracing_on', '1\n');
  return { ...s, w, r, pipe, cpu1: s.shell('echo', 1) };
}

/** `<ts> <id>` of each event line, as check_trace() reads them. */
function ids(text: string): number[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => Number(/^\[\d{3}\]\t +\d+\.\d{6}: selftest id=(\d+)$/.exec(l)?.[1] ?? NaN));
}

describe('trace remotes', () => {
  it('remote_test adds remotes/test with its files; it cannot be unloaded', async () => {
    const { fs, kernel, root } = setup({ cpus: 2 });
    expect(await errCode(() => fs.stat('remotes', root))).toBe('ENOENT');
    kernel.modules.load('remote_test');
    expect((await fs.readdir(R, root)).sort()).toEqual(['buffer_size_kb', 'events', 'per_cpu', 'trace', 'trace_pipe', 'tracing_on', 'write_event']);
    expect((await fs.readdir(`${R}/per_cpu/cpu1`, root)).sort()).toEqual(['trace', 'trace_pipe']);
    expect((await fs.stat(`${R}/write_event`, root)).mode & 0o777).toBe(0o200);
    expect((await fs.stat(`${R}/trace_pipe`, root)).mode & 0o777).toBe(0o440);
    expect(() => kernel.modules.unload('remote_test')).toThrow(expect.objectContaining({ code: 'EBUSY' }));
  });

  it('has no remotes on 6.12, which has no remote_test', async () => {
    const { fs, kernel, root } = setup({ series: '6.12' });
    expect(() => kernel.modules.load('remote_test')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(await errCode(() => fs.stat('remotes', root))).toBe('ENOENT');
  });

  it('shows its event format, id and enable state', async () => {
    const { r } = await testRemote();
    expect(await r('events/test/selftest/format')).toBe(
      'name: selftest\nID: 1\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:u64 id;\toffset:2;\tsize:8;\tsigned:0;\n\nprint fmt: "id=%llu", REC->id\n',
    );
    expect(await r('events/test/selftest/id')).toBe('1\n');
    expect(await r('events/test/selftest/enable')).toBe('1\n');
    expect(await r('events/enable')).toBe('1\n');
    expect(await r('events/header_page')).toContain('\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n');
  });

  it('is loaded while tracing is on, being read, or holding events; unloaded otherwise', async () => {
    const { w, r, fs, root } = await testRemote();
    expect(await r('buffer_size_kb')).toBe('7 (loaded)\n');
    await w('tracing_on', '0\n');
    expect(await r('buffer_size_kb')).toBe('7 (unloaded)\n');
    const pipe = await fs.open(`${R}/trace_pipe`, O_RDONLY, root);
    expect(await r('buffer_size_kb')).toBe('7 (loaded)\n');
    pipe.release();
    expect(await r('buffer_size_kb')).toBe('7 (unloaded)\n');
    await w('tracing_on', '1\n');
    await w('write_event', '1\n');
    await w('tracing_on', '0\n');
    expect(await r('buffer_size_kb')).toBe('7 (loaded)\n');
    await w('trace', '\n');
    expect(await r('buffer_size_kb')).toBe('7 (unloaded)\n');
  });

  it('refuses a size change while loaded, and bad sizes', async () => {
    const { w, r } = await testRemote();
    expect(await errCode(w('buffer_size_kb', '4096\n'))).toBe('EBUSY');
    await w('tracing_on', '0\n');
    expect(await errCode(w('buffer_size_kb', '0\n'))).toBe('EINVAL');
    expect(await errCode(w('buffer_size_kb', 'x\n'))).toBe('EINVAL');
    expect(await errCode(w('buffer_size_kb', '18014398509481984\n'))).toBe('EINVAL');
    expect(await errCode(w('buffer_size_kb', '18446744073709551616\n'))).toBe('ERANGE');
    await w('buffer_size_kb', '4096\n');
    expect(await r('buffer_size_kb')).toBe('4096 (unloaded)\n');
  });

  it('write_event records on the writer CPU; trace shows, trace_pipe consumes', async () => {
    const { w, r, pipe, cpu1 } = await testRemote();
    for (let i = 1; i <= 3; i++) await w('write_event', `${i}\n`);
    await w('write_event', '4\n', cpu1);
    expect(ids(await r('trace'))).toEqual([1, 2, 3, 4]);
    expect(await r('trace')).toMatch(/^\[000\]\t +\d+\.\d{6}: selftest id=1\n/);
    expect(ids(await r('per_cpu/cpu1/trace'))).toEqual([4]);
    expect(ids(await pipe('per_cpu/cpu0/trace_pipe'))).toEqual([1, 2, 3]);
    expect(ids(await r('trace'))).toEqual([4]);
    expect(await r('per_cpu/cpu1/trace')).toMatch(/^\[001\]\t/);
    await w('trace', '0\n');
    expect(await r('trace')).toBe('');
  });

  it('write_event writes on the CPU of the process writing, whoever opened it (a shell redirection before a vfork)', async () => {
    const { fs, root, r, cpu1 } = await testRemote();
    const h = await fs.open(`${R}/write_event`, O_WRONLY, root);
    await h.write(Buffer.from('9\n'), 0, cpu1);
    h.release();
    expect(ids(await r('per_cpu/cpu1/trace'))).toEqual([9]);
    expect(ids(await r('per_cpu/cpu0/trace'))).toEqual([]);
  });

  it('write_event: ENODEV when the event is off or tracing is off; EINVAL for a non-number', async () => {
    const { w } = await testRemote();
    expect(await errCode(w('write_event', 'abc\n'))).toBe('EINVAL');
    await w('tracing_on', '0\n');
    expect(await errCode(w('write_event', '1\n'))).toBe('ENODEV');
    await w('tracing_on', '1\n');
    await w('events/test/selftest/enable', '0\n');
    expect(await errCode(w('write_event', '1\n'))).toBe('ENODEV');
    expect(await errCode(w('events/test/selftest/enable', '256\n'))).toBe('ERANGE');
  });

  it('loses the oldest pages when a CPU buffer overflows; trace_pipe says how many', async () => {
    const { w, r, pipe: readPipe } = await testRemote();
    // 7 KiB: two pages in the ring and the reader page, 170 events of 24 bytes a page
    for (let i = 1; i <= 816; i++) await w('write_event', `${i}\n`);
    const seen = ids(await r('trace'));
    expect(seen[0]).toBeGreaterThan(1);
    expect(seen.at(-1)).toBe(816);
    const pipe = await readPipe('trace_pipe');
    const m = /^CPU:0 \[LOST (\d+) EVENTS\]\n/.exec(pipe)!;
    expect(m).not.toBeNull();
    expect(ids(pipe.slice(m[0].length))[0]).toBe(Number(m[1]) + 1);
    // one read(2) gives what one trace_seq holds (about 8 KiB), in order
    const first = ids(pipe.slice(m[0].length));
    expect(pipe.length).toBeLessThanOrEqual(8155);
    expect(first).toEqual(seen.slice(0, first.length));
  });

  it('a reset of one CPU leaves the others', async () => {
    const { w, r, cpu1 } = await testRemote();
    await w('write_event', '1\n');
    await w('write_event', '2\n', cpu1);
    await w('per_cpu/cpu0/trace', '\n');
    expect(ids(await r('trace'))).toEqual([2]);
  });

  it('trace_pipe waits for an event', async () => {
    const { w, fs, root } = await testRemote();
    const pipe = await fs.open(`${R}/trace_pipe`, O_RDONLY, root);
    const got = pipe.read(4096, 0);
    await w('write_event', '42\n');
    expect(ids((await got).toString())).toEqual([42]);
    pipe.release();
  });
});

describe('the hypervisor remote', () => {
  it('needs the hypervisor-tracing feature, and has its own events and trace_clock', async () => {
    const plain = setup();
    expect(await errCode(() => plain.fs.stat('remotes', plain.root))).toBe('ENOENT');
    const { fs, root } = setupHyp();
    const H = 'remotes/hypervisor';
    expect((await fs.readdir(`${H}/events/hypervisor`, root)).sort()).toEqual(['hyp_enter', 'hyp_exit', 'selftest']);
    expect(await fs.readFile(`${H}/trace_clock`, root)).toBe('[boot]\n');
    expect(await fs.readFile(`${H}/events/hypervisor/selftest/id`, root)).toBe('2\n');
    expect(await fs.readFile(`${H}/events/hypervisor/hyp_enter/format`, root)).toBe(
      'name: hyp_enter\nID: 0\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n' +
        '\tfield:u8 reason;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:pid_t vcpu;\toffset:3;\tsize:4;\tsigned:1;\n\n' +
        'print fmt: "reason=%s vcpu=%d", __hyp_enter_exit_reason_str(REC->reason), REC->vcpu\n',
    );
  });

  it('drops a write_event it cannot record, and records it once enabled', async () => {
    const { fs, root } = setupHyp();
    const H = 'remotes/hypervisor';
    await echo(fs, `${H}/write_event`, '5\n', false, root);
    await echo(fs, `${H}/tracing_on`, '1\n', false, root);
    await echo(fs, `${H}/write_event`, '6\n', false, root);
    expect(await fs.readFile(`${H}/trace`, root)).toBe('');
    await echo(fs, `${H}/events/enable`, '1\n', false, root);
    expect(await fs.readFile(`${H}/events/enable`, root)).toBe('1\n');
    await echo(fs, `${H}/events/hypervisor/hyp_exit/enable`, '0\n', false, root);
    expect(await fs.readFile(`${H}/events/enable`, root)).toBe('X\n');
    await echo(fs, `${H}/write_event`, '7\n', false, root);
    expect(ids(await fs.readFile(`${H}/trace`, root))).toEqual([7]);
  });
});

function setupHyp() {
  return setup({ features: ['hypervisor-tracing'] });
}
