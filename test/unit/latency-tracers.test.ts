/**
 * The latency tracers (latency-tracers feature): irqsoff / preemptoff timed
 * through preemptirq_delay_test's sections, the wakeup tracers through the
 * scheduler's wake-ups, tracing_max_latency, tracing_thresh and the
 * maximum kept in the snapshot buffer with its latency header, as
 * preemptirq/irqsoff_tracer.tc, tracer/wakeup.tc and wakeup_rt.tc use them.
 */
import { describe, expect, it } from 'vitest';
import { Task } from '../../src/kernel/task.js';
import { echo } from '../helpers/tracefs.js';
import { testEmulator } from '../helpers/emulator.js';
import type { Series } from '../../src/kernel/series.js';

/** Real time passes in the sections (the trace clocks are the machine's). */
function setup(series: Series = '7.2', latency = true) {
  const emu = testEmulator({ features: latency ? ['latency-tracers'] : [], series });
  const caller = { pid: 4242, uid: 0, gid: 0 };
  const read = (p: string) => emu.fs.readFile(p, caller);
  const write = (p: string, d: string) => echo(emu.fs, p, d, false, caller);
  return { ...emu, read, write };
}

describe('latency tracers', () => {
  it('are absent by default, as on Debian', async () => {
    const { read, fs, kernel } = setup('7.2', false);
    expect(await read('available_tracers')).toBe('blk mmiotrace function_graph function nop\n');
    expect(fs.readdir('')).not.toContain('tracing_max_latency');
    expect(() => kernel.modules.load('preemptirq_delay_test')).toThrow(/ENOENT/);
  });

  it('are listed between function_graph and function, with tracing_max_latency in every array', async () => {
    const { read, fs, write } = setup();
    expect(await read('available_tracers')).toBe('blk mmiotrace function_graph wakeup_dl wakeup_rt wakeup preemptirqsoff preemptoff irqsoff function nop\n');
    expect(await read('tracing_max_latency')).toBe('0\n');
    fs.mkdir('instances/a', { pid: 4242, uid: 0, gid: 0 });
    expect(fs.readdir('instances/a')).toContain('tracing_max_latency');
    await write('tracing_max_latency', '1234');
    expect(await read('tracing_max_latency')).toBe('1234\n');
  });

  it.each(['7.2', '6.12'] as const)('preemptoff times preemptirq_delay_test\'s section (%s)', async (series) => {
    const { read, write, kernel } = setup(series);
    await write('current_tracer', 'preemptoff');
    expect(await read('options/latency-format')).toBe('1\n');
    kernel.modules.load('preemptirq_delay_test', { test_mode: 'preempt', delay: '30000' });
    const lat = Number((await read('tracing_max_latency')).trim());
    expect(lat).toBeGreaterThanOrEqual(30000);
    expect(lat).toBeLessThan(130000);
    const trace = await read('trace');
    expect(trace).toMatch(/^# tracer: preemptoff\n#\n# preemptoff latency trace v1\.1\.5 on \S+\n# -{68}\n/);
    expect(trace).toMatch(new RegExp(`# latency: ${lat} us, #\\d+/\\d+, CPU#0 \\| \\(M:`));
    expect(trace).toContain('#  => started at: kthread\n#  => ended at:   kthread\n');
    expect(trace).toMatch(/ \d{5}us : <stack trace>\n/);
    expect(trace).toMatch(/#    \| task: preempt_test-\d+ \(uid:0 nice:0 policy:0 rt_prio:0\)\n/);
    expect(trace).toMatch(/preempt_-\d+ +0\.\.\.1\. +\d+us[ !+#*@]: preemptirq_delay_run <-kthread\n/);
    kernel.modules.unload('preemptirq_delay_test');
    // `snapshot` is the tracer's: EBUSY to read and write.
    await expect(read('snapshot')).rejects.toThrow(/EBUSY/);
    await write('current_tracer', 'nop');
    expect(await read('options/latency-format')).toBe('0\n');
  });

  it('come with the preemptirq events: each section\'s edges, caller and parent as offsets from _stext, only while enabled', async () => {
    const { read, write, fs, kernel } = setup();
    expect(fs.readdir('events/preemptirq')).toEqual(expect.arrayContaining(['irq_disable', 'irq_enable', 'preempt_disable', 'preempt_enable', 'enable', 'filter']));
    expect(await read('events/preemptirq/preempt_enable/format')).toMatch(
      /\tfield:s32 caller_offs;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:s32 parent_offs;\toffset:12;\tsize:4;\tsigned:1;\n\nprint fmt: "caller=%pS parent=%pS", \(void \*\)\(\(unsigned long\)\(_stext\) \+ REC->caller_offs\), \(void \*\)\(\(unsigned long\)\(_stext\) \+ REC->parent_offs\)\n$/,
    );
    const t = kernel.tasks.add(new Task(5153, 5153, 'sh', 1));
    const at = (fn: string, off: number) => kernel.resolve(fn)!.addr + BigInt(off);
    // spin_lock_irqsave / spin_unlock_irqrestore in try_to_wake_up, as the lock hooks report them
    const section = () => {
      const pi = kernel.preemptIrq;
      pi.irqDisable(t, at('_raw_spin_lock_irqsave', 9), at('try_to_wake_up', 0x66));
      pi.preemptDisable(t, at('_raw_spin_lock_irqsave', 9), at('try_to_wake_up', 0x66));
      pi.irqEnable(t, at('_raw_spin_unlock_irqrestore', 9), at('try_to_wake_up', 0x86));
      pi.preemptEnable(t, at('_raw_spin_unlock_irqrestore', 9), at('try_to_wake_up', 0x86));
    };
    section();
    await write('events/preemptirq/enable', '1');
    expect(kernel.deep()).toBe(true);
    section();
    await write('events/preemptirq/enable', '0');
    section();
    const lines = (await read('trace')).split('\n').filter((l) => l.includes('sh-5153'));
    const sym = (fn: string, off: number) => `${fn}\\+0x${off.toString(16)}\\/0x[0-9a-f]+`;
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(new RegExp(`\\] d\\.\\.\\.\\. .* irq_disable: caller=${sym('_raw_spin_lock_irqsave', 9)} parent=${sym('try_to_wake_up', 0x66)}$`));
    expect(lines[1]).toMatch(new RegExp(`\\] d\\.\\.1\\. .* preempt_disable: caller=${sym('_raw_spin_lock_irqsave', 9)} parent=`));
    expect(lines[2]).toMatch(new RegExp(`\\] d\\.\\.1\\. .* irq_enable: caller=${sym('_raw_spin_unlock_irqrestore', 9)} parent=${sym('try_to_wake_up', 0x86)}$`));
    expect(lines[3]).toMatch(new RegExp(`\\] \\.\\.\\.1\\. .* preempt_enable: caller=${sym('_raw_spin_unlock_irqrestore', 9)} parent=`));
    expect(t.irqsOff).toBe(0);
    expect(t.preemptCount).toBe(0);
  });

  it('irqsoff: a shorter section than the maximum is not kept; tracing_thresh keeps any above it', async () => {
    const { read, write, kernel } = setup();
    await write('current_tracer', 'irqsoff');
    kernel.modules.load('preemptirq_delay_test', { test_mode: 'irq', delay: '20000' });
    kernel.modules.unload('preemptirq_delay_test');
    const first = Number((await read('tracing_max_latency')).trim());
    expect(first).toBeGreaterThanOrEqual(20000);
    kernel.modules.load('preemptirq_delay_test', { test_mode: 'irq', delay: '2000' });
    kernel.modules.unload('preemptirq_delay_test');
    expect(Number((await read('tracing_max_latency')).trim())).toBe(first);
    await write('tracing_thresh', '1000');
    kernel.modules.load('preemptirq_delay_test', { test_mode: 'irq', delay: '2000' });
    kernel.modules.unload('preemptirq_delay_test');
    const last = Number((await read('tracing_max_latency')).trim());
    expect(last).toBeGreaterThanOrEqual(2000);
    expect(last).toBeLessThan(first);
    expect(await read('trace')).toMatch(/# tracer: irqsoff\n[^]*# latency: \d+ us[^]*<stack trace>/);
  });

  it('wakeup_rt: the wake-up of a real-time task to its switch-in is the maximum, shown in trace', async () => {
    const { read, write, kernel } = setup();
    const t = kernel.tasks.add(new Task(5151, 5151, 'sleep', 1));
    t.prio = 89;
    t.policy = 1;
    t.state = 'S';
    t.cpu = 0;
    await write('current_tracer', 'wakeup_rt');
    await write('tracing_max_latency', '0');
    kernel.sched.wakeFrom(kernel.cpus[0].curr, t);
    await new Promise((r) => setTimeout(r, 3));
    kernel.sched.ensureRunning(t);
    const lat = Number((await read('tracing_max_latency')).trim());
    expect(lat).toBeGreaterThanOrEqual(2000);
    const trace = await read('trace');
    expect(trace).toMatch(/# wakeup_rt latency trace v1\.1\.5/);
    expect(trace).toContain(`# latency: ${lat} us, #`);
    expect(trace).toContain('#    | task: sleep-5151 (uid:0 nice:0 policy:1 rt_prio:10)\n');
    expect(trace).toMatch(/ {7}0:120:R {3}\+ \[000\] {4}5151: 89:R sleep\n/);
    expect(trace).toMatch(/ {7}0:120:R ==> \[000\] {4}5151: 89:R sleep\n/);
  });

  it('wakeup_rt ignores a normal task; wakeup takes it', async () => {
    const { read, write, kernel } = setup();
    const t = kernel.tasks.add(new Task(5152, 5152, 'cat', 1));
    t.prio = 110;
    t.state = 'S';
    await write('current_tracer', 'wakeup_rt');
    kernel.sched.ensureRunning(t);
    expect(await read('tracing_max_latency')).toBe('0\n');
    kernel.sched.schedule(kernel.cpus[0], 'S');
    await write('current_tracer', 'wakeup');
    kernel.sched.wakeFrom(kernel.cpus[0].curr, t);
    await new Promise((r) => setTimeout(r, 2));
    kernel.sched.ensureRunning(t);
    expect(Number((await read('tracing_max_latency')).trim())).toBeGreaterThanOrEqual(1000);
  });
});
