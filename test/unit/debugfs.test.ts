import { describe, expect, it } from 'vitest';
import { buildDebugfs, type KprobesDebugView } from '../../src/tracefs/debugfs.js';
import { testEmulator } from '../helpers/emulator.js';

const nobody = { pid: process.pid, uid: 65534, gid: 65534 };
const root = { pid: process.pid, uid: 0, gid: 0 };

describe('debugfs', () => {
  it('has the kernel modes: root drwx------, kprobes files, the tracing automount point', () => {
    const { debugfs } = testEmulator({ cpus: 1 });
    expect(debugfs.stat('').mode).toBe(0o040700);
    expect(debugfs.readdir('').sort()).toEqual(['kprobes', 'tracing']);
    expect(debugfs.stat('kprobes').mode).toBe(0o040755);
    expect(debugfs.readdir('kprobes')).toEqual(['blacklist', 'enabled', 'list']);
    expect(debugfs.stat('kprobes/blacklist').mode).toBe(0o100400);
    expect(debugfs.stat('kprobes/enabled').mode).toBe(0o100600);
    expect(debugfs.stat('kprobes/list').mode).toBe(0o100400);
    expect(debugfs.stat('tracing').mode).toBe(0o040555);
    expect(() => debugfs.stat('kprobes', nobody)).toThrow(expect.objectContaining({ code: 'EACCES' }));
  });

  it('shows no kprobe while nothing is registered, armed, and the kernel blacklist', async () => {
    const { debugfs } = testEmulator({ cpus: 1 });
    expect(await debugfs.readFile('kprobes/list', root)).toBe('');
    expect(await debugfs.readFile('kprobes/enabled', root)).toBe('1\n');
    const bl = await debugfs.readFile('kprobes/blacklist', root);
    expect(bl).toMatch(/^0x[0-9a-f]{16}-0x[0-9a-f]{16}\tasm_exc_divide_error$/m);
  });

  it('disarms and re-arms through kprobes/enabled (kstrtobool), EINVAL otherwise', async () => {
    const { debugfs } = testEmulator({ cpus: 1 });
    await debugfs.writeFile('kprobes/enabled', '0\n', {}, root);
    expect(await debugfs.readFile('kprobes/enabled', root)).toBe('0\n');
    await debugfs.writeFile('kprobes/enabled', 'on', {}, root);
    expect(await debugfs.readFile('kprobes/enabled', root)).toBe('1\n');
    await debugfs.writeFile('kprobes/enabled', 'N', {}, root);
    expect(await debugfs.readFile('kprobes/enabled', root)).toBe('0\n');
    await expect(debugfs.writeFile('kprobes/enabled', 'maybe', {}, root)).rejects.toMatchObject({ code: 'EINVAL' });
    expect(await debugfs.readFile('kprobes/enabled', root)).toBe('0\n');
  });

  it('shows what the kprobes view gives', async () => {
    const { kernel } = testEmulator({ cpus: 1 });
    const view: KprobesDebugView = {
      list: () => 'ffffffff8133c1e4  k  vfs_read+0x4    [FTRACE]\n',
      blacklist: () => '0xffffffff81001030-0xffffffff81001050\tasm_exc_divide_error\n',
      armed: () => true,
      setArmed: () => {},
    };
    const dfs = buildDebugfs(kernel, { kprobes: view });
    expect(await dfs.readFile('kprobes/list', root)).toContain('vfs_read+0x4');
    expect(await dfs.readFile('kprobes/blacklist', root)).toContain('asm_exc_divide_error');
  });
});
