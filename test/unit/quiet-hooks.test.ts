/**
 * Hooks that cannot leave a trace now. A tracer whose buffer records
 * nothing (tracing_on 0) still has its callbacks on every function, and an
 * enabled event still has its probe; the kernel calls them and they return
 * at once: function_graph's entry is refused its reservation and asks for
 * no return callback, so a function entered then shows no exit later either
 * (the real 7.2 kernel, asked with `echo 1 > tracing_on` under
 * function_graph: the trace begins with the first function entered after
 * the switch, no `} /* vfs_write *\/`). Such hooks see nothing, so the
 * emulated kernel does not run what only they could see call by call,
 * and the host need not report system calls for them — until a trigger
 * (which runs with tracing off, and may turn it on) or tracing_on makes
 * them loud again.
 */
import { describe, expect, it } from 'vitest';
import { SERIES } from '../../src/kernel/series.js';
import { kernelEmu } from '../helpers/kernel.js';
import { echo, traceLines } from '../helpers/tracefs.js';

const SH = { pid: 4321, uid: 0, gid: 0 };

function setup(series: (typeof SERIES)[number]) {
  const e = kernelEmu({ series });
  e.proc.set({ pid: SH.pid, comm: 'sh', ppid: 1, startTime: 1, cwd: '/' });
  const w = (path: string, text: string) => echo(e.fs, path, text, false, SH);
  /** Calls the emulated kernel ran for one `cat README` through the mount. */
  const catCalls = async () => {
    const before = e.k.exec.calls;
    await e.fs.readFile('README', SH);
    return e.k.exec.calls - before;
  };
  return { ...e, w, catCalls };
}

describe.each(SERIES)('quiet hooks (%s)', (series) => {
  it('function_graph with tracing off: a function entered then shows no exit once tracing is on', async () => {
    const { fs, w } = setup(series);
    await w('tracing_on', '0');
    await w('current_tracer', 'function_graph');
    await w('trace', '');
    // The write that turns tracing on runs vfs_write → ... with tracing off until its handler.
    await w('tracing_on', '1');
    await w('tracing_on', '0');
    const lines = traceLines(await fs.readFile('trace', SH));
    expect(lines.some((l) => /\|\s+[a-z_]\w*\(\) \{$/.test(l))).toBe(true);
    expect(lines.filter((l) => /\} \/\* (vfs_write|ksys_write|__x64_sys_write) \*\//.test(l))).toEqual([]);
  });

  it('the function tracers with tracing off run nothing call by call; with tracing on, everything', async () => {
    const { w, catCalls } = setup(series);
    await catCalls();
    const bare = await catCalls();
    await w('tracing_on', '0');
    for (const tracer of ['function', 'function_graph']) {
      await w('current_tracer', tracer);
      const off = await catCalls();
      expect(off, tracer).toBeLessThanOrEqual(bare + 20);
      await w('tracing_on', '1');
      const on = await catCalls();
      await w('tracing_on', '0');
      expect(on, tracer).toBeGreaterThan(off * 5);
    }
  });

  it('function_graph with tracing off is not quiet while set_graph_function names functions (its entry keeps state before the buffer refuses it)', async () => {
    const { w, catCalls } = setup(series);
    await w('tracing_on', '0');
    await w('current_tracer', 'function_graph');
    await catCalls();
    const off = await catCalls();
    await w('set_graph_function', 'vfs_read');
    expect(await catCalls()).toBeGreaterThan(off * 5);
    await w('set_graph_function', '');
    expect(await catCalls()).toBeLessThanOrEqual(off + 20);
  });

  /** Writes each step in turn; after each, whether system calls are seen then. */
  const seenAfter = async (steps: readonly (readonly [string, string])[]) => {
    const { k, fs, w } = setup(series);
    fs.mkdir('instances/a');
    const seen: boolean[] = [];
    for (const [path, text] of steps) {
      await w(path, text);
      seen.push(k.syscallEventsOn());
    }
    return seen;
  };

  it('an enabled event with tracing off is quiet, unless a trigger hangs on it', async () => {
    const seen = await seenAfter([
      ['events/raw_syscalls/sys_enter/enable', '1'],
      ['tracing_on', '0'],
      // A trigger runs with tracing off: a histogram counts on.
      ['events/raw_syscalls/sys_enter/trigger', 'hist:keys=id'],
      ['events/raw_syscalls/sys_enter/trigger', '!hist:keys=id'],
      ['tracing_on', '1'],
    ]);
    expect(seen).toEqual([true, false, true, false, true]);
  });

  it('an event quiet in an array that records nothing is loud once an array that records has it on', async () => {
    const seen = await seenAfter([
      ['instances/a/tracing_on', '0'],
      ['instances/a/events/raw_syscalls/sys_enter/enable', '1'],
      ['events/raw_syscalls/sys_enter/enable', '1'],
      ['events/raw_syscalls/sys_enter/enable', '0'],
    ]);
    expect(seen).toEqual([false, false, true, false]);
  });

  it('a traceon trigger fired with tracing off turns tracing on, and what follows is recorded', async () => {
    const { fs, w } = setup(series);
    await w('tracing_on', '0');
    await w('events/syscalls/sys_enter_openat/trigger', 'traceon');
    await w('events/syscalls/sys_exit_read/enable', '1');
    await fs.readFile('README', SH);
    expect(await fs.readFile('tracing_on', SH).then(String)).toBe('1\n');
    const lines = traceLines(await fs.readFile('trace', SH));
    expect(lines.filter((l) => l.includes('sys_read ->')).length).toBeGreaterThan(0);
  });
});
