/** function_graph output options against what the real 7.2 kernel printed for the same settings. */
import { describe, expect, it } from 'vitest';
import { READ_PROC_VERSION, run } from '../helpers/ftrace-driver.js';
import { echo, setup } from '../helpers/tracefs.js';

function graphSetup() {
  const ctx = setup();
  const task = ctx.kernel.tasks.get(ctx.root.pid)!;
  const w = (p: string, d: string) => echo(ctx.fs, p, d);
  const lines = async () => (await ctx.read('trace')).split('\n');
  return { ...ctx, task, w, lines, read: () => run(ctx.kernel, task, READ_PROC_VERSION) };
}

describe('function_graph output options', () => {
  it('abstime, proc, overrun columns and their header', async () => {
    const g = graphSetup();
    await g.w('set_ftrace_filter', 'vfs_read\n');
    await g.w('current_tracer', 'function_graph\n');
    for (const o of ['funcgraph-proc', 'funcgraph-abstime', 'funcgraph-tail', 'funcgraph-overrun']) await g.w(`options/${o}`, '1\n');
    g.read();
    const l = await g.lines();
    expect(l.slice(0, 4)).toEqual([
      '# tracer: function_graph',
      '#',
      '#     TIME        CPU  TASK/PID         DURATION                  FUNCTION CALLS',
      '#      |          |     |    |           |   |                     |   |   |   |',
    ]);
    expect(l[4]).toMatch(/^ {4}\d\.\d{6} \| {3}0\) {4}sh-\d+ {4,5}\| [ +!#*@$] +[\d.]+ us +\|  vfs_read\(\);$/);
    // Leaves print no overrun line; returns do.
    expect(l[5]).toBe('');
    for (const o of ['funcgraph-cpu', 'funcgraph-duration', 'funcgraph-overhead', 'funcgraph-overrun']) await g.w(`options/${o}`, '0\n');
    const m = await g.lines();
    expect(m.slice(2, 4)).toEqual(['#     TIME         TASK/PID                      FUNCTION CALLS', '#      |            |    |                       |   |   |   |']);
    expect(m[4]).toMatch(/^ {4}\d\.\d{6} \| {5}sh-\d+ {4,5}\| vfs_read\(\);$/);
    await g.w('options/latency-format', '1\n');
    const n = await g.lines();
    expect(n[2]).toBe('# function_graph latency trace v1.1.5 on 7.2.13+deb14-amd64');
    expect(n.slice(9, 16)).toEqual([
      '#                                   _-----=> irqs-off        ',
      '#                                  / _----=> need-resched    ',
      '#                                 | / _---=> hardirq/softirq ',
      '#                                 || / _--=> preempt-depth   ',
      '#                                 ||| /                      ',
      '#     TIME         TASK/PID       ||||                  FUNCTION CALLS',
      '#      |            |    |        ||||                  |   |   |   |',
    ]);
    expect(n[16]).toMatch(/^ {4}\d\.\d{6} \| {5}sh-\d+ {4,5}\|  \.\.\.1\. \| vfs_read\(\);$/);
  });

  it('tail, max_graph_depth, set_graph_notrace, tracing_thresh and markers as comments', async () => {
    const g = graphSetup();
    await g.w('set_graph_function', 'vfs_read\n');
    await g.w('options/funcgraph-tail', '1\n');
    await g.w('current_tracer', 'function_graph\n');
    g.read();
    let l = (await g.lines()).filter((x) => x && !x.startsWith('#'));
    expect(l[7]).toMatch(/\| {10}\} \/\* aa_file_perm \*\/$/);
    await g.w('options/funcgraph-tail', '0\n');
    await g.w('max_graph_depth', '2\n');
    await g.w('trace', '\n');
    g.read();
    l = (await g.lines()).filter((x) => x && !x.startsWith('#'));
    expect(l.map((x) => x.slice(x.indexOf('|') + 1))).toEqual(['  vfs_read() {', '    rw_verify_area();', '    proc_reg_read_iter();', '  }']);
    await g.w('max_graph_depth', '0\n');
    await g.w('set_graph_notrace', 'rw_verify_area\n');
    await g.w('trace', '\n');
    g.read();
    l = (await g.lines()).filter((x) => x && !x.startsWith('#'));
    expect(l.slice(0, 3).map((x) => x.slice(x.indexOf('|') + 1))).toEqual(['  vfs_read() {', '    proc_reg_read_iter() {', '      seq_read_iter() {']);
    await g.w('set_graph_notrace', '\n');
    await g.w('tracing_thresh', '1000000\n');
    await g.w('trace', '\n');
    g.read();
    expect((await g.lines()).filter((x) => x && !x.startsWith('#'))).toEqual([]);
    await g.w('tracing_thresh', '0\n');
    await g.w('trace', '\n');
    await g.w('trace_marker', 'hello\n');
    expect((await g.lines()).filter((x) => x && !x.startsWith('#'))).toEqual([expect.stringMatching(/^ \d\) {15}\|  \/\* hello \*\/$/)]);
  });

  it('a context switch between two tasks on a CPU prints the separator', async () => {
    const g = graphSetup();
    const other = g.kernel.tasks.get(g.shell('head', 0).pid)!;
    await g.w('set_ftrace_filter', 'vfs_read\n');
    await g.w('current_tracer', 'function_graph\n');
    g.read();
    run(g.kernel, other, READ_PROC_VERSION);
    const l = (await g.lines()).filter((x) => !x.startsWith('#'));
    expect(l[1]).toBe(' ------------------------------------------');
    expect(l[2]).toMatch(/^ 0\) {4}sh-\d+ {4,5} => {3,4}head-\d+ {3,4}$/);
    expect(l[3]).toBe(' ------------------------------------------');
    expect(l[4]).toBe('');
  });
});

describe('function_graph through trace_pipe', () => {
  it('consumes leaves with their returns and nested entries alone', async () => {
    const g = graphSetup();
    await g.w('set_graph_function', 'rw_verify_area\n');
    await g.w('current_tracer', 'function_graph\n');
    g.read();
    const h = await g.fs.open('trace_pipe', 0);
    const text = (await h.read(65536, 0)).toString('latin1');
    h.release();
    const body = text.split('\n').filter(Boolean).map((x) => x.slice(x.indexOf('|') + 1));
    expect(body).toEqual([
      '  rw_verify_area() {',
      '    security_file_permission() {',
      '      apparmor_file_permission() {',
      '        aa_file_perm() {',
      '          __rcu_read_lock();',
      '          __rcu_read_unlock();',
      '        }',
      '      }',
      '      bpf_lsm_file_permission();',
      '    }',
      '  }',
    ]);
    expect(await g.lines()).toEqual(['# tracer: function_graph', '#', '# CPU  DURATION                  FUNCTION CALLS', '# |     |   |                     |   |   |   |', '']);
  });
});
