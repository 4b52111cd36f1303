/**
 * Hist triggers (trace_events_hist.c) through the tracefs files: what the
 * `trigger` and `hist` files show (byte for byte as the 7.2 kernel under
 * QEMU printed the same commands), the error_log entries with their carets,
 * named and paused triggers, variables read across events, onmatch / onmax /
 * onchange actions firing synthetic events, enable_hist, O_TRUNC, and the
 * hist file's poll.
 */
import { describe, expect, it } from 'vitest';
import { POLLIN, POLLPRI, POLLRDNORM, O_RDONLY } from '../../src/tracefs/node.js';
import { ctxOf, emulator, fireSwitch } from '../helpers/events.js';

const SW = 'events/sched/sched_switch';
const WAKING = 'events/sched/sched_waking';

type Emu = ReturnType<typeof emulator>;

function errCode(p: Promise<unknown>): Promise<string | undefined> {
  return p.then(
    () => undefined,
    (e: { code?: string }) => e.code,
  );
}

function waking(e: Emu, pid: number, comm: string, prio = 120): void {
  e.tp.fire('sched_waking', ctxOf(1, 'init'), { comm, pid, prio, target_cpu: 0 });
}

function switchTo(e: Emu, prev: [number, string], next: [number, string], prevPrio = 120, prevState = 1): void {
  e.tp.fire('sched_switch', ctxOf(prev[0], prev[1]), {
    prev_comm: prev[1],
    prev_pid: prev[0],
    prev_prio: prevPrio,
    prev_state: prevState,
    next_comm: next[1],
    next_pid: next[0],
    next_prio: 120,
  });
}

/** The entries of a hist file (its `{ ... }` lines and what follows them). */
function entries(hist: string): string[] {
  return hist.split('\n').filter((l) => l.startsWith('{') || l.startsWith('\t'));
}

