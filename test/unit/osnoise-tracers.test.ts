/**
 * The osnoise, timerlat and hwlat tracers (CONFIG_OSNOISE_TRACER,
 * CONFIG_TIMERLAT_TRACER, CONFIG_HWLAT_TRACER: features, as Debian builds
 * without them): their files, events, records and trace output.
 */
import { describe, expect, it } from 'vitest';
import type { Series } from '../../src/kernel/series.js';
import { testEmulator } from '../helpers/emulator.js';

const ALL = ['osnoise-tracer', 'timerlat-tracer', 'hwlat-tracer'] as const;

function emu(series?: Series) {
  const e = testEmulator({ features: [...ALL], virtualClock: true, series });
  const { fs } = e;
  /** Lets `s` seconds of the kernel's time pass, the workloads catching up as their timers would. */
  const pass = (s: number) => {
    for (let i = 0; i < s * 10; i++) {
      e.kernel.clock.advance(100_000_000);
      e.tracing.osnoise!.workload.advance();
      e.tracing.hwlat!.advance();
    }
  };
  return { e, fs, pass, read: (p: string) => fs.readFile(p), write: (p: string, s: string) => fs.writeFile(p, s) };
}

/** The trace's lines that are not header comments. */
const body = (t: string) => t.split('\n').filter((l) => l && !l.startsWith('#'));

describe('osnoise, timerlat and hwlat: built in only with their features', () => {
  it.each(['7.2', '6.12'] as const)('%s without the features: the Debian kernel\'s tracers, no osnoise/ nor hwlat_detector/, no osnoise events', async (series) => {
    const { fs } = testEmulator({ series });
    expect(await fs.readFile('available_tracers')).toBe('blk mmiotrace function_graph function nop\n');
    expect(fs.readdir('')).not.toContain('osnoise');
    expect(fs.readdir('')).not.toContain('hwlat_detector');
    expect(fs.readdir('events')).not.toContain('osnoise');
    // The records' formats are there all the same (trace_entries.h).
    expect(fs.readdir('events/ftrace')).toEqual(expect.arrayContaining(['osnoise', 'timerlat', 'hwlat']));
  });

  it('with them: the tracers newest first, in instances too', async () => {
    const { fs, read } = emu();
    expect(await read('available_tracers')).toBe('timerlat osnoise hwlat blk mmiotrace function_graph function nop\n');
    fs.mkdir('instances/x');
    expect(await read('instances/x/available_tracers')).toBe('timerlat osnoise hwlat function_graph function nop\n');
    expect(fs.readdir('hwlat_detector').sort()).toEqual(['mode', 'width', 'window']);
    expect(fs.readdir('osnoise/per_cpu')).toEqual(['cpu0', 'cpu1']);
    expect(fs.readdir('osnoise/per_cpu/cpu1')).toEqual(['timerlat_fd']);
  });
});

