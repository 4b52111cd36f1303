/**
 * set_ftrace_pid / set_ftrace_notrace_pid with function-fork (func-filter-pid.tc,
 * func-filter-notrace-pid.tc), at the top level and in an instance, and the
 * function tracers in instances with their own filters (fgraph-multi*.tc).
 */
import { describe, expect, it } from 'vitest';
import { Task } from '../../src/kernel/task.js';
import type { Kernel } from '../../src/kernel/kernel.js';
import { notifyExit, notifyFork, run, withStack } from '../helpers/ftrace-driver.js';
import { echo, setup } from '../helpers/tracefs.js';

let nextPid = 9000;

/** `yield`: the shell forks ping, which execs, as ftracetest's yield does. */
function forkExec(kernel: Kernel, parent: Task): Task {
  run(kernel, parent, ['__do_sys_clone', ['kernel_clone', 'copy_process']]);
  const child = withStack(kernel.tasks.add(new Task(nextPid, nextPid, 'ping', parent.pid)));
  nextPid++;
  notifyFork(kernel, child, parent);
  run(kernel, child, ['__x64_sys_execve', ['do_execveat_common.isra.0', 'bprm_execve']]);
  run(kernel, child, ['do_exit', 'exit_files']);
  notifyExit(kernel, child);
  return child;
}

async function pidTest(d: string, tracer: string, notrace: boolean) {
  const ctx = setup();
  const { fs, read, kernel, root } = ctx;
  const shell = kernel.tasks.get(root.pid)!;
  const PID = String(shell.pid);
  const lines = async () => (await read(`${d}trace`)).split('\n').filter((l) => l && !l.startsWith('#'));
  if (d) fs.mkdir(d.slice(0, -1));
  await echo(fs, `${d}options/funcgraph-proc`, '1\n');
  await echo(fs, `${d}tracing_on`, '0\n');
  await echo(fs, `${d}set_ftrace_filter`, 'do_execve*\n');
  await echo(fs, `${d}set_ftrace_filter`, 'kernel_clone\n', true);
  await echo(fs, `${d}${notrace ? 'set_ftrace_notrace_pid' : 'set_ftrace_pid'}`, `${PID}\n`);
  await echo(fs, `${d}current_tracer`, `${tracer}\n`);
  await echo(fs, `${d}trace_options`, 'nofunction-fork\n');
  await echo(fs, `${d}tracing_on`, '1\n');
  forkExec(kernel, shell);
  let l = await lines();
  const mine = l.filter((x) => x.includes(PID)).length;
  const other = l.filter((x) => !x.includes(PID)).length;
  if (notrace) expect([mine, other > 0]).toEqual([0, true]);
  else expect([mine > 0, other]).toEqual([true, 0]);
  await echo(fs, `${d}tracing_on`, '0\n');
  await echo(fs, `${d}trace`, '\n');
  await echo(fs, `${d}trace_options`, 'function-fork\n');
  if (notrace) await echo(fs, `${d}set_ftrace_pid`, `${PID}\n`);
  await echo(fs, `${d}tracing_on`, '1\n');
  forkExec(kernel, shell);
  l = await lines();
  const mine2 = l.filter((x) => x.includes(PID)).length;
  const other2 = l.filter((x) => !x.includes(PID)).length;
  if (notrace) expect([mine2, other2]).toEqual([0, 0]);
  else expect([mine2 > 0, other2 > 0]).toEqual([true, true]);
  expect(await read(`${d}set_ftrace_pid`)).not.toBe('no pid\n');
  await echo(fs, `${d}set_ftrace_pid`, '\n');
  await echo(fs, `${d}set_ftrace_notrace_pid`, '\n');
  expect(await read(`${d}set_ftrace_pid`)).toBe('no pid\n');
  await echo(fs, `${d}current_tracer`, 'nop\n');
}

describe('pid filtering', () => {
  for (const d of ['', 'instances/ftracetest/']) {
    it(`func-filter-pid with function ${d || '(top)'}`, () => pidTest(d, 'function', false));
    it(`func-filter-pid with function_graph ${d || '(top)'}`, () => pidTest(d, 'function_graph', false));
    it(`func-filter-notrace-pid ${d || '(top)'}`, () => pidTest(d, 'function', true));
  }

  it('pid files list, append and reject as the kernel does', async () => {
    const { fs, read } = setup();
    await echo(fs, 'set_ftrace_pid', '1 2  3\n');
    expect(await read('set_ftrace_pid')).toBe('1\n2\n3\n');
    await echo(fs, 'set_ftrace_pid', '7\n', true);
    expect(await read('set_ftrace_pid')).toBe('1\n2\n3\n7\n');
    const h = await fs.open('set_ftrace_pid', 0o1 | 0o1000);
    await expect(h.write(Buffer.from('abc\n'), 0)).rejects.toMatchObject({ code: 'EINVAL' });
    h.release();
    expect(await read('set_ftrace_pid')).toBe('no pid\n');
  });
});

