/** The blk and mmiotrace tracers: selectable, with the real kernels' options, headers and side effects. */
import { describe, expect, it } from 'vitest';
import { testEmulator } from '../helpers/emulator.js';

function emu() {
  const e = testEmulator();
  const fs = e.fs;
  return { fs, read: (p: string) => fs.readFile(p), write: (p: string, s: string) => fs.writeFile(p, s) };
}

describe('blk and mmiotrace tracers', () => {
  it('are available at the top level only, newest first, with the blk options at the top only', async () => {
    const { fs, read } = emu();
    expect(await read('available_tracers')).toBe('blk mmiotrace function_graph function nop\n');
    fs.mkdir('instances/x');
    expect(await read('instances/x/available_tracers')).toBe('function_graph function nop\n');
    expect(fs.readdir('options')).toEqual(expect.arrayContaining(['blk_classic', 'blk_cgroup', 'blk_cgname']));
    expect(fs.readdir('instances/x/options')).not.toContain('blk_classic');
    await expect(fs.writeFile('instances/x/current_tracer', 'blk')).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it('blk: an empty trace with only the tracer line; blk_classic adds its header and turns context-info off', async () => {
    const { read, write } = emu();
    await write('current_tracer', 'blk');
    expect(await read('current_tracer')).toBe('blk\n');
    expect(await read('trace')).toBe('# tracer: blk\n#\n');
    expect((await read('trace_options')).split('\n').slice(-4)).toEqual(['noblk_classic', 'noblk_cgroup', 'noblk_cgname', '']);
    await write('options/blk_classic', '1');
    expect(await read('options/context-info')).toBe('0\n');
    expect(await read('trace')).toBe('# tracer: blk\n#\n# DEV   CPU TIMESTAMP     PID ACT FLG\n#  |     |     |           |   |   |\n');
    await write('options/blk_classic', '0');
    expect(await read('options/context-info')).toBe('1\n');
    // Written while another tracer is current, the option still acts.
    await write('current_tracer', 'nop');
    await write('options/blk_classic', '1');
    expect(await read('options/context-info')).toBe('0\n');
    await write('options/blk_classic', '0');
    expect(await read('options/context-info')).toBe('1\n');
  });

  it('mmiotrace takes every CPU but the first offline while selected (#P:1)', async () => {
    const { read, write } = emu();
    expect(await read('trace')).toContain('#P:2');
    await write('current_tracer', 'mmiotrace');
    expect(await read('current_tracer')).toBe('mmiotrace\n');
    const t = await read('trace');
    expect(t.startsWith('# tracer: mmiotrace\n#\n# entries-in-buffer/entries-written: 0/0   #P:1\n')).toBe(true);
    expect(await read('trace_options')).not.toContain('blk_classic');
    await write('current_tracer', 'nop');
    expect(await read('trace')).toContain('#P:2');
  });

  it('every available tracer can be selected in turn (basic2.tc)', async () => {
    const { read, write } = emu();
    for (const t of (await read('available_tracers')).trim().split(' ')) {
      await write('current_tracer', t);
      expect(await read('current_tracer')).toBe(`${t}\n`);
    }
    await write('current_tracer', 'nop');
  });
});
