import { describe, expect, it } from 'vitest';
import { echo } from '../helpers/tracefs.js';
import { profileOf, SERIES, type Series } from '../../src/kernel/series.js';
import { testEmulator } from '../helpers/emulator.js';

function emu(series: Series = '7.2') {
  const e = testEmulator({ series });
  const w = (path: string, data: string, append = false) => echo(e.fs, path, data, append);
  const r = (path: string) => e.fs.readFile(path);
  return { ...e, w, r };
}

const F = 'events/sched/sched_switch/filter';

/** Filter file contents after a refused filter, as the 7.2 oracle showed them. */
const REFUSED: Array<[string, string]> = [
  ['foo == 1', 'foo == 1\n    ^\nparse_error: Field not found\n\n'],
  ['prev_pid = 1', 'prev_pid = 1\n          ^\nparse_error: Invalid operator\n\n'],
  ['prev_pid == abc', 'prev_pid == abc\n             ^\nparse_error: Invalid value (did you forget quotes)?\n\n'],
  ['(prev_pid == 1', "(prev_pid == 1\n^\nparse_error: Too many '('\n\n"],
  ['prev_pid == 1)', "prev_pid == 1)\n             ^\nparse_error: Too few '('\n\n"],
  ['prev_comm > 1', 'prev_comm > 1\n             ^\nparse_error: Expecting string field\n\n'],
  ['prev_pid ~ 1', 'prev_pid ~ 1\n            ^\nparse_error: Illegal operation for field type\n\n'],
  ['prev_comm == foo', 'prev_comm == foo\n              ^\nparse_error: Invalid value (did you forget quotes)?\n\n'],
  ['prev_comm == "foo', 'prev_comm == "foo\n             ^\nparse_error: Missing matching quote\n\n'],
  ['prev_pid', 'prev_pid\n        ^\nparse_error: Invalid operator\n\n'],
  ['call_site.function == nosuchfunc', ''],
];

const ACCEPTED = [
  'prev_pid == 1',
  'prev_pid == 1 &&',
  '!(prev_pid == 1)',
  'prev_pid & 1',
  'common_pid != 0 && prev_state & 2',
  'CPU == 1',
  'cpu & CPUS{0-1}',
];

describe('event filter files (7.2 oracle)', () => {
  for (const [filter, shown] of REFUSED.filter(([, s]) => s)) {
    it(`refuses ${JSON.stringify(filter)} and shows where`, async () => {
      const { w, r } = emu();
      await expect(w(F, `${filter}\n`)).rejects.toBeDefined();
      expect(await r(F)).toBe(shown);
    });
  }

  for (const filter of ACCEPTED) {
    it(`accepts ${JSON.stringify(filter)}`, async () => {
      const { w, r } = emu();
      await w(F, `${filter}\n`);
      expect(await r(F)).toBe(`${filter}\n`);
    });
  }

  it('keeps leading spaces, drops trailing ones, and lists it in show_event_filters', async () => {
    const { w, r } = emu();
    await w(F, '  prev_pid==1&&(next_comm ~ "foo*"||next_pid>2)  \n');
    expect(await r(F)).toBe('  prev_pid==1&&(next_comm ~ "foo*"||next_pid>2)\n');
    expect(await r('show_event_filters')).toBe('sched:sched_switch                prev_pid==1&&(next_comm ~ "foo*"||next_pid>2)\n');
    await w(F, '0\n');
    expect(await r(F)).toBe('none\n');
  });

  it('logs filter errors in error_log with the caret position', async () => {
    const { w, tracing } = emu();
    const logged: Array<[string, string, number, string]> = [];
    (tracing as unknown as { errorLog: unknown }).errorLog = { log: (_tr: unknown, loc: string, cmd: string, pos: number, msg: string) => logged.push([loc, cmd, pos, msg]) };
    await expect(w(F, 'foo == 1\n')).rejects.toBeDefined();
    expect(logged).toEqual([['event filter parse error', 'foo == 1', 4, 'Field not found']]);
  });

  it('sets a system filter on the events that have the fields, and an error on the others', async () => {
    const { w, r } = emu();
    await w('events/sched/filter', 'prev_pid == 1\n');
    expect(await r('events/sched/filter')).toBe(
      '### global filter ###\n# Use this to set filters for multiple events.\n# Only events with the given fields will be affected.\n# If no events are modified, an error message will be displayed here\n',
    );
    expect(await r(F)).toBe('prev_pid == 1\n');
    expect(await r('events/sched/sched_wakeup/filter')).toBe("prev_pid == 1\n^\nparse_error: Couldn't find or set field in one of a subsystem's events\n\n");
    const shown = await r('show_event_filters');
    expect(shown).toContain('sched:sched_switch              prev_pid == 1\n');
    expect(shown).toContain("sched:sched_kthread_work_execute_end prev_pid == 1\n^\nparse_error: Couldn't find or set field in one of a subsystem's events\n\n");
    await w('events/sched/filter', '0\n');
    expect(await r(F)).toBe('none\n');
  });

  it('refuses a trailing operator on 6.12 and 7.3, not on 7.2', async () => {
    for (const series of SERIES) {
      const { w, r } = emu(series);
      const write = w(F, 'prev_pid == 1 &&\n');
      if (!profileOf(series).filterRejectsTrailingOp) {
        await write;
        continue;
      }
      await expect(write, series).rejects.toMatchObject({ code: 'EINVAL' });
      expect(await r(F)).toBe('prev_pid == 1 &&\n                ^\nparse_error: Meaningless filter expression\n\n');
    }
  });

  it('7.3: an incomplete expression after any base is refused, the caret at its end (event-filter-incomplete.tc, 7.3 oracle)', async () => {
    const { w, r, fs } = emu('7.3');
    const meaningless = (shown: string, caret: number) => `${shown}\n${' '.repeat(caret)}^\nparse_error: Meaningless filter expression\n\n`;
    const cases: Array<[filter: string, file: string, errno: string]> = [
      ['common_pid == 1 || common_pid == 2 && !', meaningless('common_pid == 1 || common_pid == 2 && !', 39), 'EINVAL'],
      ['!(common_pid == 1 || common_pid == 2) || !! ', meaningless('!(common_pid == 1 || common_pid == 2) || !!', 43), 'EINVAL'],
      ['common_pid == 1 &&   ', meaningless('common_pid == 1 &&', 18), 'EINVAL'],
      ['common_pid == 1 && (', "common_pid == 1 && (\n                   ^\nparse_error: Too many '('\n\n", 'ENOENT'],
    ];
    for (const [filter, file, errno] of cases) {
      await fs.writeFile('error_log', '\n');
      await expect(w(F, filter), filter).rejects.toMatchObject({ code: errno });
      expect(await r(F), filter).toBe(file);
      expect((await fs.readFile('error_log')).split('\n')[0], filter).toMatch(/^\[\s*\d+\.\d+\] event filter parse error: error: /);
    }
  });
});

