import { describe, expect, it } from 'vitest';
import { Kernel } from '../../src/kernel/kernel.js';
import { Task } from '../../src/kernel/task.js';
import { FTRACE_FL_DISABLED, FTRACE_FL_MODIFIED, FTRACE_FL_TOUCHED } from '../../src/ftrace/dyn_ftrace.js';
import { type FgraphEntryFunc, FgraphOps, type FgraphRetFunc } from '../../src/ftrace/fgraph.js';
import { Ftrace } from '../../src/ftrace/ftrace.js';
import { FTRACE_OPS_FL_DYNAMIC, FTRACE_OPS_FL_RECURSION, FTRACE_OPS_FL_SAVE_REGS, FtraceOps } from '../../src/ftrace/ftrace_ops.js';
import { SHADOW_STACK_MAX_OFFSET } from '../../src/ftrace/shadow_stack.js';
import { KernelError } from '../../src/kernel/errno.js';
import { notifyExit, notifyFork, run } from '../helpers/ftrace-driver.js';

function setup() {
  const kernel = new Kernel({ cpus: 2 });
  const ftrace = new Ftrace(kernel);
  const { fgraph } = ftrace;
  const task = kernel.tasks.add(new Task(200, 200, 'deep', 1));
  const id = (name: string) => kernel.symbols.byName(name)[0].id;
  return { kernel, ftrace, fgraph, task, id };
}

function gopsOn(ids: number[], entry: FgraphEntryFunc = () => true, ret: FgraphRetFunc = () => {}): FgraphOps {
  const g = new FgraphOps({ entryfunc: entry, retfunc: ret, entrySym: 'trace_graph_entry', retSym: 'trace_graph_return' });
  for (const i of ids) g.ops.funcHash.filter.add(i);
  return g;
}

/** A call chain of `depth` nested calls of one function. */
function recursion(fn: string, depth: number): string | [string, ...unknown[]] {
  let t: string | [string, ...unknown[]] = fn;
  for (let i = 1; i < depth; i++) t = [fn, t];
  return t;
}

