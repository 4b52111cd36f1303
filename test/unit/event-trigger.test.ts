import { describe, expect, it } from 'vitest';
import { ctxOf, emulator, fireSwitch } from '../helpers/events.js';

const T = 'events/sched/sched_switch/trigger';

describe('event triggers (7.2 oracle)', () => {
  it('lists triggers newest first, counts down as they fire, and soft-enables their targets', async () => {
    const { w, r, tp } = emulator();
    await w(T, 'traceoff:5 if prev_pid == 1\n');
    await w(T, 'stacktrace\n', true);
    await w(T, 'snapshot:1\n', true);
    await w(T, 'enable_event:sched:sched_wakeup:2\n', true);
    await w(T, 'disable_event:timer:timer_start\n', true);
    // One switch happens: the unconditional triggers fire once.
    fireSwitch(tp, [10, 'sh'], [0, 'swapper/0']);
    expect(await r(T)).toBe(
      'disable_event:timer:timer_start:unlimited\n' +
        'enable_event:sched:sched_wakeup:count=1\n' +
        'snapshot:count=0\n' +
        'stacktrace:unlimited\n' +
        'traceoff:count=5 if prev_pid == 1\n',
    );
    expect(await r('show_event_triggers')).toBe(
      'sched:sched_switch              disable_event:timer:timer_start:unlimited\n' +
        'sched:sched_switch              enable_event:sched:sched_wakeup:count=1\n' +
        'sched:sched_switch              snapshot:count=0\n' +
        'sched:sched_switch              stacktrace:unlimited\n' +
        'sched:sched_switch              traceoff:count=5 if prev_pid == 1\n',
    );
    expect(await r('events/sched/sched_wakeup/enable')).toBe('1*\n');
    expect(await r('events/timer/timer_start/enable')).toBe('0*\n');
    expect(await r('set_event')).toBe('sched:sched_switch\nsched:sched_wakeup\ntimer:timer_start\n');
    expect(await r('events/sched/enable')).toBe('X\n');

    await expect(w(T, 'traceon\n', true)).rejects.toMatchObject({ code: 'EEXIST' });
    for (const t of ['!traceoff', '!stacktrace', '!snapshot', '!enable_event:sched:sched_wakeup', '!disable_event:timer:timer_start']) await w(T, `${t}\n`, true);
    expect(await r(T)).toBe('# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist\n');
    expect(await r('events/sched/sched_wakeup/enable')).toBe('1\n');
    expect(await r('events/timer/timer_start/enable')).toBe('0\n');
    expect(await r('set_event')).toBe('sched:sched_wakeup\n');
    await w(T, '!traceoff\n', true);
  });

  it('prints counts and filters as written', async () => {
    const { w, r } = emulator();
    await w(T, 'traceoff:0\n');
    expect(await r(T)).toBe('traceoff:count=0\n');
    await w(T, '!traceoff\n');
    await w(T, 'traceoff if prev_pid == 1 \n');
    expect(await r(T)).toBe('traceoff:unlimited if prev_pid == 1\n');
    await w(T, '!traceoff\n');
    await w('events/ftrace/print/trigger', 'stacktrace:3\n');
    expect(await r('events/ftrace/print/trigger')).toBe('stacktrace:count=3\n');
  });

  it('soft mode: an enable_event target stays attached when switched off', async () => {
    const { w, r, tp } = emulator();
    const wakeup = () => tp.fire('sched_wakeup', ctxOf(5, 'sh'), { comm: 'sh', pid: 7, prio: 120, target_cpu: 0 });
    for (const fired of [false, true]) {
      await w('events/sched/sched_switch/enable', '1\n');
      await w('events/sched/sched_wakeup/trigger', 'enable_event:sched:sched_switch\n');
      expect(await r('events/sched/sched_switch/enable')).toBe('1*\n');
      await w('events/sched/sched_switch/enable', '0\n');
      expect(await r('events/sched/sched_switch/enable')).toBe('0*\n');
      // On the oracle a wakeup happened here: the trigger turned the event back on.
      if (fired) wakeup();
      await w('events/sched/sched_wakeup/trigger', '!enable_event:sched:sched_switch\n');
      expect(await r('events/sched/sched_switch/enable')).toBe(fired ? '1\n' : '0\n');
    }
  });

  it('replays trigger-traceonoff.tc: fork events switch tracing off and on', async () => {
    const { w, r, tp, tracing } = emulator();
    const fork = () => tp.fire('sched_process_fork', ctxOf(100, 'sh'), { parent_comm: 'sh', parent_pid: 100, child_comm: 'sh', child_pid: 101 });
    await w('tracing_on', '1\n');
    await w('events/sched/sched_process_fork/trigger', 'traceoff\n');
    fork();
    expect(await r('tracing_on')).toBe('0\n');
    await w('events/sched/sched_process_fork/trigger', '!traceoff\n');
    await w('tracing_on', '0\n');
    await w('events/sched/sched_process_fork/trigger', 'traceon\n');
    fork();
    expect(tracing.top.tracingOn).toBe(true);
    await w('events/sched/sched_process_fork/trigger', '!traceon\n');
    await expect(w('events/sched/sched_process_fork/trigger', 'traceoff:badparam\n')).rejects.toBeDefined();
    await expect(w('events/sched/sched_process_fork/trigger', 'traceoff+0\n')).rejects.toBeDefined();
    await w('events/sched/sched_process_fork/trigger', 'traceon\n');
    await expect(w('events/sched/sched_process_fork/trigger', 'traceon\n')).rejects.toBeDefined();
    await expect(w('events/sched/sched_process_fork/trigger', 'traceoff\n')).rejects.toBeDefined();
  });

  it('replays trigger-filter.tc: a filtered traceoff that does not match leaves tracing on', async () => {
    const { w, r, tp } = emulator();
    const F = 'events/sched/sched_process_fork/trigger';
    await w('tracing_on', '1\n');
    await w(F, 'traceoff if child_pid == 0\n');
    tp.fire('sched_process_fork', ctxOf(100, 'sh'), { parent_comm: 'sh', parent_pid: 100, child_comm: 'sh', child_pid: 101 });
    expect(await r('tracing_on')).toBe('1\n');
    await w(F, '!traceoff\n');
    for (const bad of ['traceoff if a', 'traceoff if common_pid=0', 'traceoff if common_pid==b']) await expect(w(F, `${bad}\n`)).rejects.toBeDefined();
    for (const good of ['traceoff if common_pid == 0', 'traceoff if common_pid <= 0', 'traceoff if common_pid >= 0', 'traceoff if parent_pid >= 0 && child_pid >= 0', 'traceoff if parent_pid >= 0 || child_pid >= 0']) {
      await w(F, `${good}\n`);
      await w(F, '!traceoff\n');
    }
    await expect(w(F, 'traceoff if common_pid == child_pid\n')).rejects.toBeDefined();
    // A matching filter fires (after the event is recorded: traceoff is a post trigger).
    await w('events/sched/sched_process_fork/enable', '1\n');
    await w(F, 'traceoff if child_pid == 101\n');
    tp.fire('sched_process_fork', ctxOf(100, 'sh'), { parent_comm: 'sh', parent_pid: 100, child_comm: 'sh', child_pid: 101 });
    expect(await r('tracing_on')).toBe('0\n');
  });

  it('replays trigger-eventonoff.tc: enable_event / disable_event switch the soft state', async () => {
    const { w, r, tp } = emulator();
    const F = 'events/sched/sched_process_fork/trigger';
    const fork = () => tp.fire('sched_process_fork', ctxOf(100, 'sh'), { parent_comm: 'sh', parent_pid: 100, child_comm: 'sh', child_pid: 101 });
    await w('events/sched/sched_switch/enable', '0\n');
    await w(F, 'enable_event:sched:sched_switch\n');
    fork();
    expect(await r('events/sched/sched_switch/enable')).toBe('1*\n');
    await w(F, '!enable_event:sched:sched_switch\n');
    await w('events/sched/sched_switch/enable', '1\n');
    await w(F, 'disable_event:sched:sched_switch\n');
    fork();
    expect(await r('events/sched/sched_switch/enable')).toBe('0*\n');
    await w(F, '!disable_event:sched:sched_switch\n');
    await expect(w(F, 'enable_event:nogroup:noevent\n')).rejects.toBeDefined();
    await expect(w(F, 'disable_event+1\n')).rejects.toBeDefined();
    await w(F, 'enable_event:sched:sched_switch\n');
    await expect(w(F, 'enable_event:sched:sched_switch\n')).rejects.toBeDefined();
    await expect(w(F, 'disable_event:sched:sched_switch\n')).rejects.toBeDefined();
  });

  it('a snapshot trigger on ftrace/print swaps the buffers between a marker\'s reserve and commit: the marks alternate', async () => {
    const { w, r } = emulator();
    await w('events/ftrace/print/trigger', 'snapshot\n');
    expect(await r('snapshot')).toContain('Snapshot is allocated');
    for (let i = 1; i <= 10; i++) await w('trace_marker', `hello >${i}<\n`);
    const marks = (text: string) => text.split('\n').filter((l) => !l.startsWith('#') && l).map((l) => Number(/>(\d+)</.exec(l)?.[1]));
    expect(marks(await r('trace'))).toEqual([1, 3, 5, 7, 9]);
    expect(marks(await r('snapshot'))).toEqual([2, 4, 6, 8, 10]);
  });
});
