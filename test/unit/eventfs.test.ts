import { describe, expect, it } from 'vitest';
import { fixtureText } from '../helpers/fixtures.js';
import { testEmulator } from '../helpers/emulator.js';
import { SERIES } from '../../src/kernel/series.js';

describe('eventfs layout', () => {
  it('has the kernel layout at the top', async () => {
    const { fs } = testEmulator();
    const top = fs.readdir('events');
    expect(top).toContain('enable');
    expect(top).toContain('header_page');
    expect(top).toContain('sched');
    expect(fs.readdir('events/sched').slice(0, 2)).toEqual(['enable', 'filter']);
    expect(fs.readdir('events/sched/sched_switch').sort()).toEqual(['enable', 'filter', 'format', 'hist', 'id', 'trigger']);
    const st = fs.stat('events/sched/sched_switch');
    expect(st.nlink).toBe(1);
    expect(st.mode).toBe(0o40755);
    expect(fs.stat('events').nlink).toBe(1);
    expect(fs.stat('events/sched/sched_switch/enable').mode).toBe(0o100640);
    expect(fs.stat('events/sched/sched_switch/format').mode).toBe(0o100440);
    expect(await fs.readFile('events/sched/sched_switch/id')).toMatch(/^\d+\n$/);
    expect(await fs.readFile('events/sched/sched_switch/enable')).toBe('0\n');
    expect(await fs.readFile('events/sched/enable')).toBe('0\n');
    expect(await fs.readFile('events/enable')).toBe('0\n');
    expect(await fs.readFile('events/sched/sched_switch/filter')).toBe('none\n');
    expect(await fs.readFile('events/sched/sched_switch/trigger')).toBe(
      '# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist\n',
    );
  });

  it('gives each new instance its own events/ tree', async () => {
    const { fs } = testEmulator();
    for (let i = 0; i < 10; i++) fs.mkdir(`instances/i${i}`);
    const top = await fs.readdir('events');
    for (let i = 0; i < 10; i++) expect(await fs.readdir(`instances/i${i}/events`)).toEqual(top);
  });
});

describe('btf_ids (7.3)', () => {
  it('is in every static event directory, with the ids the real 7.3 kernel showed', async () => {
    const { fs } = testEmulator({ series: '7.3' });
    expect(fs.readdir('events/sched/sched_switch').sort()).toEqual(['btf_ids', 'enable', 'filter', 'format', 'hist', 'id', 'trigger']);
    expect(fs.stat('events/sched/sched_switch/btf_ids').mode).toBe(0o100440);
    expect(await fs.readFile('events/sched/sched_switch/btf_ids')).toBe('btf_obj_id: 1\nraw_btf_id: 31902\ntp_btf_id: 121056\n');
    // the syscalls share one dispatcher: no raw id of their own
    expect(await fs.readFile('events/syscalls/sys_enter_openat/btf_ids')).toBe('btf_obj_id: 1\nraw_btf_id: 0\ntp_btf_id: 121085\n');
    expect(await fs.readFile('events/raw_syscalls/sys_enter/btf_ids')).toBe('btf_obj_id: 1\nraw_btf_id: 31926\ntp_btf_id: 121085\n');
    expect(fs.readdir('events/ftrace/print')).not.toContain('btf_ids');
    await fs.writeFile('dynamic_events', 'p:kp1 vfs_read\n');
    expect(fs.readdir('events/kprobes/kp1')).not.toContain('btf_ids');
  });

  it('is not there before 7.3', () => {
    for (const series of ['7.2', '6.12'] as const) expect(testEmulator({ series }).fs.readdir('events/sched/sched_switch')).not.toContain('btf_ids');
  });
});

describe('events/header_page and header_event', () => {
  for (const series of SERIES) {
    it(`match the real ${series} kernel's`, async () => {
      const { fs } = testEmulator({ series });
      expect(await fs.readFile('events/header_page')).toBe(fixtureText(`kernel-${series}/events/header_page`));
      expect(await fs.readFile('events/header_event')).toBe(fixtureText(`kernel-${series}/events/header_event`));
    });
  }
});

describe('README', () => {
  it('describes set_event (with :mod: on 7.2), events/ and triggers', async () => {
    const r72 = await testEmulator().fs.readFile('README');
    expect(r72).toContain('Can enable module events via: :mod:<module>');
    expect(r72).toContain('      trigger\t\t- If set, a command to perform when event is hit\n');
    const r612 = await testEmulator({ series: '6.12' }).fs.readFile('README');
    expect(r612).not.toContain(':mod:<module>\n\t\t\t');
    expect(r612).toContain('  events/\t\t- Directory containing all trace event subsystems:\n');
  });
});
