/**
 * Subtrees nothing can see are not run call by call (subtree.ts): what the
 * hooked functions see is the same as when every call runs — who calls
 * them, from how deep, with which preempt count and interrupt depth — while
 * far fewer calls are executed.
 */
import { describe, expect, it } from 'vitest';
import type { PtRegs } from '../../src/kernel/regs.js';
import { Task } from '../../src/kernel/task.js';
import { kernelEmu } from '../helpers/kernel.js';

function lives(skipping: boolean, hooked: RegExp, tracepoints: string[] = []) {
  const { k } = kernelEmu({ virtualClock: true });
  k.runner.subtrees.skipping = skipping;
  const seen: string[] = [];
  for (const f of k.symbols.traceable()) if (hooked.test(f.name)) k.exec.patchFentry(f.id, true);
  k.exec.fentry = (ip: bigint, parent: bigint, _regs: PtRegs, task: Task) => {
    const stack = task.frames.map((x) => x.fn.name).join('>');
    seen.push(`${k.symbols.lookup(ip)!.sym.name} from ${k.symbols.lookup(parent)?.sym.name} pc=${task.preemptCount.toString(16)} irqs=${task.irqsOff} ${stack}`);
  };
  for (const tp of tracepoints) k.tracepoints.register(tp, ((_c: unknown, a: Record<string, unknown>) => seen.push(`${tp} ${JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`)) as never);
  const sh = k.tasks.add(new Task(4000, 4000, 'sh', 1));
  for (let i = 0; i < 3; i++) {
    const child = k.tasks.add(new Task(4001 + i, 4001 + i, 'sh', 4000));
    k.procs.fork(sh, child);
    k.procs.exec(child, '/usr/bin/cat', 'cat');
    k.procs.exit(child, 0);
    k.procs.reap(sh, child);
  }
  return { seen, calls: k.exec.calls, skipped: k.runner.skipped };
}

describe('subtrees nothing can see', () => {
  it.each([
    ['one function of exec', /^do_execveat_common(\.isra\.0)?$/, []],
    ['fork and a lock taken everywhere', /^(kernel_clone|copy_process|_raw_spin_lock)$/, []],
    ['a tracepoint fired deep in the trees', /^do_exit$/, ['kmem_cache_alloc', 'sched_process_exec']],
  ] as const)('%s: hooked functions see what they see when every call runs', (_what, hooked, tps) => {
    const all = lives(false, hooked, [...tps]);
    const skip = lives(true, hooked, [...tps]);
    expect(all.seen.length).toBeGreaterThan(2);
    expect(skip.seen).toEqual(all.seen);
    expect(all.skipped).toBe(0);
    expect(skip.skipped).toBeGreaterThan(0);
    expect(skip.calls).toBeLessThan(all.calls);
  });

  it('runs a tenth of the calls or less when one function is hooked', () => {
    const all = lives(false, /^do_execveat_common(\.isra\.0)?$/);
    const skip = lives(true, /^do_execveat_common(\.isra\.0)?$/);
    expect(skip.calls * 10).toBeLessThan(all.calls);
  });
});
