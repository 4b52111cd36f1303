/**
 * func_event_triggers.tc in process: enable_event / disable_event commands on
 * schedule switch sched_switch's soft mode, counted or not, at the top level
 * and in an instance. Runs once the event layer (tracing.events) is present.
 */
import { describe, expect, it } from 'vitest';
import { run } from '../helpers/ftrace-driver.js';
import { echo, setup } from '../helpers/tracefs.js';

const hasEvents = 'events' in setup().tracing;

describe('enable_event / disable_event commands', () => {
  it.runIf(hasEvents)('switch sched_switch on and off from schedule, counted or not', async () => {
    const ctx = setup();
    const task = ctx.kernel.tasks.get(ctx.root.pid)!;
    const sched = () => run(ctx.kernel, task, ['schedule', '__schedule']);
    ctx.fs.mkdir('instances/foo');
    for (const d of ['', 'instances/foo/']) {
      for (const [cmd, off, on] of [
        ['enable', '0', '1*'],
        ['disable', '1', '0*'],
      ] as const) {
        const en = `${d}events/sched/sched_switch/enable`;
        const offStar = `${off}*\n`;
        await echo(ctx.fs, en, `${off}\n`);
        await echo(ctx.fs, `${d}set_ftrace_filter`, `schedule:${cmd}_event:sched:sched_switch\n`);
        expect(await ctx.read(en)).toBe(offStar);
        for (let i = 0; i < 5; i++) {
          sched();
          expect(await ctx.read(en)).toBe(`${on}\n`);
          await echo(ctx.fs, en, `${off}\n`);
        }
        await echo(ctx.fs, `${d}set_ftrace_filter`, `!schedule:${cmd}_event:sched:sched_switch\n`);
        await echo(ctx.fs, en, `${off}\n`);
        await echo(ctx.fs, `${d}set_ftrace_filter`, `schedule:${cmd}_event:sched:sched_switch:3\n`);
        for (let i = 0; i < 3; i++) {
          sched();
          expect(await ctx.read(en)).toBe(`${on}\n`);
          await echo(ctx.fs, en, `${off}\n`);
        }
        sched();
        expect(await ctx.read(en)).toBe(offStar);
        expect(await ctx.read(`${d}set_ftrace_filter`)).toMatch(new RegExp(`^schedule:${cmd}_event:sched:sched_switch:count=0$`, 'm'));
        await echo(ctx.fs, `${d}set_ftrace_filter`, `!schedule:${cmd}_event:sched:sched_switch:0\n`);
        expect(await ctx.read(en)).toBe(`${off}\n`);
      }
    }
    // instance-event.tc: an instance with an enable_event probe can go.
    await echo(ctx.fs, 'instances/foo/set_ftrace_filter', 'schedule:enable_event:sched:sched_switch\n');
    ctx.fs.rmdir('instances/foo');
    expect(await ctx.read('set_ftrace_filter')).not.toMatch(/enable_event/);
  });
});
