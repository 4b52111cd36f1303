/**
 * In-process replays of fgraph-filter.tc, fgraph-filter-stack.tc and
 * func_cpumask.tc with a stub activity (schedule on two CPUs, forks).
 */
import { describe, expect, it } from 'vitest';
import { Task } from '../../src/kernel/task.js';
import type { Kernel } from '../../src/kernel/kernel.js';
import { READ_PROC_VERSION, run, withStack } from '../helpers/ftrace-driver.js';
import { echo, setup } from '../helpers/tracefs.js';

/** A little of everything, on both CPUs. */
function activity(kernel: Kernel, tasks: Task[]): void {
  for (const t of tasks) {
    run(kernel, t, ['schedule', ['__schedule', '_raw_spin_lock', 'update_rq_clock', 'psi_task_switch', '_raw_spin_unlock']]);
    run(kernel, t, READ_PROC_VERSION);
    run(kernel, t, ['__do_sys_clone', ['kernel_clone', ['copy_process', '_raw_spin_lock', '_raw_spin_unlock']]]);
  }
}

function tasks(kernel: Kernel): Task[] {
  return [0, 1].map((cpu) => {
    const t = withStack(kernel.tasks.add(new Task(7000 + cpu, 7000 + cpu, `kworker/${cpu}:1`, 2)));
    t.cpu = cpu;
    return t;
  });
}

describe('test.d/ftrace graph replays', () => {
  for (const withStackTracer of [false, true]) {
    it(`fgraph-filter${withStackTracer ? '-stack' : ''}: only schedule() in the graph`, async () => {
      const { fs, read, kernel, ftrace } = setup();
      const ts = tasks(kernel);
      await echo(fs, 'tracing_on', '0\n');
      await echo(fs, 'trace', '\n');
      await echo(fs, 'set_ftrace_filter', 'schedule\n');
      await echo(fs, 'current_tracer', 'function_graph\n');
      if (withStackTracer) ftrace.stackTracer.setEnabled(true);
      await echo(fs, 'tracing_on', '1\n');
      activity(kernel, ts);
      const t = await read('trace');
      expect(t.split('\n').filter((l) => l.includes('()') && !l.includes('schedule'))).toEqual([]);
      expect(t.split('\n').filter((l) => l.includes('schedule()')).length).toBeGreaterThan(0);
      if (withStackTracer) {
        ftrace.stackTracer.setEnabled(false);
        await echo(fs, 'trace', '\n');
        activity(kernel, ts);
        const u = await read('trace');
        expect(u.split('\n').filter((l) => l.includes('()') && !l.includes('schedule'))).toEqual([]);
        expect(u.split('\n').filter((l) => l.includes('schedule()')).length).toBeGreaterThan(0);
      }
    });
  }

  it('func_cpumask: only CPU 1 recorded with tracing_cpumask 2', async () => {
    const { fs, read, kernel } = setup();
    const ts = tasks(kernel);
    await echo(fs, 'tracing_on', '0\n');
    await echo(fs, 'trace', '\n');
    await echo(fs, 'tracing_cpumask', '2\n');
    expect(await read('tracing_cpumask')).toBe('2\n');
    await echo(fs, 'current_tracer', 'function\n');
    await echo(fs, 'tracing_on', '1\n');
    activity(kernel, ts);
    await echo(fs, 'tracing_on', '0\n');
    const lines = (await read('trace')).split('\n').filter((l) => l && !l.startsWith('#'));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.includes('[001]'))).toBe(true);
    await echo(fs, 'tracing_cpumask', '3\n');
    await echo(fs, 'current_tracer', 'nop\n');
  });
});