describe('errno of refused event-file writes (7.2 and 6.12 oracle)', () => {
  const CASES: Array<[string, string, string]> = [
    [F, 'foo == 1', 'EINVAL'],
    [F, '(prev_pid == 1', 'ENOENT'],
    [F, 'prev_pid == 1)', 'EPERM'],
    [F, 'prev_comm == "foo', 'ESRCH'],
    [F, 'prev_pid = 1', 'EINVAL'],
    [F, '== 1', 'EPERM'],
    [F, '()', 'EINVAL'],
    [F, 'prev_pid == 1 prev_pid == 2', 'EPERM'],
    [F, 'prev_pid == 99999999999999999999', 'EINVAL'],
    [F, 'prev_pid == 1 ||| prev_pid == 2', 'EPERM'],
    ['events/sched/sched_switch/trigger', 'traceoff:badparam', 'EINVAL'],
    ['events/sched/sched_switch/trigger', 'traceoff+0', 'EINVAL'],
    ['events/sched/sched_switch/trigger', 'nosuch', 'EINVAL'],
    ['events/sched/sched_switch/trigger', 'traceoff if a', 'EINVAL'],
    ['events/sched/sched_switch/trigger', 'traceoff if', 'EINVAL'],
    ['events/sched/sched_switch/trigger', 'enable_event', 'EINVAL'],
    ['events/sched/sched_switch/trigger', 'enable_event:sched', 'EINVAL'],
    ['events/sched/sched_switch/trigger', 'enable_event:nogroup:noevent', 'EINVAL'],
    ['events/sched/sched_switch/trigger', 'enable_event:ftrace:print', 'EINVAL'],
    ['events/sched/sched_switch/trigger', 'traceoff:5x', 'EINVAL'],
    ['events/sched/sched_switch/trigger', 'traceoff:-1', 'EINVAL'],
    ['set_event', 'nosuch:event', 'EINVAL'],
    ['set_event', '*', 'EINVAL'],
    ['events/sched/sched_switch/enable', '2', 'EINVAL'],
    ['events/sched/sched_switch/enable', 'abc', 'EINVAL'],
    ['events/enable', '2', 'EINVAL'],
    ['set_event_pid', 'abc', 'EINVAL'],
    ['set_event_pid', '99999999999', 'EPERM'],
    ['set_event_pid', '-1', 'EINVAL'],
    ['set_event_pid', '1073741824', 'EPERM'],
    ['events/sched/sched_switch/id', '1', 'EINVAL'],
    ['events/sched/sched_switch/format', 'x', 'EINVAL'],
    ['events/header_page', 'x', 'EINVAL'],
  ];
  for (const [file, data, code] of CASES) {
    it(`${file} <- ${JSON.stringify(data)}: ${code}`, async () => {
      const { w } = emu();
      await expect(w(file, `${data}\n`)).rejects.toMatchObject({ code });
    });
  }

  it('shows "Error: (0)" for a predicate with no field name', async () => {
    const { w, r } = emu();
    await expect(w(F, 'prev_pid == 1 ||| prev_pid == 2\n')).rejects.toBeDefined();
    expect(await r(F)).toBe('prev_pid == 1 ||| prev_pid == 2\nError: (0)\n\n');
  });

  it('accepts 1073741823 in set_event_pid and caps syscall_user_buf_size', async () => {
    const { w, r } = emu();
    await w('set_event_pid', '1073741823\n');
    expect(await r('set_event_pid')).toBe('1073741823\n');
    await expect(w('syscall_user_buf_size', 'abc\n')).rejects.toMatchObject({ code: 'EINVAL' });
    expect(() => emu('6.12').fs.stat('syscall_user_buf_size')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});
