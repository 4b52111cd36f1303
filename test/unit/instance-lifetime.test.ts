/**
 * rmdir instances/NAME lets the instance go: Tracing.removeInstance() undoes
 * everything it had (its tracer, function probes and filters, pid lists,
 * events with their filters and triggers, what it registered to follow
 * tracers and event types) and nothing shared keeps its file tree, event
 * files or ring buffers alive. Each ftracetest run makes and removes
 * instances; anything left behind grew the daemon past its heap limit.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { nopTracer } from '../../src/trace/tracer.js';
import type { TraceArray } from '../../src/trace/trace_array.js';
import { setup } from '../helpers/tracefs.js';

/** The collector, reachable without --expose-gc on the command line. */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Collects until `ref` is gone (or a few rounds passed: something still holds it). */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 10 && ref.deref() !== undefined; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
  return ref.deref() === undefined;
}

describe('instance lifetime', () => {
  it('a later tracer reaches only live arrays', async () => {
    const { fs, tracing, read } = setup();
    fs.mkdir('instances/a');
    fs.mkdir('instances/b');
    fs.rmdir('instances/a');
    tracing.tracers.register({ ...nopTracer, name: 'emu_test', options: [{ name: 'emu_test_opt', default: false }] });
    expect(await read('instances/b/options/emu_test_opt')).toBe('0\n');
    expect([...tracing.arrays()].map((tr) => tr.name)).toEqual(['', 'b']);
  });

  it('a removed instance with events, a tracer, filters, pid lists and triggers is collected', async () => {
    const { fs, tracing, write, read, root } = setup();
    const life = tracing.kernel.taskLifecycle;
    const hooks = () => [life.forked.size, life.exited.size, tracing.ftrace.opsList.length];
    const before = hooks();
    fs.mkdir('instances/a');
    const d = 'instances/a/';
    let ref: WeakRef<TraceArray>;
    {
      ref = new WeakRef(tracing.instances.get('a')!);
      await write(`${d}events/sched/sched_switch/enable`, '1');
      await write(`${d}events/sched/sched_wakeup/filter`, 'pid != 0');
      await write(`${d}events/sched/sched_wakeup/enable`, '1');
      await write(`${d}events/sched/sched_process_fork/trigger`, 'traceoff');
      await write(`${d}events/sched/sched_process_exit/trigger`, 'hist:keys=pid');
      await write(`${d}set_event_pid`, `${root.pid}`);
      await write(`${d}options/event-fork`, '1');
      await write(`${d}set_ftrace_filter`, 'vfs_read');
      await write(`${d}set_ftrace_filter`, 'vfs_write:traceoff', root, true);
      await write(`${d}set_ftrace_filter`, 'ksys_read:enable_event:sched:sched_waking', root, true);
      await write(`${d}set_ftrace_pid`, `${root.pid}`);
      await write(`${d}options/function-fork`, '1');
      await write(`${d}current_tracer`, 'function');
      await write('kprobe_events', 'p:kp vfs_read');
      await write(`${d}events/kprobes/kp/enable`, '1');
      expect(await read(`${d}set_ftrace_filter`)).toContain('vfs_write:traceoff:unlimited');
      expect(tracing.ftrace.opsList.length).toBeGreaterThan(0);
    }
    fs.rmdir('instances/a');
    // Nothing of it stays registered where the kernel and the top level look.
    expect(hooks()).toEqual(before);
    expect(tracing.kernel.tracepoints.enabled('sched_switch')).toBe(false);
    expect(tracing.kernel.tracepoints.enabled('sched_wakeup')).toBe(false);
    // The kprobe event it had on is idle: it can go.
    await write('kprobe_events', '-:kp', root, true);
    expect(await collected(ref)).toBe(true);
  });
});
