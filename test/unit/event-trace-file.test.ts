import { describe, expect, it } from 'vitest';
import { ctxOf } from '../helpers/events.js';
import { echo } from '../helpers/tracefs.js';
import { testEmulator } from '../helpers/emulator.js';

describe('events in the trace file', () => {
  it('shows a fired event in the kernel line layout, and filters drop records', async () => {
    const { fs, kernel } = testEmulator();
    await echo(fs, 'events/sched/sched_wakeup/enable', '1\n');
    await echo(fs, 'events/sched/sched_wakeup/filter', 'pid != 8\n');
    const ctx = ctxOf(42, 'bash', 1);
    kernel.tasks.add(ctx.task);
    kernel.tracepoints.fire('sched_wakeup', ctx, { comm: 'kworker/1:0', pid: 7, prio: 120, target_cpu: 1 });
    kernel.tracepoints.fire('sched_wakeup', ctx, { comm: 'kworker/1:1', pid: 8, prio: 120, target_cpu: 1 });
    const lines = (await fs.readFile('trace')).split('\n').filter((l) => l && !l.startsWith('#'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ +bash-42 +\[001\] \.\.\.\.\. +\d+\.\d{6}: sched_wakeup: comm=kworker\/1:0 pid=7 prio=120 target_cpu=001$/);
  });

  it('runs ftrace/print triggers on trace_marker writes', async () => {
    const { fs, tracing } = testEmulator();
    await echo(fs, 'events/ftrace/print/trigger', 'traceoff if buf == "stop"\n');
    await echo(fs, 'trace_marker', 'go\n');
    expect(tracing.top.tracingOn).toBe(true);
    await echo(fs, 'trace_marker', 'stop');
    expect(tracing.top.tracingOn).toBe(false);
  });
});
