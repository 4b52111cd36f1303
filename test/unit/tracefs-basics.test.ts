import { describe, expect, it } from 'vitest';
import { KernelError } from '../../src/index.js';
import { testEmulator } from '../helpers/emulator.js';

const nobody = { pid: process.pid, uid: 65534, gid: 65534 };

describe('tracefs library API', () => {
  it('reads and writes tracing_on like the kernel', async () => {
    const { fs, tracing } = testEmulator();
    expect(await fs.readFile('tracing_on')).toBe('1\n');
    await fs.writeFile('tracing_on', '0\n');
    expect(tracing.top.tracingOn).toBe(false);
    await expect(fs.writeFile('tracing_on', 'x\n')).rejects.toMatchObject({ code: 'EINVAL' });
    expect(await fs.readFile('tracing_on')).toBe('0\n');
  });

  it('keeps the root private to its owner (drwx------)', () => {
    const { fs } = testEmulator();
    expect(fs.stat('').mode).toBe(0o040700);
    expect(() => fs.stat('tracing_on', nobody)).toThrow(KernelError);
  });

  it('creates and removes instances with mkdir/rmdir', async () => {
    const { fs, tracing } = testEmulator();
    fs.mkdir('instances/foo');
    expect(fs.readdir('instances')).toEqual(['foo']);
    expect(await fs.readFile('instances/foo/tracing_on')).toBe('1\n');
    expect(() => fs.mkdir('instances/foo')).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    tracing.instances.get('foo')!.refs++;
    expect(() => fs.rmdir('instances/foo')).toThrow(expect.objectContaining({ code: 'EBUSY' }));
    tracing.instances.get('foo')!.refs--;
    fs.rmdir('instances/foo');
    expect(fs.readdir('instances')).toEqual([]);
  });
});
