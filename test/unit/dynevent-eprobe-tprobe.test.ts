/**
 * Event probes and tracepoint probes firing: an eprobe records from its
 * attached event's records (in the trace array where it is enabled, through
 * its `if` filter, its trigger hidden, the attached event in soft mode); a
 * tracepoint probe records the tracepoint's prototype arguments, as the real
 * 7.2 kernel printed them.
 */
import { describe, expect, it } from 'vitest';
import { Task } from '../../src/kernel/task.js';
import { emulator, fireSwitch } from '../helpers/events.js';

describe('eprobes', () => {
  it('record from the attached event, as `name: (sys.event) args`', async () => {
    const { w, r, tp, lines } = emulator();
    await w('dynamic_events', 'e:ep sched/sched_switch prev=$prev_pid comm=$prev_comm:string cm=$comm:string\n');
    await w('dynamic_events', 'e:ep2 sched/sched_switch prev=$prev_pid if prev_pid == 0\n', true);
    await w('events/eprobes/enable', '1');
    expect(await r('events/sched/sched_switch/enable')).toBe('0*\n');
    expect(await r('events/sched/sched_switch/trigger')).toMatch(/^# Available triggers:/);
    fireSwitch(tp, [114, 'sh'], [0, 'swapper/0']);
    fireSwitch(tp, [0, 'swapper/1'], [114, 'sh'], 1);
    await w('events/eprobes/enable', '0');
    expect(await r('events/sched/sched_switch/enable')).toBe('0\n');
    expect(lines()).toEqual([
      'ep: (sched.sched_switch) prev=0x72 comm="sh" cm="sh"',
      'ep2: (sched.sched_switch) prev=0x0',
      'ep: (sched.sched_switch) prev=0x0 comm="swapper/1" cm="swapper/1"',
    ]);
    // nothing fires once off
    fireSwitch(tp, [114, 'sh'], [0, 'swapper/0']);
    expect(lines()).toHaveLength(3);
  });

  it('record in the instance where they are enabled, and hold their attached dynamic event', async () => {
    const { fs, w, r, tp, lines, tracing } = emulator();
    fs.mkdir('instances/a');
    const { capture } = await import('../helpers/events.js');
    const inst = capture(tracing.instances.get('a')!);
    await w('dynamic_events', 'e:ep sched/sched_switch prev=$prev_pid\n');
    await w('instances/a/events/eprobes/ep/enable', '1');
    fireSwitch(tp, [114, 'sh'], [0, 'swapper/0']);
    expect(lines()).toEqual([]);
    expect(lines(inst)).toEqual(['ep: (sched.sched_switch) prev=0x72']);
    expect(await r('events/sched/sched_switch/enable')).toBe('0\n');
    expect(await r('instances/a/events/sched/sched_switch/enable')).toBe('0*\n');
  });

  it('keep the attached synthetic event busy while they exist', async () => {
    const { w } = emulator();
    await w('dynamic_events', 's:sy u64 a\n');
    await w('dynamic_events', 'e:ep synthetic/sy x=$a\n', true);
    const { errCode } = await import('../helpers/tracefs.js');
    expect(await errCode(w('dynamic_events', '-:synthetic/sy\n', true))).toBe('EBUSY');
    await w('dynamic_events', '-:ep\n', true);
    await w('dynamic_events', '-:synthetic/sy\n', true);
  });

  it('record one preemption level deeper than the attached event (d..2. → d..3.)', async () => {
    const { w, tp, top, kernel } = emulator();
    kernel.tasks.add(new Task(114, 114, 'sh', 1));
    await w('dynamic_events', 'e:ep sched/sched_switch\n');
    await w('events/sched/sched_switch/enable', '1');
    await w('events/eprobes/ep/enable', '1');
    tp.fire('sched_switch', { task: kernel.tasks.get(114)!, cpu: 0, flags: 1, preemptCount: 2 }, {
      prev_comm: 'sh', prev_pid: 114, prev_prio: 120, prev_state: 1, next_comm: 'swapper/0', next_pid: 0, next_prio: 120,
    });
    expect(top.map((c) => [c.data[2], c.data[3]])).toEqual([[1, 3], [1, 2]]);
  });
});

describe('tracepoint probes', () => {
  it('record the prototype arguments at the probe stub (7.2 sample lines)', async () => {
    const { w, r, tp, lines, kernel } = emulator();
    await w('dynamic_events', 't:tp2 sched_switch $arg1 $arg2 prev_state\n');
    expect(await r('dynamic_events')).toBe('t:tracepoints/tp2 sched_switch preempt=preempt prev=prev prev_state=prev_state\n');
    kernel.tasks.add(new Task(114, 114, 'sh', 1));
    await w('events/tracepoints/enable', '1');
    tp.fire('sched_switch', { task: kernel.tasks.get(114)!, cpu: 0, flags: 1, preemptCount: 2 }, {
      prev_comm: 'sh', prev_pid: 114, prev_prio: 120, prev_state: 0x100, next_comm: 'swapper/0', next_pid: 0, next_prio: 120,
    });
    await w('events/tracepoints/enable', '0');
    const stub = kernel.symbols.lookupName('__probestub_sched_switch')!;
    const prev = (kernel.tasks.get(114) as unknown as { addr: bigint }).addr;
    expect(lines()).toEqual([`tp2: (__probestub_sched_switch+0x4/0x${stub.size.toString(16)}) preempt=1 prev=0x${prev.toString(16)} prev_state=0`]);
  });

  it('follow BTF paths from the prototype\'s task pointers into task_struct', async () => {
    const { w, tp, lines, kernel } = emulator();
    kernel.tasks.add(new Task(114, 114, 'sh', 1));
    await w('dynamic_events', 't:tp sched_switch prev->pid next_comm=next->comm:string\n');
    await w('events/tracepoints/enable', '1');
    tp.fire('sched_switch', { task: kernel.tasks.get(114)!, cpu: 0, flags: 1, preemptCount: 2 }, {
      prev_comm: 'sh', prev_pid: 114, prev_prio: 120, prev_state: 1, next_comm: 'swapper/0', next_pid: 0, next_prio: 120,
    });
    expect(lines()[0]).toMatch(/^tp: \(__probestub_sched_switch\+0x4\/0x[0-9a-f]+\) arg1=114 next_comm="swapper\/0"$/);
  });

  it('go one preemption level deeper than the tracepoint\'s own event (d..2. → d..3.)', async () => {
    const { w, tp, top, kernel } = emulator();
    kernel.tasks.add(new Task(114, 114, 'sh', 1));
    await w('dynamic_events', 't:tp sched_switch\n');
    await w('events/sched/sched_switch/enable', '1');
    await w('events/tracepoints/tp/enable', '1');
    tp.fire('sched_switch', { task: kernel.tasks.get(114)!, cpu: 0, flags: 1, preemptCount: 2 }, {
      prev_comm: 'sh', prev_pid: 114, prev_prio: 120, prev_state: 1, next_comm: 'swapper/0', next_pid: 0, next_prio: 120,
    });
    expect(top.map((c) => [c.data[2], c.data[3]])).toEqual([[1, 2], [1, 3]]);
  });
});

describe('synthetic events', () => {
  it('record what their firer gives and print `name: field=value ...`', async () => {
    const { w, r, lines, tracing, kernel } = emulator();
    await w('synthetic_events', 'wakeup_lat pid_t pid; u64 lat; char comm[16]; char name[]\n');
    expect(await r('synthetic_events')).toBe('wakeup_lat\tpid_t pid; u64 lat; char[16] comm; char[] name\n');
    await w('events/synthetic/wakeup_lat/enable', '1');
    const { SynthEvent } = await import('../../src/trace/dynevent/trace_events_synth.js');
    const type = tracing.dynEvents.registry.event('synthetic', 'wakeup_lat');
    if (!(type instanceof SynthEvent)) throw new Error('no synthetic event wakeup_lat');
    const task = kernel.tasks.add(new Task(77, 77, 'cyclic', 1));
    const ctx = { task, cpu: 0, flags: 0, preemptCount: 0 };
    tracing.events.emit(type, ctx, type.build(ctx, [77, 1234n, 'cyclic', 'timer']));
    expect(lines()).toEqual(['wakeup_lat: pid=77 lat=1234 comm=cyclic name=timer']);
    const { errCode } = await import('../helpers/tracefs.js');
    expect(await errCode(w('synthetic_events', '!wakeup_lat\n', true))).toBe('EBUSY');
    await w('events/synthetic/wakeup_lat/enable', '0');
    await w('synthetic_events', '!wakeup_lat\n', true);
    expect(await r('synthetic_events')).toBe('');
  });
});
