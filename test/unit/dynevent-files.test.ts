/**
 * The dynamic-event control files through the library API: listings per
 * file, truncate-on-open, busy events, error_log entries, event directories
 * in every instance, the buffers a removal resets, the profiles.
 */
import { describe, expect, it } from 'vitest';
import { O_RDONLY, O_TRUNC, O_WRONLY } from '../../src/tracefs/node.js';
import { echo, errCode, setup, traceLines } from '../helpers/tracefs.js';

describe('dynamic-event control files', () => {
  it('exist at the top level only, with the kernel modes', () => {
    const { fs } = setup();
    for (const [name, mode] of [['dynamic_events', 0o640], ['kprobe_events', 0o640], ['uprobe_events', 0o640], ['synthetic_events', 0o640], ['kprobe_profile', 0o440], ['uprobe_profile', 0o440]] as const) {
      expect(fs.stat(name).mode & 0o777, name).toBe(mode);
    }
    fs.mkdir('instances/a');
    expect(fs.readdir('instances/a')).not.toContain('kprobe_events');
  });

  it('lists each type in its own file and everything in dynamic_events', async () => {
    const { fs, read } = setup();
    await echo(fs, 'dynamic_events', 'p:kp1 vfs_read\nf:fp1 vfs_read\ns:synthetic/sy u64 a\n');
    await echo(fs, 'synthetic_events', 'sy2 int b\n', true);
    expect(await read('dynamic_events')).toBe('p:kprobes/kp1 vfs_read\nf:fprobes/fp1 vfs_read\ns:synthetic/sy\tu64 a\ns:synthetic/sy2\tint b\n');
    expect(await read('kprobe_events')).toBe('p:kprobes/kp1 vfs_read\n');
    expect(await read('synthetic_events')).toBe('sy\tu64 a\nsy2\tint b\n');
    expect(await read('uprobe_events')).toBe('');
    expect(await read('kprobe_profile')).toBe(`  ${'kp1'.padEnd(44)} ${'0'.padStart(15)} ${'0'.padStart(15)}\n`);
  });

  it('gives each event a directory in every events/ tree, with its format and id', async () => {
    const { fs, read } = setup();
    fs.mkdir('instances/a');
    await echo(fs, 'kprobe_events', 'p:kp1 vfs_read arg1=%di:u32\n');
    expect(fs.readdir('events/kprobes/kp1').sort()).toEqual(['enable', 'filter', 'format', 'hist', 'id', 'trigger']);
    expect(fs.readdir('instances/a/events/kprobes/kp1').sort()).toEqual(['enable', 'filter', 'format', 'hist', 'id', 'trigger']);
    const id = Number(await read('events/kprobes/kp1/id'));
    expect(await read('events/kprobes/kp1/format')).toBe(
      `name: kp1\nID: ${id}\nformat:\n` +
        '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n' +
        '\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n' +
        '\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n' +
        '\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n' +
        '\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n' +
        '\tfield:u32 arg1;\toffset:16;\tsize:4;\tsigned:0;\n\n' +
        'print fmt: "(%lx) arg1=%u", REC->__probe_ip, REC->arg1\n',
    );
    expect((await read('available_events')).split('\n')[0]).toBe('kprobes:kp1');
    await echo(fs, 'kprobe_events', '-:kp1\n', true);
    expect(await errCode(() => fs.stat('events/kprobes'))).toBe('ENOENT');
    expect(await errCode(() => fs.stat('instances/a/events/kprobes'))).toBe('ENOENT');
  });

  it('refuses to remove an enabled event (EBUSY), in any instance, and truncation removes nothing then', async () => {
    const { fs, read } = setup();
    fs.mkdir('instances/a');
    await echo(fs, 'kprobe_events', 'p:kp1 vfs_read\np:kp2 vfs_write\n');
    await echo(fs, 'instances/a/events/kprobes/kp1/enable', '1');
    expect(await errCode(echo(fs, 'kprobe_events', '-:kp1\n', true))).toBe('EBUSY');
    expect(await errCode(echo(fs, 'kprobe_events', '\n'))).toBe('EBUSY');
    expect(await errCode(echo(fs, 'dynamic_events', '\n'))).toBe('EBUSY');
    expect(await read('kprobe_events')).toBe('p:kprobes/kp1 vfs_read\np:kprobes/kp2 vfs_write\n');
    // another type's file does not care
    await echo(fs, 'uprobe_events', '\n');
    await echo(fs, 'instances/a/events/kprobes/kp1/enable', '0');
    await echo(fs, 'kprobe_events', '\n');
    expect(await read('kprobe_events')).toBe('');
  });

  it('keeps an event whose file is open (EBUSY)', async () => {
    const { fs } = setup();
    await echo(fs, 'kprobe_events', 'p:kp1 vfs_read\n');
    const h = await fs.open('events/kprobes/kp1/format', O_RDONLY);
    expect(await errCode(echo(fs, 'kprobe_events', '-:kp1\n', true))).toBe('EBUSY');
    h.release();
    await echo(fs, 'kprobe_events', '-:kp1\n', true);
  });

  it('does not truncate on a read-only or appending open', async () => {
    const { fs, read } = setup();
    await echo(fs, 'dynamic_events', 'p:kp1 vfs_read\n');
    (await fs.open('dynamic_events', O_RDONLY | O_TRUNC)).release();
    (await fs.open('dynamic_events', O_WRONLY)).release();
    expect(await read('dynamic_events')).toBe('p:kprobes/kp1 vfs_read\n');
  });

  it('logs parse errors in the top-level error_log, and lines before the bad one stay', async () => {
    const { fs, read } = setup();
    fs.mkdir('instances/a');
    expect(await errCode(echo(fs, 'dynamic_events', 'p:ok vfs_read\nf:bad vfs_read $none\np:never vfs_read\n'))).toBe('EINVAL');
    expect(await read('dynamic_events')).toBe('p:kprobes/ok vfs_read\n');
    const log = (await read('error_log')).split('\n');
    expect(log[0]).toMatch(/^\[\s*\d+\.\d{6}\] trace_fprobe: error: Invalid \$-variable specified$/);
    expect(log.slice(1)).toEqual(['  Command: f:bad vfs_read $none', ' '.repeat(26) + '^', '']);
    expect(await read('instances/a/error_log')).toBe('');
  });

  it('7.2 says which command type is unknown; 6.12 only fails', async () => {
    for (const [series, entry] of [['7.2', 'dynevent: error: No matching dynamic event type'], ['6.12', undefined]] as const) {
      const { fs, read } = setup({ series });
      expect(await errCode(echo(fs, 'dynamic_events', 'x vfs_read\n'))).toBe('EINVAL');
      const log = await read('error_log');
      if (entry) expect(log).toContain(entry);
      else expect(log).toBe('');
    }
  });

  it('duplicates: 7.2 fprobes EINVAL, 6.12 EEXIST', async () => {
    for (const [series, errno] of [['7.2', 'EINVAL'], ['6.12', 'EEXIST']] as const) {
      const { fs } = setup({ series });
      await echo(fs, 'dynamic_events', 'f:myprobe vfs_read\n');
      expect(await errCode(echo(fs, 'dynamic_events', 'f:myprobe vfs_read\n', true)), series).toBe(errno);
    }
  });

  it('7.2 registers an fprobe when its event is enabled, 6.12 at definition (and keeps it attached while disabled)', async () => {
    for (const series of ['7.2', '6.12'] as const) {
      const { fs, read } = setup({ series });
      await echo(fs, 'dynamic_events', 'f:fp vfs_read\n');
      const lines = async () => (await read('enabled_functions')).split('\n').filter(Boolean).length;
      expect(await lines(), series).toBe(series === '7.2' ? 0 : 1);
      await echo(fs, 'events/fprobes/fp/enable', '1');
      expect(await lines(), series).toBe(1);
      await echo(fs, 'events/fprobes/fp/enable', '0');
      expect(await lines(), series).toBe(series === '7.2' ? 0 : 1);
      await echo(fs, 'dynamic_events', '\n');
      expect(await lines(), series).toBe(0);
    }
  });

  it('7.2 resolves an fprobe\'s @symbol at enable: an unknown one fails the enable (ENOENT), nothing changes', async () => {
    const { fs, read } = setup();
    await echo(fs, 'dynamic_events', 'f:fp vfs_read a=@no_such_symbol_xyz\n');
    expect(await errCode(echo(fs, 'events/fprobes/fp/enable', '1'))).toBe('ENOENT');
    expect(await read('events/fprobes/fp/enable')).toBe('0\n');
    expect(await read('enabled_functions')).toBe('');
    await echo(fs, 'dynamic_events', '\n');
  });

  it('kprobes register at definition, disabled until enabled (debugfs kprobes/list)', async () => {
    const { fs, debugfs, read } = setup();
    await echo(fs, 'kprobe_events', 'p:kp vfs_read\n');
    expect(await debugfs.readFile('kprobes/list')).toMatch(/ k {2}vfs_read\+0x4 +\[DISABLED\]\[FTRACE\]\n$/);
    await echo(fs, 'events/kprobes/kp/enable', '1');
    expect(await debugfs.readFile('kprobes/list')).toMatch(/ k {2}vfs_read\+0x4 +\[FTRACE\]\n$/);
    await echo(fs, 'events/kprobes/kp/enable', '0');
    await echo(fs, 'kprobe_events', '\n');
    expect(await debugfs.readFile('kprobes/list')).toBe('');
    void read;
  });

  it('a removal resets the buffers of the arrays where the event was on, and only those', async () => {
    const { fs, read } = setup();
    fs.mkdir('instances/x');
    await echo(fs, 'kprobe_events', 'p:a vfs_read\n');
    await echo(fs, 'events/kprobes/a/enable', '1');
    await echo(fs, 'events/kprobes/a/enable', '0');
    await echo(fs, 'trace_marker', 'hello\n');
    await echo(fs, 'instances/x/trace_marker', 'hi\n');
    await echo(fs, 'kprobe_events', '-:a\n', true);
    expect(traceLines(await read('trace'))).toEqual([]);
    expect(traceLines(await read('instances/x/trace'))).toHaveLength(1);
    await echo(fs, 'kprobe_events', 'p:b vfs_read\n');
    await echo(fs, 'trace_marker', 'hello\n');
    await echo(fs, 'kprobe_events', '-:b\n', true);
    expect(traceLines(await read('trace'))).toHaveLength(1);
  });

  it('removing a synthetic event with `!name` only marks its arrays: the next release resets them', async () => {
    const { fs, read } = setup();
    await echo(fs, 'synthetic_events', 'sy u64 a\n');
    await echo(fs, 'events/synthetic/sy/enable', '1');
    await echo(fs, 'events/synthetic/sy/enable', '0');
    await echo(fs, 'trace_marker', 'hello\n');
    await echo(fs, 'synthetic_events', '!sy\n', true);
    expect(traceLines(await read('trace'))).toHaveLength(1);
    expect(await errCode(echo(fs, 'dynamic_events', '-:nothing\n', true))).toBe('ENOENT');
    expect(traceLines(await read('trace'))).toEqual([]);
  });

  it('runs lines of one write and treats each write as whole lines', async () => {
    const { fs, read } = setup();
    const h = await fs.open('dynamic_events', O_WRONLY | O_TRUNC);
    await h.write(Buffer.from('p:a vfs_read # a comment\n# only a comment\n'), 0);
    await h.write(Buffer.from('p:b vfs_write'), 0);
    h.release();
    expect(await read('dynamic_events')).toBe('p:kprobes/a vfs_read\np:kprobes/b vfs_write\n');
  });
});
