import { describe, expect, it } from 'vitest';
import { Kernel } from '../../src/kernel/kernel.js';
import { Task } from '../../src/kernel/task.js';
import { FunctionListing } from '../../src/ftrace/enabled_functions.js';
import { FgraphOps } from '../../src/ftrace/fgraph.js';
import { Ftrace } from '../../src/ftrace/ftrace.js';
import { FTRACE_OPS_FL_SAVE_REGS, FtraceOps } from '../../src/ftrace/ftrace_ops.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { kernelSample as sample } from '../helpers/fixtures.js';

/** enabled_functions with trampoline addresses blanked (they differ from boot to boot). */
function noAddr(s: string): string {
  return s.replace(/tramp: 0x[0-9a-f]+/g, 'tramp: 0x?');
}

function setup(series: Series = '7.2') {
  const kernel = new Kernel({ series, cpus: 2 });
  const ftrace = new Ftrace(kernel);
  const { fgraph } = ftrace;
  const task = new Task(100, 100, 'cat', 1);
  task.sp = 0xffffc90000004000n;
  kernel.tasks.add(task);
  const id = (name: string) => kernel.symbols.byName(name)[0].id;
  const read = () => ftrace.exec.call(task, 'ksys_read', [3, 0x1000, 62], (x) => x.call('vfs_read', [3, 0x1000, 62], () => 62n));
  return { kernel, ftrace, fgraph, task, id, read, listing: new FunctionListing(ftrace) };
}

describe('ftrace core', () => {
  it('function_graph on vfs_read: one subops of graph_ops through its trampoline (7.2 and 6.12 lines)', () => {
    for (const series of SERIES) {
      const { fgraph, id, read, listing, ftrace } = setup(series);
      const seen: string[] = [];
      const gops = new FgraphOps({
        entryfunc: (t) => (seen.push(`ent ${t.depth}`), true),
        retfunc: (t) => seen.push(`ret ${t.depth} ${t.retval}`),
        entrySym: 'trace_graph_entry',
        retSym: 'trace_graph_return',
      });
      gops.ops.funcHash.filter.add(id('vfs_read'));
      fgraph.register(gops);
      expect(noAddr(listing.enabled())).toBe(noAddr(sample(series, 'enabled_functions.function_graph-set_ftrace_filter-vfs_read.txt')));
      expect(read()).toBe(62n);
      expect(seen).toEqual(['ent 0', 'ret 0 62']);
      expect(ftrace.exec.corruptions).toBe(0);
      fgraph.unregister(gops);
      expect(listing.enabled()).toBe('');
      expect(listing.touched()).toMatch(/^vfs_read \(0\) /);
    }
  });

  it('several ops on one function go through the list function, newest first', () => {
    const { ftrace, id, read, listing, task } = setup();
    const calls: string[] = [];
    const mk = (name: string, flags = 0) =>
      new FtraceOps({ func: () => calls.push(`${name}:${task.preemptCount}`), funcSym: 'function_trace_call', flags });
    const a = mk('a');
    const b = mk('b', FTRACE_OPS_FL_SAVE_REGS);
    a.filterHash.add(id('vfs_read'));
    b.filterHash.add(id('vfs_read'));
    ftrace.register(a);
    read();
    expect(calls).toEqual(['a:0']);
    ftrace.register(b);
    calls.length = 0;
    read();
    expect(calls).toEqual(['b:1', 'a:1']);
    expect(listing.enabled()).toBe('vfs_read (2) R          ->arch_ftrace_ops_list_func+0x0/0x250\n');
    ftrace.unregister(b);
    expect(noAddr(listing.enabled())).toBe('vfs_read (1)           \ttramp: 0x? (function_trace_call+0x0/0x1b0) ->function_trace_call+0x0/0x1b0\n');
    ftrace.unregister(a);
    expect(listing.enabled()).toBe('');
    expect(ftrace.exec.fentryPatched.some((x) => x !== 0)).toBe(false);
  });
});