describe('osnoise/ files', () => {
  it('7.2: the defaults and the timerlat files', async () => {
    const { fs, read } = emu();
    expect(fs.readdir('osnoise').sort()).toEqual(['cpus', 'options', 'per_cpu', 'period_us', 'print_stack', 'runtime_us', 'stop_tracing_total_us', 'stop_tracing_us', 'timerlat_align_us', 'timerlat_period_us']);
    const vals: Record<string, string> = {};
    for (const f of ['cpus', 'period_us', 'runtime_us', 'stop_tracing_us', 'stop_tracing_total_us', 'timerlat_period_us', 'timerlat_align_us', 'print_stack', 'options']) vals[f] = await read(`osnoise/${f}`);
    expect(vals).toEqual({
      cpus: '0-1\n',
      period_us: '1000000\n',
      runtime_us: '1000000\n',
      stop_tracing_us: '0\n',
      stop_tracing_total_us: '0\n',
      timerlat_period_us: '1000\n',
      timerlat_align_us: '0\n',
      print_stack: '0\n',
      options: 'DEFAULTS OSNOISE_WORKLOAD NO_PANIC_ON_STOP NO_OSNOISE_PREEMPT_DISABLE NO_OSNOISE_IRQ_DISABLE NO_TIMERLAT_ALIGN \n',
    });
  });

  it('6.12: no TIMERLAT_ALIGN, no timerlat_align_us, no per-period sample events', async () => {
    const { fs, read } = emu('6.12');
    expect(await read('osnoise/options')).toBe('DEFAULTS OSNOISE_WORKLOAD NO_PANIC_ON_STOP NO_OSNOISE_PREEMPT_DISABLE NO_OSNOISE_IRQ_DISABLE \n');
    expect(fs.readdir('osnoise')).not.toContain('timerlat_align_us');
    expect(fs.readdir('events/osnoise').filter((n) => n !== 'enable' && n !== 'filter').sort()).toEqual(['irq_noise', 'nmi_noise', 'sample_threshold', 'softirq_noise', 'thread_noise']);
    await expect(fs.writeFile('osnoise/options', 'TIMERLAT_ALIGN')).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it('runtime stays within the period, timerlat_period_us within 100 us..1 s; bad numbers are EINVAL', async () => {
    const { fs, read, write } = emu();
    const bad = (p: string, v: string) => expect(fs.writeFile(p, v)).rejects.toMatchObject({ code: 'EINVAL' });
    await bad('osnoise/runtime_us', '1000001');
    await write('osnoise/runtime_us', '900000');
    await bad('osnoise/period_us', '899999');
    await write('osnoise/period_us', '2000000\n');
    expect([await read('osnoise/runtime_us'), await read('osnoise/period_us')]).toEqual(['900000\n', '2000000\n']);
    await bad('osnoise/timerlat_period_us', '99');
    await bad('osnoise/timerlat_period_us', '1000001');
    await bad('osnoise/stop_tracing_us', 'ten');
    await write('osnoise/timerlat_period_us', '100');
    expect(await read('osnoise/timerlat_period_us')).toBe('100\n');
  });

  it('cpus takes a CPU list; options sets, clears (NO_) and resets (DEFAULTS)', async () => {
    const { fs, read, write } = emu();
    await write('osnoise/cpus', '1\n');
    expect(await read('osnoise/cpus')).toBe('1\n');
    await expect(fs.writeFile('osnoise/cpus', '2')).rejects.toMatchObject({ code: 'EINVAL' });
    await write('osnoise/cpus', '0-1');
    expect(await read('osnoise/cpus')).toBe('0-1\n');
    await write('osnoise/options', 'NO_OSNOISE_WORKLOAD');
    await write('osnoise/options', 'PANIC_ON_STOP\n');
    expect(await read('osnoise/options')).toBe('NO_DEFAULTS NO_OSNOISE_WORKLOAD PANIC_ON_STOP NO_OSNOISE_PREEMPT_DISABLE NO_OSNOISE_IRQ_DISABLE NO_TIMERLAT_ALIGN \n');
    await expect(fs.writeFile('osnoise/options', 'NO_DEFAULTS')).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(fs.writeFile('osnoise/options', 'FOO')).rejects.toMatchObject({ code: 'EINVAL' });
    await write('osnoise/options', 'DEFAULTS');
    expect(await read('osnoise/options')).toMatch(/^DEFAULTS OSNOISE_WORKLOAD NO_PANIC_ON_STOP /);
  });

  it('timerlat_fd: EINVAL unless timerlat runs without the kernel workload', async () => {
    const { fs } = emu();
    await expect(fs.readFile('osnoise/per_cpu/cpu0/timerlat_fd')).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it('timerlat_fd (timerlat -u): a pinned thread\'s reads wait a period each, recording the IRQ, the wakeup and the return to user space', async () => {
    const { e, fs, write, read } = emu();
    const u = { pid: 4242, uid: 0, gid: 0 };
    const other = { pid: 4243, uid: 0, gid: 0 };
    e.kernel.sched.affinity = (t) => (t.pid === u.pid ? [1] : undefined);
    await write('osnoise/options', 'NO_OSNOISE_WORKLOAD');
    await write('current_tracer', 'timerlat');
    await write('events/osnoise/timerlat_sample/enable', '1');
    // Not pinned: EPERM.
    await expect(fs.open('osnoise/per_cpu/cpu1/timerlat_fd', 0, other)).rejects.toMatchObject({ code: 'EPERM' });
    // Pinned to another CPU than the file's: EPERM.
    await expect(fs.open('osnoise/per_cpu/cpu0/timerlat_fd', 0, u)).rejects.toMatchObject({ code: 'EPERM' });
    const h = await fs.open('osnoise/per_cpu/cpu1/timerlat_fd', 0, u);
    // One thread per CPU.
    e.kernel.sched.affinity = () => [1];
    await expect(fs.open('osnoise/per_cpu/cpu1/timerlat_fd', 0, other)).rejects.toMatchObject({ code: 'EBUSY' });
    const t0 = performance.now();
    for (let i = 0; i < 3; i++) {
      expect((await h.read(1024, 0)).length).toBe(0);
      // Placed elsewhere meanwhile (the emulated scheduler's view is not the host's): its next read still runs on its CPU.
      e.kernel.sched.migrate(e.kernel.tasks.get(u.pid)!, 0);
    }
    expect(performance.now() - t0).toBeGreaterThanOrEqual(2.5);
    h.release();
    await write('tracing_on', '0');
    const samples = body(await read('trace'))
      .filter((l) => l.includes('timerlat_sample:'))
      .map((l) => /\[(\d+)\].*seqnum=(\d+) context=(\d)/.exec(l)!.slice(1).join(' '));
    // cpu, activation, context: irq (0) and thread (1) per wakeup, user-ret (2) at the next read.
    expect(samples).toEqual(['001 1 0', '001 1 1', '001 1 2', '001 2 0', '001 2 1', '001 2 2', '001 3 0', '001 3 1']);
    expect(body(await read('trace')).filter((l) => l.includes('timerlat_sample:') && l.includes('context=1')).every((l) => /^\s+\S+-4242 /.test(l))).toBe(true);
  });
});

describe('the osnoise:* events', () => {
  it('formats as include/trace/events/osnoise.h makes them', async () => {
    const { read } = emu();
    const fmt = (e: string) => read(`events/osnoise/${e}/format`).then((t) => t.split('\n').filter((l) => l.startsWith('\tfield:') || l.startsWith('print fmt:')).slice(4));
    expect(await fmt('irq_noise')).toEqual([
      '\tfield:u64 start;\toffset:8;\tsize:8;\tsigned:0;',
      '\tfield:u64 duration;\toffset:16;\tsize:8;\tsigned:0;',
      '\tfield:__data_loc char[] desc;\toffset:24;\tsize:4;\tsigned:0;',
      '\tfield:int vector;\toffset:28;\tsize:4;\tsigned:1;',
      'print fmt: "%s:%d start %llu.%09u duration %llu ns", __get_str(desc), REC->vector, (REC->start) / 1000000000UL, (REC->start) % 1000000000UL, REC->duration',
    ]);
    expect((await fmt('softirq_noise')).at(-1)).toMatch(/^print fmt: "%8s:%d start %llu\.%09u duration %llu ns", __print_symbolic\(REC->vector, \{ 0, "HI" \}, .*\{ 9, "RCU" \}\), REC->vector, \(REC->start\) \/ 1000000000UL/);
    expect((await fmt('sample_threshold')).at(-1)).toBe('print fmt: "start %llu.%09u duration %llu ns interference %llu", (REC->start) / 1000000000UL, (REC->start) % 1000000000UL, REC->duration, REC->interference');
    expect((await fmt('timerlat_sample')).at(-1)).toBe('print fmt: "timer_latency=%llu seqnum=%u context=%d", REC->timer_latency, REC->seqnum, REC->context');
  });

  it('fire from the workload: the noises a period had, each named, and those over the threshold', async () => {
    const { fs, read, write, pass } = emu();
    fs.mkdir('instances/ev');
    await write('instances/ev/events/osnoise/enable', '1');
    await write('current_tracer', 'osnoise');
    pass(1.2);
    const lines = body(await read('instances/ev/trace'));
    expect(lines.some((l) => /osnoise\/0-\d+ +\[000\] d\.h1\. .* irq_noise: local_timer:236 start \d+\.\d{9} duration \d+ ns$/.test(l))).toBe(true);
    expect(lines.some((l) => /\.\.s\.\. .* softirq_noise: +(TIMER|RCU|SCHED):\d start /.test(l))).toBe(true);
    expect(lines.some((l) => / sample_threshold: start \d+\.\d{9} duration \d+ ns interference \d+$/.test(l))).toBe(true);
    expect(lines.some((l) => / osnoise_sample: runtime=1000000 noise=\d+ max_sample=\d+ hw_count=\d+ irq_count=250 nmi_count=0 softirq_count=\d+ thread_count=\d+$/.test(l))).toBe(true);
  });
});

describe('the osnoise tracer', () => {
  it('a summary line per CPU and period under the osnoise header: runtime, noise, % available, max single noise, counters', async () => {
    const { read, write, pass } = emu();
    await write('current_tracer', 'osnoise');
    pass(2.05);
    const t = await read('trace');
    expect(t).toContain(
      [
        '#                              |||||               RUNTIME      NOISE  %% OF CPU  NOISE    +-----------------------------+',
        '#           TASK-PID      CPU# |||||   TIMESTAMP    IN US       IN US  AVAILABLE  IN US     HW    NMI    IRQ   SIRQ THREAD',
      ].join('\n'),
    );
    const lines = body(t);
    expect(lines).toHaveLength(4);
    for (const l of lines) expect(l).toMatch(/^ +osnoise\/[01]-\d+ +\[00[01]\] \.\.\.\.\. +\d+\.\d{6}: 1000000 +\d+ +\d{2}\.\d{5} +\d+ +\d+ +0 +250 +\d+ +\d+$/);
    // The share available agrees with the noise: (runtime - noise) / runtime.
    const [, noise, pct] = / 1000000 +(\d+) +([\d.]+) /.exec(lines[0]!)!;
    expect(Number(pct)).toBeCloseTo(((1e6 - Number(noise)) / 1e6) * 100, 4);
    await write('options/raw', '1');
    expect(body(await read('trace'))[0]).toMatch(/^\d+ [01] \d+ 1000000 \d+ \d+ \d+ 0 250 \d+ \d+$/);
  });

  it('stop_tracing_total_us: a period noisier than that stops tracing, saying where', async () => {
    const { read, write, pass } = emu();
    await write('osnoise/stop_tracing_total_us', '1');
    await write('current_tracer', 'osnoise');
    pass(1.1);
    expect(await read('tracing_on')).toBe('0\n');
    expect(await read('trace')).toMatch(/: stop tracing hit on cpu [01]\n/);
  });

  it('runs in several instances at once, never beside timerlat (EBUSY)', async () => {
    const { fs, read, write, pass } = emu();
    fs.mkdir('instances/a');
    fs.mkdir('instances/b');
    await write('current_tracer', 'osnoise');
    await write('instances/a/current_tracer', 'osnoise');
    await expect(fs.writeFile('instances/b/current_tracer', 'timerlat')).rejects.toMatchObject({ code: 'EBUSY' });
    expect(await read('instances/b/current_tracer')).toBe('nop\n');
    pass(1.05);
    expect(body(await read('instances/a/trace'))).toHaveLength(2);
    expect(body(await read('trace'))).toHaveLength(2);
    await write('current_tracer', 'nop');
    await write('instances/a/current_tracer', 'nop');
    await write('current_tracer', 'timerlat');
    expect(await read('current_tracer')).toBe('timerlat\n');
  });
});

describe('the timerlat tracer', () => {
  it('an IRQ and a thread sample per CPU and period, under its header', async () => {
    const { read, write, pass, e } = emu();
    await write('osnoise/timerlat_period_us', '100000');
    await write('current_tracer', 'timerlat');
    pass(0.3);
    const t = await read('trace');
    expect(t).toContain('#           TASK-PID      CPU# |||||   TIMESTAMP   ID            CONTEXT                 LATENCY\n');
    const lines = body(t);
    expect(lines).toHaveLength(3 * 2 * 2);
    const cpu0 = lines.filter((l) => l.includes('[000]'));
    expect(cpu0[0]).toMatch(/^ +<idle>-0 +\[000\] d\.h1\. +\d+\.\d{6}: #1     context    irq timer_latency +\d+ ns$/);
    expect(cpu0[1]).toMatch(/^ +timerlat\/0-\d+ +\[000\] \.\.\.\.\. +\d+\.\d{6}: #1     context thread timer_latency +\d+ ns$/);
    expect(cpu0[5]).toMatch(/: #3     context thread /);
    const lat = (l: string) => Number(/timer_latency +(\d+) ns/.exec(l)![1]);
    expect(lat(cpu0[1]!)).toBeGreaterThan(lat(cpu0[0]!));
    // The threads exist while the tracer runs.
    expect([...e.kernel.tasks.kthreads].map((k) => k.comm)).toContain('timerlat/1');
    await write('current_tracer', 'nop');
    expect([...e.kernel.tasks.kthreads].map((k) => k.comm)).not.toContain('timerlat/1');
  });

  it('print_stack: past it, the stack the timer IRQ saved follows the thread sample', async () => {
    const { read, write, pass } = emu();
    await write('osnoise/timerlat_period_us', '100000');
    await write('osnoise/print_stack', '1');
    await write('current_tracer', 'timerlat');
    pass(0.1);
    const lines = (await read('trace')).split('\n').filter((l) => l && !l.startsWith('#'));
    const at = lines.findIndex((l) => l.includes('context thread'));
    expect(lines[at + 1]).toMatch(/^ +timerlat\/\d-\d+ +\[00\d\] \.\.\.\.\. +\d+\.\d{6}: <stack trace>$/);
    // (timerlat_irq itself is not in the Debian kernel's symbols the emulator has: the stack starts below it)
    expect(lines.slice(at + 2, at + 5)).toEqual([' => __hrtimer_run_queues', ' => hrtimer_interrupt', ' => __sysvec_apic_timer_interrupt']);
    expect(lines.slice(at + 2).findIndex((l) => l === ' => do_idle')).toBeGreaterThan(4);
    // Under the threshold: no stack.
    await write('osnoise/print_stack', '1000000');
    await write('trace', '');
    pass(0.1);
    expect(await read('trace')).not.toContain('<stack trace>');
  });
});

describe('the hwlat tracer', () => {
  it('sets tracing_thresh to 10 us while it runs; its files bound each other; mode lists the modes', async () => {
    const { fs, read, write } = emu();
    expect(await read('hwlat_detector/window')).toBe('1000000\n');
    expect(await read('hwlat_detector/width')).toBe('500000\n');
    expect(await read('hwlat_detector/mode')).toBe('none [round-robin] per-cpu\n');
    await expect(fs.writeFile('hwlat_detector/width', '1000001')).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(fs.writeFile('hwlat_detector/window', '499999')).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(fs.writeFile('hwlat_detector/mode', 'all')).rejects.toMatchObject({ code: 'EINVAL' });
    await write('hwlat_detector/mode', 'per-cpu\n');
    expect(await read('hwlat_detector/mode')).toBe('none round-robin [per-cpu]\n');
    expect(await read('tracing_thresh')).toBe('0\n');
    await write('current_tracer', 'hwlat');
    expect(await read('tracing_thresh')).toBe('10\n');
    fs.mkdir('instances/b');
    await expect(fs.writeFile('instances/b/current_tracer', 'hwlat')).rejects.toMatchObject({ code: 'EBUSY' });
    await write('current_tracer', 'nop');
    expect(await read('tracing_thresh')).toBe('0\n');
  });

  it('records the latencies over the threshold as the kernel prints them', async () => {
    const { read, write, pass } = emu();
    await write('hwlat_detector/width', '50000');
    await write('hwlat_detector/window', '100000');
    await write('current_tracer', 'hwlat');
    pass(10);
    const lines = body(await read('trace'));
    expect(lines.length).toBeGreaterThan(3);
    expect(lines[0]).toMatch(/^ +hwlatd-\d+ +\[00[01]\] d\.\.\.\. +\d+\.\d{6}: #1     inner\/outer\(us\): +\d+\/\d+ +ts:\d+\.\d{9} count:[123]$/);
    for (const l of lines) expect(Number(/inner\/outer\(us\): +(\d+)\//.exec(l)![1])).toBeGreaterThan(10);
  });
});
