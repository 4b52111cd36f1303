/**
 * enabled_functions of the reference samples' setups (x-enabled_functions.a … e
 * and enabled_functions.with-fprobe-and-kprobe-events), built through the
 * fprobe and kprobe API as the probe events use it: 7.2 registers an fprobe
 * when its event is enabled and unregisters it when disabled, 6.12 registers
 * at definition and only soft-disables.
 */
import { describe, expect, it } from 'vitest';
import { Fprobe, disableFprobe, enableFprobe, registerFprobe, unregisterFprobe } from '../../src/ftrace/fprobe.js';
import { Kprobe } from '../../src/ftrace/kprobe.js';
import { Kretprobe } from '../../src/ftrace/kretprobes.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { kernelSample as sample } from '../helpers/fixtures.js';
import { echo, setup } from '../helpers/tracefs.js';

const noAddr = (s: string) => s.replace(/tramp: 0x[0-9a-f]+/g, 'tramp: 0x?');

describe.each(SERIES)('enabled_functions with fprobes and kprobes (%s)', (series) => {
  it('x-enabled_functions.a … e', async () => {
    const { fs, read, kernel, ftrace } = setup({ series });
    const check = async (name: string) => expect(noAddr(await read('enabled_functions'))).toBe(noAddr(sample(series, name)));
    // 7.x registers an fprobe when its event is enabled (unregisters when disabled); 6.12 soft-disables
    const v72 = kernel.profile.fprobeRegisters === 'enable';
    const fentry = new Fprobe({ entry: () => {} });
    const fexit = new Fprobe({ exit: () => {} });

    registerFprobe(ftrace, fentry, 'vfs_read');
    await check('x-enabled_functions.a-fprobe-entry-vfs_read.txt');
    registerFprobe(ftrace, fexit, 'vfs_read');
    await check('x-enabled_functions.b-fprobe-entry-and-exit-vfs_read.txt');
    if (v72) unregisterFprobe(ftrace, fentry);
    else disableFprobe(fentry);
    await check('x-enabled_functions.b2-fprobe-exit-only-vfs_read.txt');
    await echo(fs, 'set_ftrace_filter', 'vfs_read\n');
    await echo(fs, 'current_tracer', 'function_graph\n');
    await check('x-enabled_functions.c-function_graph-and-fprobe-exit-vfs_read.txt');
    await echo(fs, 'current_tracer', 'nop\n');
    await echo(fs, 'set_ftrace_filter', '\n');
    await check('x-enabled_functions.c2-after-nop.txt');
    const kret = new Kretprobe({ symbol: 'vfs_read', handler: () => {} });
    ftrace.kprobes.registerKretprobe(kret);
    await check('x-enabled_functions.d-kretprobe-and-fprobe-exit-vfs_read.txt');
    ftrace.kprobes.unregisterKretprobe(kret);
    unregisterFprobe(ftrace, fexit);
    if (!v72) unregisterFprobe(ftrace, fentry);
    await check('x-enabled_functions.e-all-removed.txt');
  });

  it('enabled_functions.with-fprobe-and-kprobe-events', async () => {
    const { read, ftrace } = setup({ series });
    const myprobe = new Fprobe({ entry: () => {} });
    const myretprobe = new Fprobe({ exit: () => {} });
    registerFprobe(ftrace, myprobe, 'vfs_read');
    registerFprobe(ftrace, myretprobe, 'vfs_read');
    const kp = ftrace.kprobes;
    const kp1 = new Kprobe({ symbol: 'vfs_read' });
    const kr1 = new Kretprobe({ symbol: 'vfs_read', handler: () => {} });
    kp.register(kp1, { disabled: true });
    kp.registerKretprobe(kr1, { disabled: true });
    kp.enable(kp1);
    kp.enable(kr1.kp);
    expect(await read('enabled_functions')).toBe(sample(series, 'enabled_functions.with-fprobe-and-kprobe-events.txt'));
    enableFprobe(myprobe);
  });
});
