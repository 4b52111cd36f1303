/**
 * The function profiler (with the function-profiler feature), the stack
 * tracer and graph return values (graph-retval), as fgraph-profiler.tc,
 * func_profile_stat.tc, func_profiler.tc, func_stack_tracer.tc and
 * fgraph-retval.tc use them.
 */
import { describe, expect, it } from 'vitest';
import { Task } from '../../src/kernel/task.js';
import { stackTracerEnabledFile } from '../../src/tracefs/files/ftrace_stack.js';
import { run, withStack } from '../helpers/ftrace-driver.js';
import { echo } from '../helpers/tracefs.js';
import { testEmulator } from '../helpers/emulator.js';
import type { Series } from '../../src/kernel/series.js';

function setupWith(features: ('function-profiler' | 'graph-retval')[] = [], series: Series = '7.2') {
  const emu = testEmulator({ features, series });
  const task = withStack(emu.kernel.tasks.add(new Task(4242, 4242, 'sh', 1)));
  const caller = { pid: 4242, uid: 0, gid: 0 };
  const read = (p: string) => emu.fs.readFile(p, caller);
  const write = (p: string, d: string, append = false) => echo(emu.fs, p, d, append, caller);
  const fork = () => run(emu.kernel, task, ['__do_sys_clone', ['kernel_clone', ['copy_process', '_raw_spin_lock', '_raw_spin_unlock']]]);
  return { ...emu, task, read, write, fork };
}

describe('function profiler (function-profiler feature)', () => {
  it('is absent by default, as on Debian', async () => {
    const { fs } = setupWith();
    expect(fs.readdir('')).not.toContain('function_profile_enabled');
    expect(fs.readdir('')).not.toContain('trace_stat');
    expect(fs.readdir('options')).not.toContain('graph-time');
  });

  it('func_profile_stat: counts while enabled, frozen after', async () => {
    const { read, write, fork, fs } = setupWith(['function-profiler']);
    expect(fs.readdir('options')).toContain('graph-time');
    await write('function_profile_enabled', '1\n');
    const a = await read('trace_stat/function0');
    fork();
    const b = await read('trace_stat/function0');
    expect(b).not.toBe(a);
    expect(b.split('\n').slice(0, 2)).toEqual([
      '  Function                               Hit    Time            Avg             s^2',
      '  --------                               ---    ----            ---             ---',
    ]);
    expect(b).toMatch(/^ {2}kernel_clone {29}1 {4}/m);
    await write('function_profile_enabled', '0\n');
    const c = await read('trace_stat/function0');
    fork();
    expect(await read('trace_stat/function0')).toBe(c);
  });

  it('func_profiler / fgraph-profiler: profiling alongside the function and function_graph tracers', async () => {
    const { read, write, fork, kernel, task } = setupWith(['function-profiler']);
    await write('current_tracer', 'function\n');
    await write('function_profile_enabled', '1\n');
    fork();
    await write('set_ftrace_filter', '*schedule\n');
    await write('trace', '\n');
    await write('function_profile_enabled', '0\n');
    run(kernel, task, ['schedule', '__schedule']);
    fork();
    const lines = (await read('trace')).split('\n').filter((l) => l && !l.startsWith('#'));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.includes('schedule'))).toBe(true);
    await write('set_ftrace_filter', '\n');
    await write('current_tracer', 'function_graph\n');
    await write('function_profile_enabled', '1\n');
    fork();
    expect(await read('trace_stat/function0')).toMatch(/copy_process/);
  });
});

describe('stack tracer', () => {
  it('func_stack_tracer: the deepest stack, restricted by stack_trace_filter', async () => {
    const { read, write, fork, ftrace } = setupWith();
    expect(await read('stack_trace')).toContain('#  Stack tracer disabled');
    const sysctl = stackTracerEnabledFile(ftrace);
    await write('stack_trace_filter', '\n');
    expect(await read('stack_trace_filter')).toBe('#### all functions enabled ####\n');
    await write('stack_max_size', '0\n');
    const f = { node: null as never, caller: { pid: 0, uid: 0, gid: 0 }, task: null as never, flags: 1, readable: false, writable: true };
    sysctl.write!(f, Buffer.from('1\n'), 0, f.task);
    fork();
    const st = await read('stack_trace');
    expect(st).toMatch(/^ {2}0\) +\d+ +\d+ +\S+\+0x/m);
    expect(st).toMatch(/\(\d+ entries\)/);
    sysctl.write!(f, Buffer.from('0\n'), 0, f.task);
    await write('stack_trace_filter', '*lock*\n');
    const filt = (await read('stack_trace_filter')).split('\n').filter(Boolean);
    expect(filt.every((l) => l.includes('lock'))).toBe(true);
    await write('stack_max_size', '0\n');
    sysctl.write!(f, Buffer.from('1\n'), 0, f.task);
    fork();
    const fl = (await read('stack_trace')).split('\n').find((l) => l.includes(' 0)'))!;
    expect(fl).toMatch(/lock/);
    sysctl.write!(f, Buffer.from('0\n'), 0, f.task);
    expect(ftrace.stackTracer.enabled).toBe(false);
  });
});

describe.each([
  ['7.2', 'proc_reg_write(); /* ret=-5 */', 'proc_reg_write(); /* ret=0xfffffffb */'],
  ['7.3', 'proc_reg_write(); /* ret=-5 */', 'proc_reg_write(); /* ret=0xfffffffb */'],
  ['6.12', 'proc_reg_write(); /* = -5 */', 'proc_reg_write(); /* = 0xfffffffb */'],
] as const)('graph return values (graph-retval feature, %s)', (series, dec, hexed) => {
  it('fgraph-retval: -5 in decimal, fffffffb in hex, in the series\' layout', async () => {
    const { read, write, fs, kernel, task } = setupWith(['graph-retval'], series);
    expect(fs.readdir('options')).toEqual(expect.arrayContaining(['funcgraph-retval', 'funcgraph-retval-hex']));
    await write('set_ftrace_filter', 'proc_reg_write\n');
    await write('set_ftrace_pid', '4242\n');
    await write('current_tracer', 'function_graph\n');
    await write('options/funcgraph-retval', '1\n');
    run(kernel, task, ['ksys_write', ['vfs_write', { fn: 'proc_reg_write', ret: 0xfffffffbn }]]);
    await write('options/funcgraph-retval-hex', '0\n');
    expect((await read('trace')).split('\n').filter((l) => l.includes('proc_reg_write') && / ?= ?-5 /.test(l + ' '))).toHaveLength(1);
    await write('options/funcgraph-retval-hex', '1\n');
    expect((await read('trace')).split('\n').filter((l) => l.includes('proc_reg_write') && l.includes('fffffffb'))).toHaveLength(1);
    expect((await read('trace')).split('\n').find((l) => l.includes('proc_reg_write'))).toMatch(new RegExp(`\\|  ${hexed.replace(/[()*/]/g, '\\$&')}$`));
    await write('options/funcgraph-retval-hex', '0\n');
    expect((await read('trace')).split('\n').find((l) => l.includes('proc_reg_write'))).toMatch(new RegExp(`\\|  ${dec.replace(/[()*/]/g, '\\$&')}$`));
  });
});
