/**
 * Replays of test.d/ftrace tests on the filter files, through the library
 * API: func-filter-glob, func_set_ftrace_file, func_mod_trace's first part,
 * func_traceonoff_triggers and func-filter-stacktrace.
 */
import { describe, expect, it } from 'vitest';
import { READ_PROC_VERSION, run } from '../helpers/ftrace-driver.js';
import { echo, errCode, setup, traceLines } from '../helpers/tracefs.js';

const names = (text: string) => text.split('\n').filter(Boolean).map((l) => l.split(' ')[0]);

describe('test.d/ftrace filter files', () => {
  it('func-filter-glob: each glob selects what grep selects from available_filter_functions', async () => {
    const { fs, read } = setup();
    const aff = names(await read('available_filter_functions'));
    const check = async (glob: string, re: RegExp) => {
      await echo(fs, 'set_ftrace_filter', `${glob}\n`);
      expect(names(await read('set_ftrace_filter'))).toEqual(aff.filter((n) => re.test(n)));
    };
    await check('*schedule', /^.*schedule$/);
    await check('*schedule*', /^.*schedule.*$/);
    await check('schedule*', /^schedule.*$/);
    await check('*pin*lock', /.*pin.*lock$/);
    await check('mutex*unl*', /^mutex.*unl.*/);
    expect(await read('README')).toMatch(/accepts: .* glob-matching-pattern/);
    await check('sch*ule', /^sch.*ule$/);
    await check('[Ss]y[Ss]_*', /^[Ss]y[Ss]_.*$/);
    await echo(fs, 'set_ftrace_filter', 'sch?dule\n');
    expect(await read('set_ftrace_filter')).toBe('schedule\n');
    await echo(fs, 'set_ftrace_filter', '\n');
    expect(await read('set_ftrace_filter')).toBe('#### all functions enabled ####\n');
  });

  it('func_set_ftrace_file: commands listed after the functions, removed by glob', async () => {
    const { fs, read } = setup();
    const ALL = '#### all functions enabled ####';
    const list = async () => (await read('set_ftrace_filter')).split('\n').filter(Boolean);
    expect(await list()).toEqual([ALL]);
    await echo(fs, 'set_ftrace_filter', 'schedule:traceoff\n');
    expect(await list()).toEqual([ALL, 'schedule:traceoff:unlimited']);
    await echo(fs, 'set_ftrace_filter', 'schedule\n');
    expect(await list()).toEqual(['schedule', 'schedule:traceoff:unlimited']);
    await echo(fs, 'set_ftrace_filter', 'sched_tick\n', true);
    expect((await list()).sort()).toEqual(['sched_tick', 'schedule', 'schedule:traceoff:unlimited']);
    await echo(fs, 'set_ftrace_filter', 'sched_tick:traceoff\n', true);
    const l = await list();
    expect(l.slice(-2).sort()).toEqual(['sched_tick:traceoff:unlimited', 'schedule:traceoff:unlimited']);
    await echo(fs, 'set_ftrace_filter', '\n');
    expect((await list())[0]).toBe(ALL);
    // reset_ftrace_filter
    await echo(fs, 'set_ftrace_filter', '!schedule:traceoff\n');
    await echo(fs, 'set_ftrace_filter', '!sched_tick:traceoff\n');
    expect(await list()).toEqual([ALL]);
    const aff = names(await read('available_filter_functions'));
    const expected = [...new Set(aff.filter((n) => n.includes('lock')))].sort();
    const actual = async () => [...new Set((await list()).filter((x) => !x.includes('#')).map((x) => x.split(':')[0]))].sort();
    await echo(fs, 'set_ftrace_filter', '*lock*:traceoff\n');
    expect(await actual()).toEqual(expected);
    await echo(fs, 'set_ftrace_filter', '!*try*lock:traceoff\n', true);
    expect(await actual()).toEqual(expected.filter((n) => !/try.*lock$/.test(n)));
    await echo(fs, 'set_ftrace_filter', '!*:traceoff\n', true);
    expect(await actual()).toEqual([]);
  });

  it('rejects what the kernel rejects and keeps the hash', async () => {
    const { fs, read } = setup();
    await echo(fs, 'set_ftrace_filter', 'vfs_read\n');
    expect(await errCode(echo(fs, 'set_ftrace_filter', 'no_such_function_xyz\n', true))).toBe('EINVAL');
    expect(await read('set_ftrace_filter')).toBe('vfs_read\n');
    expect(await errCode(echo(fs, 'set_ftrace_filter', 'vfs_read:nocmd\n', true))).toBe('EINVAL');
    expect(await errCode(echo(fs, 'set_ftrace_notrace', 'vfs_read:traceoff\n', true))).toBe('EINVAL');
    expect(await errCode(echo(fs, 'set_ftrace_filter', '!nosuch:traceoff\n', true))).toBe('ENODEV');
    expect(await errCode(echo(fs, 'set_ftrace_filter', 'vfs_read:traceoff:abc\n', true))).toBe('EINVAL');
    // Several words per write; a leading number is a record index.
    await echo(fs, 'set_ftrace_filter', 'vfs_read vfs_write  schedule\n');
    expect(await read('set_ftrace_filter')).toBe(names(await read('available_filter_functions')).filter((n) => ['vfs_read', 'vfs_write', 'schedule'].includes(n)).map((n) => n + '\n').join(''));
    await echo(fs, 'set_ftrace_filter', '1\n');
    expect(await read('set_ftrace_filter')).toBe(names(await read('available_filter_functions'))[0] + '\n');
    await echo(fs, 'set_ftrace_notrace', '');
    expect(await read('set_ftrace_notrace')).toBe('#### no functions disabled ####\n');
  });

  it('func_mod_trace: a :mod: filter for a module not loaded is kept and listed', async () => {
    const { fs, read } = setup();
    await echo(fs, 'set_ftrace_filter', 'non_exist_func:mod:non_exist_module\n');
    expect(await read('set_ftrace_filter')).toBe('non_exist_func:mod:non_exist_module\n');
    await echo(fs, 'set_ftrace_filter', '*:mod:virtio_net\n');
    const l = (await read('set_ftrace_filter')).split('\n').filter(Boolean);
    expect(l.length).toBeGreaterThan(5);
    expect(l.every((x) => x.endsWith(' [virtio_net]'))).toBe(true);
  });

  it('func_traceonoff_triggers: traceoff, traceon and counted traceoff on schedule', async () => {
    const { fs, read, write, kernel, root } = setup();
    const task = kernel.tasks.get(root.pid)!;
    const sched = () => run(kernel, task, ['schedule', '__schedule']);
    await echo(fs, 'set_ftrace_filter', 'schedule:traceoff\n');
    expect((await read('set_ftrace_filter')).match(/schedule/g)).toHaveLength(1);
    sched();
    expect(await read('tracing_on')).toBe('0\n');
    await echo(fs, 'set_ftrace_filter', '!schedule:traceoff\n', true);
    expect(await read('set_ftrace_filter')).not.toMatch(/schedule/);
    await echo(fs, 'set_ftrace_filter', 'schedule:traceon\n');
    sched();
    expect(await read('tracing_on')).toBe('1\n');
    await echo(fs, 'set_ftrace_filter', '!schedule:traceon\n', true);
    await echo(fs, 'set_ftrace_filter', 'schedule:traceoff:3\n');
    for (const want of ['0', '0', '0', '1']) {
      sched();
      expect(await read('tracing_on')).toBe(`${want}\n`);
      await write('tracing_on', '1');
    }
    expect(await read('set_ftrace_filter')).toMatch(/^schedule:traceoff:count=0$/m);
    await echo(fs, 'set_ftrace_filter', '!schedule:traceoff:0\n');
    expect(await read('set_ftrace_filter')).not.toMatch(/trace(on|off)/);
  });

  it('func-filter-stacktrace: kernel_clone:stacktrace records a stack trace', async () => {
    const { fs, read, kernel, root } = setup();
    await echo(fs, 'set_ftrace_filter', 'kernel_clone:stacktrace\n', true);
    expect(await read('set_ftrace_filter')).toMatch(/^kernel_clone:stacktrace:unlimited$/m);
    run(kernel, kernel.tasks.get(root.pid)!, ['__do_sys_clone', ['kernel_clone', 'copy_process']]);
    const t = await read('trace');
    expect(t).toMatch(/<stack trace>/);
    expect(t).toMatch(/ => kernel_clone\n => __do_sys_clone\n/);
    expect(traceLines(t)[0]).toMatch(/ sh-\d+ +\[000\] \.\.\.\.\. +[\d.]+: <stack trace>$/);
    run(kernel, kernel.tasks.get(root.pid)!, READ_PROC_VERSION);
  });

  it('snapshot, dump and cpudump commands act and list as the kernel does', async () => {
    const { fs, read, kernel, root } = setup();
    const task = kernel.tasks.get(root.pid)!;
    await echo(fs, 'current_tracer', 'function\n');
    await echo(fs, 'set_ftrace_filter', 'vfs_read:snapshot:2\n', true);
    expect(await read('set_ftrace_filter')).toMatch(/^vfs_read:snapshot:count=2$/m);
    run(kernel, task, READ_PROC_VERSION);
    run(kernel, task, READ_PROC_VERSION);
    run(kernel, task, READ_PROC_VERSION);
    expect(await read('set_ftrace_filter')).toMatch(/^vfs_read:snapshot:count=0$/m);
    expect((await read('snapshot')).split('\n').filter((l) => l.includes('vfs_read <-ksys_read')).length).toBeGreaterThan(0);
    await echo(fs, 'set_ftrace_filter', 'vfs_readv:dump\n', true);
    await echo(fs, 'set_ftrace_filter', 'vfs_writev:cpudump\n', true);
    const l = (await read('set_ftrace_filter')).split('\n');
    expect(l).toContain('vfs_readv:dump:count=1');
    expect(l).toContain('vfs_writev:cpudump:unlimited');
    run(kernel, task, ['do_readv', 'vfs_readv']);
    expect(await read('tracing_on')).toBe('0\n');
    expect((await read('trace')).split('\n').filter((x) => x && !x.startsWith('#'))).toEqual([]);
    await echo(fs, 'set_ftrace_filter', '!*:snapshot:0\n', true);
    await echo(fs, 'set_ftrace_filter', '!*:dump\n', true);
    await echo(fs, 'set_ftrace_filter', '!*:cpudump\n', true);
    expect(await read('set_ftrace_filter')).toBe('#### all functions enabled ####\n');
  });
});