describe('function tracers in instances', () => {
  it('fgraph-multi-filter: enabled_functions follows each instance filter and notrace', async () => {
    const { fs, read } = setup();
    const count = async (a?: string, b?: string) => (await read('enabled_functions')).split('\n').filter((l) => l && (!a || l.includes(a)) && (!b || l.includes(b))).length;
    fs.mkdir('instances/test1');
    fs.mkdir('instances/test2');
    const total = await count();
    const time = await count('time');
    const clock = await count('clock');
    const setFgraph = async (i: string, filter: string, notrace: string) => {
      await echo(fs, `${i}/set_ftrace_filter`, `${filter}\n`);
      await echo(fs, `${i}/set_ftrace_notrace`, `${notrace}\n`);
      await echo(fs, `${i}/current_tracer`, 'function_graph\n');
    };
    await setFgraph('instances/test1', '*sched*', '*time*');
    expect(await count('time')).toBeLessThanOrEqual(time);
    const i1 = await count();
    expect(i1).toBeGreaterThan(0);
    await setFgraph('instances/test2', '*lock*', '*clock*');
    const i12 = await count();
    await echo(fs, 'instances/test1/current_tracer', 'nop\n');
    expect(await count('clock')).toBeLessThanOrEqual(clock);
    const i2 = await count();
    await echo(fs, 'instances/test2/current_tracer', 'nop\n');
    expect(await count()).toBeLessThanOrEqual(total);
    await setFgraph('instances/test2', '*lock*', '*clock*');
    expect(await count()).toBe(i2);
    await setFgraph('instances/test1', '*sched*', '*time*');
    expect(await count()).toBe(i12);
    await echo(fs, 'instances/test2/current_tracer', 'nop\n');
    expect(await count()).toBe(i1);
    await echo(fs, 'instances/test1/current_tracer', 'nop\n');
    expect(await count()).toBe(0);
    await setFgraph('instances/test1', '', '*locks*');
    await setFgraph('instances/test2', '', '*clock*');
    expect(await count('locks', 'clock')).toBe(0);
    for (const i of ['test1', 'test2']) {
      await echo(fs, `instances/${i}/current_tracer`, 'nop\n');
      fs.rmdir(`instances/${i}`);
    }
    expect(await read('enabled_functions')).toBe('');
  });

  it('fgraph-multi: each instance traces only its own filter; rmdir takes its probes along', async () => {
    const { fs, read, kernel, root } = setup();
    const shell = kernel.tasks.get(root.pid)!;
    fs.mkdir('instances/a');
    expect(await read('instances/a/available_tracers')).toBe('function_graph function nop\n');
    await echo(fs, 'set_ftrace_filter', '*sched*\n');
    await echo(fs, 'current_tracer', 'function_graph\n');
    await echo(fs, 'instances/a/set_ftrace_filter', '*lock*\n');
    await echo(fs, 'instances/a/current_tracer', 'function_graph\n');
    run(kernel, shell, ['schedule', ['__schedule', '_raw_spin_lock', '_raw_spin_unlock', 'update_rq_clock']]);
    const graphLines = async (p: string) => (await read(p)).split('\n').filter((l) => !l.startsWith('#') && /[{;]/.test(l));
    const top = await graphLines('trace');
    const inst = await graphLines('instances/a/trace');
    expect(top.length).toBeGreaterThan(0);
    expect(top.every((l) => l.includes('sched'))).toBe(true);
    expect(inst.length).toBeGreaterThan(0);
    expect(inst.every((l) => l.includes('lock'))).toBe(true);
    await echo(fs, 'instances/a/set_ftrace_filter', 'schedule:traceoff\n', true);
    expect(await read('set_ftrace_filter')).not.toMatch(/traceoff/);
    await echo(fs, 'instances/a/current_tracer', 'nop\n');
    fs.rmdir('instances/a');
    await echo(fs, 'current_tracer', 'nop\n');
    expect(await read('enabled_functions')).toBe('');
  });
});