describe('hist triggers (7.2 oracle)', () => {
  it('aggregates hits and sums by key, sorted by hitcount, with the kernel trigger line and totals', async () => {
    const e = emulator();
    await e.w(`${SW}/trigger`, 'hist:keys=prev_pid:vals=prev_prio\n');
    switchTo(e, [7, 'sh'], [0, 'swapper/0'], 120);
    switchTo(e, [7, 'sh'], [0, 'swapper/0'], 100);
    switchTo(e, [9, 'cat'], [0, 'swapper/0'], 120);
    expect(await e.r(`${SW}/trigger`)).toBe('hist:keys=prev_pid:vals=hitcount,prev_prio:sort=hitcount:size=2048 [active]\n');
    expect(await e.r(`${SW}/hist`)).toBe(
      '# event histogram\n' +
        '#\n' +
        '# trigger info: hist:keys=prev_pid:vals=hitcount,prev_prio:sort=hitcount:size=2048 [active]\n' +
        '#\n' +
        '\n' +
        '{ prev_pid:          9 } hitcount:          1  prev_prio:        120\n' +
        '{ prev_pid:          7 } hitcount:          2  prev_prio:        220\n' +
        '\n' +
        'Totals:\n' +
        '    Hits: 3\n' +
        '    Entries: 2\n' +
        '    Dropped: 0\n',
    );
    expect(await e.r('events/sched/sched_switch/enable')).toBe('0*\n');
  });

  it('prints key modifiers as the kernel does: execname, hex, log2, buckets, percent, graph, syscall', async () => {
    const e = emulator();
    await e.w(`${SW}/trigger`, 'hist:keys=common_pid.execname:vals=hitcount.percent,prev_prio.graph:sort=common_pid\n');
    await e.w(`${SW}/trigger`, 'hist:keys=prev_prio.log2,prev_state.hex:vals=prev_pid.hex\n', true);
    await e.w(`${SW}/trigger`, 'hist:keys=prev_pid.buckets=100:vals=hitcount\n', true);
    switchTo(e, [7, 'sh'], [0, 'swapper/0'], 120, 1);
    switchTo(e, [7, 'sh'], [0, 'swapper/0'], 120, 1);
    switchTo(e, [7, 'sh'], [0, 'swapper/0'], 120, 1);
    switchTo(e, [150, 'cat'], [0, 'swapper/0'], 100, 2);
    const hist = await e.r(`${SW}/hist`);
    expect(entries(hist)).toEqual([
      // a percent or graph of hitcount comes after the plain count
      '{ common_pid: sh              [         7] } hitcount:          3  hitcount (%):  75.00  prev_prio: ####################',
      '{ common_pid: cat             [       150] } hitcount:          1  hitcount (%):  25.00  prev_prio: #####               ',
      // a hex key is not padded
      '{ prev_prio: ~ 2^7 , prev_state: 2 } hitcount:          1  prev_pid:         96',
      '{ prev_prio: ~ 2^7 , prev_state: 1 } hitcount:          3  prev_pid:         15',
      '{ prev_pid: ~ 100-199 } hitcount:          1',
      '{ prev_pid: ~ 0-99 } hitcount:          3',
    ]);
    expect(hist).toContain('# trigger info: hist:keys=common_pid.execname:vals=hitcount,hitcount.percent,prev_prio.graph:sort=common_pid.execname:size=2048 [active]\n');
    expect(hist).toContain('# trigger info: hist:keys=prev_prio.log2,prev_state.hex:vals=hitcount,prev_pid.hex:sort=hitcount:size=2048 [active]\n');

    await e.w('events/raw_syscalls/sys_enter/trigger', 'hist:keys=id.syscall:vals=hitcount\n');
    e.tp.fire('sys_enter', ctxOf(7, 'sh'), { id: 102, args: [0, 0, 0, 0, 0, 0] });
    expect(entries(await e.r('events/raw_syscalls/sys_enter/hist'))).toEqual(['{ id: sys_getuid                    [102] } hitcount:          1']);
  });

  it('logs parse errors with the kernel message and caret, and leaves no trigger behind', async () => {
    const e = emulator();
    const T = `${SW}/trigger`;
    expect(await errCode(e.w(T, 'hist:keys=prev_comm,next_pid.execname:vals=hitcount:sort=next_pid\n'))).toBe('EINVAL');
    expect(await errCode(e.w(T, 'hist:keys=common_pid:cont\n', true))).toBe('ENOENT');
    expect(await errCode(e.w(T, 'hist:keys=common_pid:vals=hitcount:sort=bogus\n', true))).toBe('EINVAL');
    // a map size out of range is refused without an entry
    expect(await errCode(e.w(T, 'hist:keys=common_pid:vals=hitcount:size=64\n', true))).toBe('EINVAL');
    expect(await errCode(e.w(T, 'hist:keys=common_pid:x=prev_pid:y=$x/0:vals=$y\n', true))).toBe('EINVAL');
    expect(await errCode(e.w(T, 'hist:keys=nope\n', true))).toBe('EINVAL');
    const log = (await e.r('error_log')).replace(/^\[ *[0-9.]+\] /gm, '');
    expect(log).toBe(
      'hist:sched:sched_switch: error: Invalid field modifier\n' +
        '  Command: hist:keys=prev_comm,next_pid.execname:vals=hitcount:sort=next_pid\n' +
        '                                        ^\n' +
        "hist:sched:sched_switch: error: Can't clear or continue a nonexistent hist trigger\n" +
        '  Command: hist:keys=common_pid:cont\n' +
        '           ^\n' +
        'hist:sched:sched_switch: error: Sort field must be a key or a val\n' +
        '  Command: hist:keys=common_pid:vals=hitcount:sort=bogus\n' +
        '                                                   ^\n' +
        "hist:sched:sched_switch: error: Couldn't find variable\n" +
        '  Command: hist:keys=common_pid:x=prev_pid:y=$x/0:vals=$y\n' +
        '                  ^\n' +
        "hist:sched:sched_switch: error: Couldn't find field\n" +
        '  Command: hist:keys=common_pid:x=prev_pid:y=$x/0:vals=$y\n' +
        '                                                       ^\n' +
        "hist:sched:sched_switch: error: Couldn't find field\n" +
        '  Command: hist:keys=nope\n' +
        '                     ^\n',
    );
    expect(await e.r(T)).toBe('# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist\n');
    expect(await e.r('events/sched/sched_switch/enable')).toBe('0\n');
  });

  it('pause, cont and clear act on the matching trigger; a duplicate is EEXIST; ! removes it', async () => {
    const e = emulator();
    const T = `${SW}/trigger`;
    await e.w(T, 'hist:keys=prev_pid:pause\n');
    switchTo(e, [7, 'sh'], [0, 'swapper/0']);
    expect(await e.r(T)).toBe('hist:keys=prev_pid:vals=hitcount:sort=hitcount:size=2048 [paused]\n');
    expect(await e.r(`${SW}/hist`)).toContain('    Hits: 0\n');
    await e.w(T, 'hist:keys=prev_pid:cont\n', true);
    switchTo(e, [7, 'sh'], [0, 'swapper/0']);
    expect(entries(await e.r(`${SW}/hist`))).toEqual(['{ prev_pid:          7 } hitcount:          1']);
    expect(await errCode(e.w(T, 'hist:keys=prev_pid\n', true))).toBe('EEXIST');
    await e.w(T, 'hist:keys=prev_pid:clear\n', true);
    expect(entries(await e.r(`${SW}/hist`))).toEqual([]);
    // a removal that matches nothing is no error
    await e.w(T, '!hist:keys=next_pid\n', true);
    await e.w(T, '!hist:keys=prev_pid\n', true);
    expect(await e.r(T)).toContain('# Available triggers:');
    expect(await e.r('events/sched/sched_switch/enable')).toBe('0\n');
  });

  it('named triggers share one histogram across events', async () => {
    const e = emulator();
    await e.w(`${WAKING}/trigger`, 'hist:keys=common_pid:vals=hitcount:name=nm\n');
    await e.w('events/sched/sched_wakeup/trigger', 'hist:keys=common_pid:vals=hitcount:name=nm\n');
    expect(await e.r(`${WAKING}/trigger`)).toBe('hist:name=nm:keys=common_pid:vals=hitcount:sort=hitcount:size=2048 [active]\n');
    waking(e, 5, 'a');
    e.tp.fire('sched_wakeup', ctxOf(1, 'init'), { comm: 'a', pid: 5, prio: 120, target_cpu: 0 });
    expect(entries(await e.r('events/sched/sched_wakeup/hist'))).toEqual(['{ common_pid:          1 } hitcount:          2']);
    expect(await errCode(e.w('events/sched/sched_wakeup_new/trigger', 'hist:keys=pid:name=nm\n'))).toBe('EINVAL');
    expect(await e.r('error_log')).toContain('error: Named hist trigger doesn\'t match existing named trigger (includes variables)\n');
  });

  it('variables carry a timestamp from one event to another; onmatch fires the synthetic event, onmax saves fields', async () => {
    const e = emulator();
    await e.w('synthetic_events', 'wakeup_lat u64 lat; pid_t pid; char comm[16]\n');
    await e.w(`${WAKING}/trigger`, 'hist:keys=pid:ts0=common_timestamp.usecs\n');
    await e.w(`${SW}/trigger`, 'hist:keys=next_pid:lat=common_timestamp.usecs-$ts0:onmatch(sched.sched_waking).trace(wakeup_lat,$lat,next_pid,next_comm):onmax($lat).save(prev_comm)\n');
    await e.w('events/synthetic/wakeup_lat/enable', '1\n');
    expect(await e.r(`${SW}/trigger`)).toBe(
      'hist:keys=next_pid:vals=hitcount:lat=common_timestamp.usecs-$ts0:sort=hitcount:size=2048:clock=global:onmatch(sched.sched_waking).trace(wakeup_lat,$lat,next_pid,next_comm):onmax($lat).save(prev_comm) [active]\n',
    );
    // a switch to a task never woken matches nothing: no event
    switchTo(e, [0, 'swapper/0'], [40, 'ping']);
    expect(e.lines()).toEqual([]);
    waking(e, 42, 'ping');
    const woken = BigInt(e.tracing.top.clock.now()) / 1000n;
    switchTo(e, [0, 'swapper/0'], [42, 'ping']);
    const switched = BigInt(e.tracing.top.clock.now()) / 1000n;
    const out = e.lines();
    expect(out).toHaveLength(1);
    const lat = Number(/lat=(\d+)/.exec(out[0]!)![1]);
    expect(BigInt(lat)).toBeLessThanOrEqual(switched - woken + 1n);
    expect(out[0]).toBe(`wakeup_lat: lat=${lat} pid=42 comm=ping`);
    // ts0 is read once: the next switch to 42 without a wakeup fires nothing
    switchTo(e, [0, 'swapper/0'], [42, 'ping']);
    expect(e.lines()).toHaveLength(1);
    const hist = await e.r(`${SW}/hist`);
    expect(hist).toContain(`{ next_pid:         42 } hitcount:          1\n\tmax: ${String(lat).padStart(10)}  prev_comm: swapper/0                       \n`);
    // the synthetic event is in use
    expect(await errCode(e.w('synthetic_events', '!wakeup_lat\n', true))).toBe('EBUSY');
    // the variable ts0 is referenced: its trigger cannot go first
    expect(await errCode(e.w(`${WAKING}/trigger`, '!hist:keys=pid:ts0=common_timestamp.usecs\n', true))).toBe('EBUSY');
  });

  it('onchange().save() records the fields each time the tracked value changes', async () => {
    const e = emulator();
    await e.w(`${SW}/trigger`, 'hist:keys=prev_comm:newprio=prev_prio:onchange($newprio).save(prev_pid,next_comm)\n');
    switchTo(e, [7, 'sh'], [9, 'cat'], 120);
    switchTo(e, [8, 'sh'], [10, 'ls'], 120);
    switchTo(e, [9, 'sh'], [11, 'dd'], 110);
    expect(entries(await e.r(`${SW}/hist`))).toEqual([
      // string keys are padded to 50
      `{ prev_comm: ${'sh'.padEnd(50)} } hitcount:          3`,
      '\tchanged:        110  prev_pid:          9  next_comm: dd                              ',
    ]);
  });

  it('enable_hist and disable_hist pause another event\'s hist triggers', async () => {
    const e = emulator();
    await e.w(`${SW}/trigger`, 'hist:keys=prev_pid\n');
    await e.w(`${WAKING}/trigger`, 'disable_hist:sched:sched_switch:1\n');
    await e.w('events/sched/sched_wakeup/trigger', 'enable_hist:sched:sched_switch\n');
    expect(await e.r(`${WAKING}/trigger`)).toBe('disable_hist:sched:sched_switch:count=1\n');
    switchTo(e, [7, 'sh'], [0, 'swapper/0']);
    waking(e, 7, 'sh');
    expect(await e.r(`${SW}/trigger`)).toBe('hist:keys=prev_pid:vals=hitcount:sort=hitcount:size=2048 [paused]\n');
    switchTo(e, [7, 'sh'], [0, 'swapper/0']);
    e.tp.fire('sched_wakeup', ctxOf(1, 'init'), { comm: 'sh', pid: 7, prio: 120, target_cpu: 0 });
    switchTo(e, [7, 'sh'], [0, 'swapper/0']);
    expect(entries(await e.r(`${SW}/hist`))).toEqual(['{ prev_pid:          7 } hitcount:          2']);
    expect(await e.r(`${WAKING}/trigger`)).toBe('disable_hist:sched:sched_switch:count=0\n');
  });

  it('an O_TRUNC open of trigger drops the hist and enable_hist triggers, not the others', async () => {
    const e = emulator();
    await e.w(`${SW}/trigger`, 'hist:keys=prev_pid\n');
    await e.w(`${SW}/trigger`, 'enable_hist:sched:sched_waking\n', true);
    await e.w(`${SW}/trigger`, 'traceoff\n', true);
    await e.w(`${SW}/trigger`, '');
    expect(await e.r(`${SW}/trigger`)).toBe('traceoff:unlimited\n');
    expect(await e.r(`${WAKING}/enable`)).toBe('0\n');
  });

  it('runs with tracing off, as the event is built in a side buffer', async () => {
    const e = emulator();
    await e.w('tracing_on', '0\n');
    await e.w(`${SW}/enable`, '1\n');
    await e.w(`${SW}/trigger`, 'hist:keys=prev_pid\n');
    fireSwitch(e.tp, [7, 'sh'], [0, 'swapper/0']);
    expect(entries(await e.r(`${SW}/hist`))).toEqual(['{ prev_pid:          7 } hitcount:          1']);
    expect(e.top).toEqual([]);
  });

  it('the hist file polls POLLIN for hits since it was read and POLLPRI for hits since it was polled', async () => {
    const e = emulator();
    const h = await e.fs.open(`${SW}/hist`, O_RDONLY);
    let woken = 0;
    const wake = () => woken++;
    expect(h.poll(wake)).toBe(0);
    await e.w(`${SW}/trigger`, 'hist:keys=prev_pid\n');
    switchTo(e, [7, 'sh'], [0, 'swapper/0']);
    expect(woken).toBe(1);
    expect(h.poll(wake)).toBe(POLLIN | POLLRDNORM | POLLPRI);
    expect(h.poll(wake)).toBe(POLLIN | POLLRDNORM);
    await h.read(4096, 0);
    expect(h.poll(wake)).toBe(0);
    h.release();
  });
});
