import { describe, expect, it } from 'vitest';
import { echo } from '../helpers/tracefs.js';
import type { Series } from '../../src/kernel/series.js';
import { testEmulator } from '../helpers/emulator.js';

function emu(series: Series = '7.2') {
  const e = testEmulator({ series });
  const w = (path: string, data: string, append = false) => echo(e.fs, path, data, append);
  const r = (path: string) => e.fs.readFile(path);
  return { ...e, w, r };
}

describe('set_event and enable files (as the 7.2 oracle run shows)', () => {
  it('selects by system:event, event name, system, and removes with !', async () => {
    const { w, r } = emu();
    await w('set_event', 'sched:sched_switch\n');
    expect(await r('set_event')).toBe('sched:sched_switch\n');
    await w('set_event', 'sched_wakeup\n', true);
    expect(await r('set_event')).toBe('sched:sched_switch\nsched:sched_wakeup\n');
    await w('set_event', 'irq\n', true);
    expect(await r('set_event')).toBe(
      'irq:tasklet_exit\nirq:tasklet_entry\nirq:softirq_raise\nirq:softirq_exit\nirq:softirq_entry\nirq:irq_handler_exit\nirq:irq_handler_entry\nsched:sched_switch\nsched:sched_wakeup\n',
    );
    expect(await r('events/irq/enable')).toBe('1\n');
    expect(await r('events/sched/enable')).toBe('X\n');
    expect(await r('events/enable')).toBe('X\n');
    await w('set_event', '!sched:*\n', true);
    expect(await r('set_event')).not.toContain('sched:');
    await expect(w('set_event', '*\n')).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(w('set_event', 'nosuch:event\n')).rejects.toMatchObject({ code: 'EINVAL' });
    await w('set_event', 'sched:sched_switch timer:timer_start\n');
    expect(await r('set_event')).toBe('sched:sched_switch\ntimer:timer_start\n');
    await w('set_event', '\n');
    expect(await r('set_event')).toBe('');
    expect(await r('events/enable')).toBe('0\n');
  });

  it('caches :mod: requests (7.2) and lists them after the events', async () => {
    const { w, r } = emu();
    await w('set_event', ':mod:foo\n');
    expect(await r('set_event')).toBe('*:*:mod:foo\n');
    await w('set_event', 'sched:*:mod:bar\n', true);
    await w('set_event', 'sched_switch:mod:baz\n', true);
    expect(await r('set_event')).toBe('sched_switch:mod:baz\nsched:*:mod:bar\n*:*:mod:foo\n');
    await w('set_event', '!:mod:foo\n', true);
    expect(await r('set_event')).toBe('sched_switch:mod:baz\nsched:*:mod:bar\n');
    await w('set_event', '!sched:*:mod:bar\n', true);
    await w('set_event', '!sched_switch:mod:baz\n', true);
    expect(await r('set_event')).toBe('');
  });

  it('refuses :mod: on 6.12', async () => {
    const { w } = emu('6.12');
    await expect(w('set_event', ':mod:foo\n')).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it('takes only 0 and 1 in enable files', async () => {
    const { w, r } = emu();
    await expect(w('events/sched/sched_switch/enable', '2\n')).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(w('events/sched/sched_switch/enable', '1x\n')).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(w('events/sched/enable', '2\n')).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(w('events/sched/sched_switch/enable', ' 1\n')).rejects.toMatchObject({ code: 'EINVAL' });
    await w('events/sched/sched_switch/enable', '1');
    expect(await r('events/sched/sched_switch/enable')).toBe('1\n');
    await w('events/sched/sched_switch/enable', '0\n');
    await w('set_event', '*:*\n');
    expect(await r('events/enable')).toBe('1\n');
    const lines = (await r('set_event')).split('\n').filter(Boolean);
    expect(lines.slice(0, 3)).toEqual(['initcall:initcall_finish', 'initcall:initcall_start', 'initcall:initcall_level']);
    expect(lines.length).toBe(1571);
    await w('events/enable', '0\n');
    expect(await r('set_event')).toBe('');
  });

  it('gives ftrace events no enable file, but print a trigger', () => {
    const { fs } = emu();
    expect(() => fs.stat('events/ftrace/enable')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('keeps pid lists sorted, appends with >>, clears with >', async () => {
    const { w, r } = emu();
    await w('set_event_pid', '1 2 3\n');
    expect(await r('set_event_pid')).toBe('1\n2\n3\n');
    await w('set_event_pid', '5\n', true);
    expect(await r('set_event_pid')).toBe('1\n2\n3\n5\n');
    await expect(w('set_event_pid', '!2\n', true)).rejects.toMatchObject({ code: 'EINVAL' });
    expect(await r('set_event_pid')).toBe('1\n2\n3\n5\n');
    await expect(w('set_event_pid', 'abc\n', true)).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(w('set_event_pid', '99999999999\n', true)).rejects.toMatchObject({ code: 'EPERM' });
    await w('set_event_pid', '\n');
    expect(await r('set_event_pid')).toBe('');
    await w('set_event_notrace_pid', '7\n');
    expect(await r('set_event_notrace_pid')).toBe('7\n');
  });

  it('keeps instances separate', async () => {
    const { w, r, fs } = emu();
    await w('set_event', 'sched:sched_switch\n');
    fs.mkdir('instances/foo');
    await w('instances/foo/set_event', 'sched:sched_wakeup\n');
    expect(await r('instances/foo/set_event')).toBe('sched:sched_wakeup\n');
    expect(await r('set_event')).toBe('sched:sched_switch\n');
    expect(await r('instances/foo/events/sched/sched_switch/enable')).toBe('0\n');
    fs.rmdir('instances/foo');
  });
});
