/**
 * enabled_functions for the setups of the reference samples, built through
 * the ftrace API the probe layer uses (ftrace_ops for entry fprobes and
 * kprobes, fgraph_ops for exit fprobes) and through tracefs for the tracers.
 */
import { describe, expect, it } from 'vitest';
import { FgraphOps } from '../../src/ftrace/fgraph.js';
import { FTRACE_OPS_FL_SAVE_ARGS, FTRACE_OPS_FL_SAVE_REGS, FtraceOps } from '../../src/ftrace/ftrace_ops.js';
import { profileOf, SERIES } from '../../src/kernel/series.js';
import { kernelSample } from '../helpers/fixtures.js';
import { echo, setup } from '../helpers/tracefs.js';

const noAddr = (s: string) => s.replace(/tramp: 0x[0-9a-f]+/g, 'tramp: 0x?');

/** The series whose fprobes are these ftrace_ops and fgraph_ops (6.12's are rethook's). */
const ON_FGRAPH = SERIES.filter((s) => profileOf(s).fprobeBackend === 'fgraph');

describe.each(ON_FGRAPH)('enabled_functions of the %s samples', (series) => {
  const sample = (name: string) => kernelSample(series, name);
  it('fprobe entry, exit, function_graph and kretprobe on vfs_read (x-enabled_functions.a … e)', async () => {
    const { fs, read, kernel, ftrace } = setup({ series });
    const { fgraph } = ftrace;
    const vfsRead = kernel.symbols.byName('vfs_read')[0].id;
    const check = async (name: string) => expect(noAddr(await read('enabled_functions'))).toBe(noAddr(sample(name)));

    const fentry = new FtraceOps({ func: () => {}, funcSym: 'fprobe_ftrace_entry', flags: FTRACE_OPS_FL_SAVE_ARGS });
    ftrace.setFilterIds(fentry, [vfsRead]);
    ftrace.register(fentry);
    await check('x-enabled_functions.a-fprobe-entry-vfs_read.txt');

    const fexit = new FgraphOps({ entryfunc: () => true, retfunc: () => {}, entrySym: 'fprobe_fgraph_entry', retSym: 'fprobe_return' });
    fexit.ops.funcHash.filter.add(vfsRead);
    fgraph.register(fexit);
    await check('x-enabled_functions.b-fprobe-entry-and-exit-vfs_read.txt');

    ftrace.unregister(fentry);
    await check('x-enabled_functions.b2-fprobe-exit-only-vfs_read.txt');

    await echo(fs, 'set_ftrace_filter', 'vfs_read\n');
    await echo(fs, 'current_tracer', 'function_graph\n');
    await check('x-enabled_functions.c-function_graph-and-fprobe-exit-vfs_read.txt');

    await echo(fs, 'current_tracer', 'nop\n');
    await echo(fs, 'set_ftrace_filter', '\n');
    await check('x-enabled_functions.c2-after-nop.txt');

    const kprobe = new FtraceOps({ func: () => {}, funcSym: 'kprobe_ftrace_handler', flags: FTRACE_OPS_FL_SAVE_REGS });
    ftrace.setFilterIds(kprobe, [vfsRead]);
    ftrace.register(kprobe);
    await check('x-enabled_functions.d-kretprobe-and-fprobe-exit-vfs_read.txt');

    ftrace.register(fentry);
    await check('enabled_functions.with-fprobe-and-kprobe-events.txt');

    ftrace.unregister(fentry);
    ftrace.unregister(kprobe);
    fgraph.unregister(fexit);
    await check('x-enabled_functions.e-all-removed.txt');
  });
});
