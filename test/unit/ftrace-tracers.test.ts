import { describe, expect, it } from 'vitest';
import { SERIES } from '../../src/kernel/series.js';
import { READ_PROC_VERSION, run } from '../helpers/ftrace-driver.js';
import { kernelSample as sample } from '../helpers/fixtures.js';
import { setup, traceLines } from '../helpers/tracefs.js';

/** The graph lines with durations blanked (times differ from run to run). */
function shape(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.replace(/^( \d\) ).{14}\|/, '$1<duration>|').replace(/\w+-\d+/g, 'T'));
}

describe('function tracer', () => {
  it('records one function event per call, with <-parent, through set_ftrace_filter', async () => {
    const ctx = setup();
    const { write, read, kernel, root } = ctx;
    const task = kernel.tasks.get(root.pid)!;
    await write('set_ftrace_filter', 'vfs_read\n');
    await write('current_tracer', 'function');
    run(kernel, task, READ_PROC_VERSION);
    run(kernel, task, READ_PROC_VERSION);
    const lines = traceLines(await read('trace'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^ +sh-\d+ +\[000\] \.\.\.\.\. +\d+\.\d{6}: vfs_read <-ksys_read$/);
    expect(kernel.exec.corruptions).toBe(0);
    await write('options/sym-offset', '1');
    expect(traceLines(await read('trace'))[0]).toMatch(/: vfs_read\+0x4\/0x490 <-ksys_read\+0x[0-9a-f]+\/0x110$/);
    await write('options/sym-offset', '0');
    await write('options/print-parent', '0');
    expect(traceLines(await read('trace'))[0]).toMatch(/: vfs_read$/);
    await write('options/print-parent', '1');
    await write('options/func_stack_trace', '1');
    await write('trace', '');
    run(kernel, task, READ_PROC_VERSION);
    const st = (await read('trace')).split('\n').filter((l) => l && !l.startsWith('#'));
    // The entry code the outermost call returns to may follow (the kernel's call paths set it).
    expect(st.slice(1, 5)).toEqual([expect.stringMatching(/: <stack trace>$/), ' => [FTRACE TRAMPOLINE]', ' => vfs_read', ' => ksys_read']);
  });

  it.each(SERIES)('function_graph with set_ftrace_filter vfs_read prints leaves (%s)', async (series) => {
    const { write, read, kernel, root } = setup({ series });
    const task = kernel.tasks.get(root.pid)!;
    await write('set_ftrace_filter', 'vfs_read\n');
    await write('current_tracer', 'function_graph');
    expect((await read('enabled_functions')).replace(/0x[0-9a-f]{16}/, '0x?')).toBe(
      sample(series, 'enabled_functions.function_graph-set_ftrace_filter-vfs_read.txt').replace(/0x[0-9a-f]{16}/, '0x?'),
    );
    run(kernel, task, READ_PROC_VERSION);
    const text = await read('trace');
    expect(text.split('\n').slice(0, 4).join('\n')).toBe(sample(series, 'trace.function_graph-set_ftrace_filter-vfs_read.head40.txt').split('\n').slice(0, 4).join('\n'));
    expect(shape(text)).toEqual([' 0) <duration>|  vfs_read();']);
    expect(kernel.exec.corruptions).toBe(0);
  });

  it('function_graph with set_graph_function vfs_read prints the nested graph of the sample', async () => {
    const { write, read, kernel, root } = setup();
    const task = kernel.tasks.get(root.pid)!;
    await write('set_graph_function', 'vfs_read\n');
    await write('current_tracer', 'function_graph');
    run(kernel, task, READ_PROC_VERSION);
    const got = shape(await read('trace'));
    const want = shape(sample('7.2', 'trace.function_graph-set_graph_function-vfs_read.head60.txt')).slice(0, 32).map((l) => l.replace(/^ \d\)/, ' 0)'));
    expect(got).toEqual(want);
    expect(kernel.exec.corruptions).toBe(0);
  });
});