describe('fgraph', () => {
  it('takes 16 fgraph_ops and refuses the 17th with ENOSPC; a released slot is reused', () => {
    const { fgraph, id } = setup();
    const all = Array.from({ length: 16 }, () => gopsOn([id('vfs_read')]));
    for (const g of all) fgraph.register(g);
    expect(all.map((g) => g.idx)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    const extra = gopsOn([id('vfs_read')]);
    expect(() => fgraph.register(extra)).toThrow(KernelError);
    try {
      fgraph.register(extra);
    } catch (e) {
      expect((e as KernelError).code).toBe('ENOSPC');
    }
    fgraph.unregister(all[3]);
    fgraph.register(extra);
    expect(extra.idx).toBe(3);
    for (const g of [...all.filter((_, i) => i !== 3), extra]) fgraph.unregister(g);
    expect(fgraph.active).toBe(0);
  });

  it('counts overruns when the shadow stack is full, calls nothing for those calls, restores every return', () => {
    const { kernel, fgraph, task, id, ftrace } = setup();
    let entries = 0;
    let returns = 0;
    const g = gopsOn([id('dput')], () => (entries++, true), () => returns++);
    fgraph.register(g);
    const depth = 200;
    run(kernel, task, recursion('dput', depth) as never);
    // Each frame costs 4 longs (3 frame words + the bitmap word); a push needs 4 below the limit.
    const frames = Math.floor((SHADOW_STACK_MAX_OFFSET - 4 - 1) / 4) + 1;
    expect(entries).toBe(frames);
    expect(returns).toBe(frames);
    expect(ftrace.tasks.of(task).traceOverrun).toBe(depth - frames);
    expect(ftrace.tasks.of(task).currRetStack).toBe(0);
    expect(ftrace.exec.corruptions).toBe(0);
    expect(fgraph.frames(task)).toEqual([]);
    fgraph.unregister(g);
  });

  it('reports the overrun count to return callbacks', () => {
    const { kernel, fgraph, task, id } = setup();
    const overruns: number[] = [];
    const g = gopsOn([id('dput')], () => true, (t) => overruns.push(t.overrun));
    fgraph.register(g);
    run(kernel, task, recursion('dput', 130) as never);
    expect(overruns.length).toBe(122);
    expect(overruns[0]).toBe(130 - 122);
    fgraph.unregister(g);
  });

  it('keeps per-ops data for the return callback (fgraph_reserve_data / fgraph_retrieve_data), up to 256 bytes', () => {
    const { kernel, fgraph, task, id } = setup();
    const got: bigint[] = [];
    const a: FgraphOps = gopsOn(
      [id('vfs_read')],
      () => {
        const at = fgraph.reserveData(task, a.idx, 16);
        expect(at).toBeGreaterThanOrEqual(0);
        const s = fgraph.stackOf(task)!;
        s[at] = 0x1111n;
        s[at + 1] = 0x2222n;
        expect(fgraph.reserveData(task, a.idx, 257)).toBe(-1);
        return true;
      },
      () => {
        const d = fgraph.retrieveData(task, a.idx)!;
        expect(d.bytes).toBe(16);
        const s = fgraph.stackOf(task)!;
        got.push(s[d.index], s[d.index + 1]);
      },
    );
    const b = gopsOn([id('vfs_read')], () => true, () => got.push(fgraph.retrieveData(task, b.idx) ? 1n : 0n));
    fgraph.register(a);
    fgraph.register(b);
    run(kernel, task, ['ksys_read', 'vfs_read']);
    expect(got.sort()).toEqual([0n, 0x1111n, 0x2222n]);
    fgraph.unregister(a);
    fgraph.unregister(b);
  });

  it('gives every task a stack on first registration, forked tasks at fork, and frees them at exit', () => {
    const { kernel, fgraph, task, id } = setup();
    const g = gopsOn([id('vfs_read')]);
    fgraph.register(g);
    expect(fgraph.stackOf(task)).not.toBeNull();
    expect(fgraph.stackOf(kernel.tasks.idle[1])).not.toBeNull();
    const child = kernel.tasks.add(new Task(201, 201, 'child', 200));
    notifyFork(kernel, child, task);
    expect(fgraph.stackOf(child)).not.toBeNull();
    const before = fgraph.stackUsage().tasks;
    notifyExit(kernel, child);
    expect(fgraph.stackOf(child)).toBeNull();
    expect(fgraph.stackUsage().tasks).toBe(before - 1);
    fgraph.unregister(g);
    // Stacks stay with their tasks after the last user goes.
    expect(fgraph.stackOf(task)).not.toBeNull();
  });

  it('watches sched_switch only while it has a user, so a kernel it leaves is unobserved again', () => {
    const { kernel, fgraph, id } = setup();
    const [a, b] = [gopsOn([id('vfs_read')]), gopsOn([id('vfs_write')])];
    expect(kernel.tracepoints.enabled('sched_switch')).toBe(false);
    fgraph.register(a);
    fgraph.register(b);
    expect(kernel.tracepoints.enabled('sched_switch')).toBe(true);
    fgraph.unregister(a);
    expect(kernel.tracepoints.enabled('sched_switch')).toBe(true);
    fgraph.unregister(b);
    expect(kernel.tracepoints.enabled('sched_switch')).toBe(false);
    expect(kernel.observed()).toBe(false);
    fgraph.register(a);
    expect(kernel.tracepoints.enabled('sched_switch')).toBe(true);
    fgraph.unregister(a);
  });

  it('leaves no stale record after ops and fgraph users come and go in any order', () => {
    const { kernel, ftrace, fgraph, task, id } = setup();
    const names = ['vfs_read', 'vfs_write', 'schedule', 'dput', 'kernel_clone', 'ksys_read'];
    const rnd = (() => {
      let x = 12345;
      return () => ((x = (x * 1103515245 + 12345) >>> 0), x / 2 ** 32);
    })();
    const flagsList = [0, FTRACE_OPS_FL_SAVE_REGS, FTRACE_OPS_FL_RECURSION, FTRACE_OPS_FL_DYNAMIC];
    for (let round = 0; round < 20; round++) {
      const users: (() => void)[] = [];
      for (let i = 0; i < 6; i++) {
        const pick = names.filter(() => rnd() < 0.5).map(id);
        if (rnd() < 0.5) {
          const op = new FtraceOps({ func: () => {}, funcSym: 'function_trace_call', flags: flagsList[Math.floor(rnd() * 4)] });
          for (const p of pick) op.funcHash.filter.add(p);
          if (rnd() < 0.3) op.funcHash.notrace.add(id('schedule'));
          ftrace.register(op);
          users.push(() => ftrace.unregister(op));
        } else {
          const g = gopsOn(pick);
          if (rnd() < 0.3) g.ops.funcHash.notrace.add(id('dput'));
          fgraph.register(g);
          users.push(() => fgraph.unregister(g));
        }
        run(kernel, task, ['ksys_read', ['vfs_read', 'dput', 'schedule']]);
      }
      while (users.length) users.splice(Math.floor(rnd() * users.length), 1)[0]();
      expect(ftrace.opsList).toEqual([]);
      expect(fgraph.graphOps.subops).toEqual([]);
      // (the records of modules not loaded stay disabled)
      for (const f of ftrace.records.flags) expect(f & ~(FTRACE_FL_TOUCHED | FTRACE_FL_MODIFIED | FTRACE_FL_DISABLED)).toBe(0);
      expect(ftrace.exec.fentryPatched.every((x) => x === 0)).toBe(true);
    }
    expect(ftrace.exec.corruptions).toBe(0);
  });
});
