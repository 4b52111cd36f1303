/**
 * fprobe (fgraph on 7.2, rethook on 6.12), kretprobes (rethook) and the
 * ways they meet: validation on return after unregister, session skip,
 * entry data and E2BIG, shadow-stack overrun and miss accounting, the 17th
 * fgraph user, maxactive exhaustion under recursion and concurrency,
 * double hooking in both orders, and returns never corrupted.
 */
import { describe, expect, it } from 'vitest';
import { FgraphOps } from '../../src/ftrace/fgraph.js';
import { Fprobe, registerFprobe, unregisterFprobe, type FprobeEntry } from '../../src/ftrace/fprobe.js';
import { FprobeGraph } from '../../src/ftrace/fprobe_fgraph.js';
import { Ftrace } from '../../src/ftrace/ftrace.js';
import { Kprobe } from '../../src/ftrace/kprobe.js';
import { Kretprobe } from '../../src/ftrace/kretprobes.js';
import type { Call } from '../../src/kernel/executor.js';
import { sprintSymbol } from '../../src/kernel/kallsyms.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { profileOf, SERIES, type Series } from '../../src/kernel/series.js';
import { Task } from '../../src/kernel/task.js';
import { withStack } from '../helpers/ftrace-driver.js';

let pid = 500;

function setup(series: Series = '7.2') {
  const kernel = new Kernel({ cpus: 2, series });
  const task = withStack(kernel.tasks.add(new Task(pid, pid++, 'cat', 1)));
  const ftrace = new Ftrace(kernel);
  const exec = ftrace.exec;
  const sym = (a: bigint) => {
    if (a === ftrace.rethooks.trampoline) return "[unknown/kretprobe'd]";
    return sprintSymbol(kernel.symbols, a).replace(/\/0x[0-9a-f]+$/, '');
  };
  /** ksys_read → vfs_read (whose body is `body`, returning `ret`). */
  const read = (t: Task = task, body?: (x: Call) => void, ret = 62) =>
    exec.call(t, 'ksys_read', [], (x) => x.call('vfs_read', [3, 0x1000, 1024], (y) => (body?.(y), ret)));
  const newTask = () => withStack(kernel.tasks.add(new Task(pid, pid++, 'worker', 1)));
  return { kernel, ftrace, task, exec, sym, read, newTask, kp: ftrace.kprobes };
}

/** `fn` calling itself `depth` times in `task`. */
function recurse(ftrace: Ftrace, task: Task, fn: string, depth: number): void {
  const exec = ftrace.exec;
  const go = (x: Call | null, d: number): unknown => {
    const body = (c: Call) => (d > 1 ? (go(c, d - 1), 0) : 0);
    return x ? x.call(fn, [], body) : exec.call(task, fn, [], body);
  };
  go(null, depth);
}

describe.each(SERIES)('fprobe semantics (%s)', (series) => {
  it('does not call the exit handler of an fprobe unregistered between entry and return', () => {
    const { ftrace, read, exec } = setup(series);
    let exits = 0;
    const fp = new Fprobe({ exit: () => void exits++ });
    registerFprobe(ftrace, fp, 'vfs_read');
    read(undefined, () => unregisterFprobe(ftrace, fp));
    expect(exits).toBe(0);
    // A second fprobe registered meanwhile on the same function is not confused with the first.
    const fp2 = new Fprobe({ exit: () => void exits++ });
    registerFprobe(ftrace, fp, 'vfs_read');
    read(undefined, () => {
      unregisterFprobe(ftrace, fp);
      registerFprobe(ftrace, fp2, 'vfs_read');
    });
    expect(exits).toBe(0);
    read();
    expect(exits).toBe(1);
    expect(exec.corruptions).toBe(0);
    unregisterFprobe(ftrace, fp2);
  });

  it('session: an entry handler returning non-zero skips its own exit, without a miss', () => {
    const { ftrace, read, exec } = setup(series);
    const log: string[] = [];
    let n = 0;
    const entry: FprobeEntry = (_fp, _ip, _ret, _regs, data) => {
      const skip = n++ % 2 === 1;
      data!.writeBigUInt64LE(BigInt(n) * 0x1000n);
      return skip ? 1 : 0;
    };
    const fp = new Fprobe({ entry, exit: (_fp, _ip, _ret, _regs, data) => void log.push(data!.readBigUInt64LE().toString(16)), entryDataSize: 8 });
    const other = new Fprobe({ entry: () => 1, exit: () => void log.push('other') });
    registerFprobe(ftrace, fp, 'vfs_read');
    registerFprobe(ftrace, other, 'vfs_read');
    for (let i = 0; i < 4; i++) read();
    expect(log).toEqual(['1000', '3000']);
    expect(fp.nmissed).toBe(0);
    expect(other.nmissed).toBe(0);
    expect(exec.corruptions).toBe(0);
  });

  it('passes the entry data to both handlers, per call, through nested calls', () => {
    const { ftrace, task, exec } = setup(series);
    const seen: number[] = [];
    let depth = 0;
    const fp = new Fprobe({
      entry: (_fp, _ip, _ret, _regs, data) => void data!.writeUInt32LE(++depth, 4),
      exit: (_fp, _ip, _ret, _regs, data) => void seen.push(data!.readUInt32LE(4)),
      entryDataSize: 12,
    });
    registerFprobe(ftrace, fp, 'dput');
    recurse(ftrace, task, 'dput', 3);
    expect(seen).toEqual([3, 2, 1]);
    expect(exec.corruptions).toBe(0);
  });

  it('matches globs and names; ENOENT / EINVAL when nothing matches', () => {
    const { kernel, ftrace } = setup(series);
    const fp = new Fprobe({ entry: () => {} });
    registerFprobe(ftrace, fp, 'vfs_rea? vfs_writ[e]', 'vfs_readv');
    expect(fp.functions.map((f) => f.name).sort()).toEqual(['vfs_read', 'vfs_write']);
    unregisterFprobe(ftrace, fp);
    registerFprobe(ftrace, fp, ['vfs_read', 'vfs_write']);
    expect(fp.functions.length).toBe(2);
    expect(() => registerFprobe(ftrace, fp, 'vfs_read')).toThrow(kernel.profile.fprobeReregisterErrno);
    unregisterFprobe(ftrace, fp);
    expect(() => registerFprobe(ftrace, fp, 'no_such_fn_*')).toThrow(kernel.profile.fprobeNoMatchErrno);
    expect(() => registerFprobe(ftrace, fp, ['no_such_fn'])).toThrow('ENOENT');
    expect(() => unregisterFprobe(ftrace, fp)).toThrow('EINVAL');
  });
});

describe('fprobe on fgraph (7.2)', () => {
  it('refuses entry data over 120 bytes with E2BIG (aligned to longs)', () => {
    const { ftrace } = setup();
    expect(() => registerFprobe(ftrace, new Fprobe({ exit: () => {}, entryDataSize: 121 }), 'vfs_read')).toThrow('E2BIG');
    const ok = new Fprobe({ exit: () => {}, entryDataSize: 113 });
    registerFprobe(ftrace, ok, 'vfs_read');
    expect(ok.entryDataSize).toBe(120);
  });

  it('keeps one header word (pointer | size << 60) per fprobe on the shadow stack', () => {
    const { ftrace, task, read } = setup();
    const fgraph = ftrace.fgraph;
    const a = new Fprobe({ exit: () => {}, entryDataSize: 16 });
    const b = new Fprobe({ exit: () => {} });
    registerFprobe(ftrace, a, 'vfs_read');
    registerFprobe(ftrace, b, 'vfs_read');
    let words: bigint[] = [];
    read(undefined, () => {
      const gops = (ftrace.fprobeBackend as FprobeGraph).graphOps;
      const d = fgraph.retrieveParentData(task, gops.idx, 0)!;
      const s = fgraph.stackOf(task)!;
      words = Array.from(s.subarray(d.index, d.index + d.bytes / 8));
    });
    // Newest first: b (no data), then a (2 longs of data).
    expect(words.length).toBe(4);
    expect(words[0]).toBe(b.ptr & ((1n << 60n) - 1n));
    expect(words[1]).toBe((2n << 60n) | (a.ptr & ((1n << 60n) - 1n)));
  });

  it('counts a failed reservation as a miss of every exit fprobe, and skips their entry handlers too', () => {
    const { ftrace, task, exec } = setup();
    let entries = 0;
    let exits = 0;
    const fp = new Fprobe({ entry: () => void entries++, exit: () => void exits++, entryDataSize: 120 });
    registerFprobe(ftrace, fp, 'dput');
    recurse(ftrace, task, 'dput', 100);
    // A frame costs 4 longs, the header and data 16 plus a meta word: 21; 23 fit under 492.
    expect(entries).toBe(23);
    expect(exits).toBe(23);
    expect(fp.nmissed).toBe(77);
    expect(ftrace.tasks.of(task).traceOverrun).toBe(0);
    expect(exec.corruptions).toBe(0);
  });

  it('one exit fprobe: 81 frames fit (6 longs each), deeper calls miss their reservation', () => {
    const { ftrace, task, exec } = setup();
    let exits = 0;
    const fp = new Fprobe({ exit: () => void exits++ });
    registerFprobe(ftrace, fp, 'dput');
    recurse(ftrace, task, 'dput', 100);
    // The 82nd frame fits (486 + 4 < 492) but its 2 words of data do not (490 + 2 >= 492).
    expect(exits).toBe(81);
    expect(fp.nmissed).toBe(19);
    expect(ftrace.tasks.of(task).traceOverrun).toBe(0);
    expect(exec.corruptions).toBe(0);
  });

  it('a full shadow stack is an fgraph overrun, not an fprobe miss', () => {
    const { kernel, ftrace, task, exec } = setup();
    const fgraph = ftrace.fgraph;
    const deep = new FgraphOps({ entryfunc: () => true, retfunc: () => {}, entrySym: 'trace_graph_entry', retSym: 'trace_graph_return' });
    deep.ops.funcHash.filter.add(kernel.symbols.byName('dput')[0].id);
    fgraph.register(deep);
    let exits = 0;
    const fp = new Fprobe({ exit: () => void exits++ });
    registerFprobe(ftrace, fp, 'vfs_read');
    const go = (x: Call | null, d: number): unknown => {
      const body = (c: Call) => (d > 1 ? go(c, d - 1) : c.call('vfs_read'), 0);
      return x ? x.call('dput', [], body) : exec.call(task, 'dput', [], body);
    };
    go(null, 130);
    expect(exits).toBe(0);
    expect(fp.nmissed).toBe(0);
    expect(ftrace.tasks.of(task).traceOverrun).toBe(130 - 122 + 1);
    expect(exec.corruptions).toBe(0);
  });

  it('the 17th fgraph user: the first exit fprobe gets ENOSPC, entry-only fprobes still work', () => {
    const { ftrace, read } = setup();
    const fgraph = ftrace.fgraph;
    const others = Array.from({ length: 16 }, () => new FgraphOps({ entryfunc: () => false, retfunc: () => {}, entrySym: 'trace_graph_entry', retSym: 'trace_graph_return' }));
    for (const g of others) fgraph.register(g);
    const exitFp = new Fprobe({ exit: () => {} });
    expect(() => registerFprobe(ftrace, exitFp, 'vfs_read')).toThrow('ENOSPC');
    expect(exitFp.registered).toBe(false);
    let entries = 0;
    const entryFp = new Fprobe({ entry: () => void entries++ });
    registerFprobe(ftrace, entryFp, 'vfs_read');
    read();
    expect(entries).toBe(1);
    // With a slot free, exit fprobes share one fgraph_ops: a second one needs no slot.
    fgraph.unregister(others[0]);
    registerFprobe(ftrace, exitFp, 'vfs_read');
    expect(() => fgraph.register(others[0])).toThrow('ENOSPC');
    const exitFp2 = new Fprobe({ exit: () => {} });
    registerFprobe(ftrace, exitFp2, 'vfs_write');
    expect(fgraph.active).toBe(16);
  });

  it('an ip leaves a backend filter only when no fprobe of that kind remains on it', () => {
    const { kernel, ftrace } = setup();
    const b = (ftrace.fprobeBackend as FprobeGraph);
    const id = kernel.symbols.byName('vfs_read')[0].id;
    const e1 = new Fprobe({ entry: () => {} });
    const e2 = new Fprobe({ entry: () => {} });
    const x1 = new Fprobe({ exit: () => {} });
    registerFprobe(ftrace, e1, 'vfs_read');
    registerFprobe(ftrace, e2, 'vfs_read vfs_write');
    registerFprobe(ftrace, x1, 'vfs_read');
    unregisterFprobe(ftrace, e1);
    expect(b.ftraceOps.filterHash.has(id)).toBe(true);
    unregisterFprobe(ftrace, x1);
    expect(b.graphRegistered).toBe(false);
    expect(b.ftraceOps.filterHash.has(id)).toBe(true);
    unregisterFprobe(ftrace, e2);
    expect(b.ftraceRegistered).toBe(false);
    expect(b.ftraceOps.filterHash.empty).toBe(true);
  });

  it('handlers get ftrace_regs: arguments, sp, ip; callee-saved registers read as 0', () => {
    const { ftrace, read } = setup();
    const got: bigint[] = [];
    const fp = new Fprobe({
      entry: (_fp, _ip, _ret, regs) => void got.push(regs.arg(1)!, regs.arg(3)!, regs.get('bx'), regs.sp === 0n ? 0n : 1n),
      exit: (_fp, _ip, _ret, regs) => void got.push(regs.ax),
    });
    registerFprobe(ftrace, fp, 'vfs_read');
    read();
    expect(got).toEqual([3n, 1024n, 0n, 1n, 62n]);
  });
});

describe('fprobe on rethook (6.12)', () => {
  it('misses when the pool is dry: recursion deeper than nr_maxactive', () => {
    const { ftrace, task, exec } = setup('6.12');
    let entries = 0;
    let exits = 0;
    const fp = new Fprobe({ entry: () => void entries++, exit: () => void exits++ });
    registerFprobe(ftrace, fp, 'dput');
    recurse(ftrace, task, 'dput', 100);
    // Default pool: 1 function x 2 CPUs x 2.
    expect(exits).toBe(4);
    expect(entries).toBe(4);
    expect(fp.nmissed).toBe(96);
    expect(exec.corruptions).toBe(0);
  });

  it('takes nrMaxactive, and gives handlers full pt_regs', () => {
    const { ftrace, task, read } = setup('6.12');
    let bx = -1n;
    const fp = new Fprobe({ exit: (_fp, _ip, _ret, regs) => void (bx = regs.partial ? -1n : 0n), nrMaxactive: 200 });
    registerFprobe(ftrace, fp, 'dput');
    recurse(ftrace, task, 'dput', 100);
    expect(fp.nmissed).toBe(0);
    read();
    expect(bx).toBe(0n);
  });
});

describe.each(SERIES)('kretprobes (%s)', (series) => {
  it('maxactive exhaustion under recursion: misses counted, every return restored', () => {
    const { ftrace, task, exec, kp } = setup(series);
    let hits = 0;
    const rp = new Kretprobe({ symbol: 'dput', maxactive: 10, handler: () => void hits++ });
    kp.registerKretprobe(rp);
    recurse(ftrace, task, 'dput', 100);
    expect(hits).toBe(10);
    expect(rp.nmissed).toBe(90);
    expect(rp.rethook!.inUse).toBe(0);
    expect(exec.corruptions).toBe(0);
  });

  it('many tasks inside one function at once exhaust the pool too', async () => {
    const { exec, kp, newTask } = setup(series);
    let hits = 0;
    const rp = new Kretprobe({ symbol: 'vfs_read', handler: () => void hits++ });
    kp.registerKretprobe(rp);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const calls = Array.from({ length: 50 }, () => exec.call(newTask(), 'vfs_read', [], () => gate.then(() => 0)));
    expect(rp.rethook!.inUse).toBe(10);
    open();
    await Promise.all(calls);
    expect(hits).toBe(10);
    expect(rp.nmissed).toBe(40);
    expect(exec.corruptions).toBe(0);
  });

  it('rejects probes off the function entry, data over 4096, double registration', () => {
    const { kp } = setup(series);
    expect(() => kp.registerKretprobe(new Kretprobe({ symbol: 'vfs_read', offset: 9, handler: () => {} }))).toThrow('EINVAL');
    expect(() => kp.registerKretprobe(new Kretprobe({ symbol: 'vfs_read', dataSize: 4097, handler: () => {} }))).toThrow('E2BIG');
    expect(() => kp.registerKretprobe(new Kretprobe({ symbol: 'no_such_function', handler: () => {} }))).toThrow('ENOENT');
    const rp = new Kretprobe({ symbol: 'vfs_read', handler: () => {} });
    kp.registerKretprobe(rp);
    expect(() => kp.registerKretprobe(rp)).toThrow('EINVAL');
    kp.unregisterKretprobe(rp);
  });

  it('an unregistered kretprobe with calls in flight: no handler, the return still restored', () => {
    const { read, exec, kp } = setup(series);
    let hits = 0;
    const rp = new Kretprobe({ symbol: 'vfs_read', handler: () => void hits++ });
    kp.registerKretprobe(rp);
    read(undefined, () => kp.unregisterKretprobe(rp));
    expect(hits).toBe(0);
    expect(exec.corruptions).toBe(0);
  });
});

describe.each(SERIES)('double hooking: kretprobe and exit fprobe on one function (%s)', (series) => {
  function scenario(kretFirst: boolean) {
    const { ftrace, read, sym, exec, kp } = setup(series);
    const log: string[] = [];
    const fp = new Fprobe({ exit: (_fp, ip, ret) => void log.push(`fexit: (${sym(ret)} <- ${sym(ip).replace(/\+.*/, '')})`) });
    const rp = new Kretprobe({ symbol: 'vfs_read', handler: (ri) => void log.push(`kret: (${sym(ri.retAddr)} <- ${sym(ri.funcAddr).replace(/\+.*/, '')})`) });
    if (kretFirst) kp.registerKretprobe(rp);
    registerFprobe(ftrace, fp, 'vfs_read');
    if (!kretFirst) kp.registerKretprobe(rp);
    read();
    expect(exec.corruptions).toBe(0);
    return log.map((l) => l.replace(/\+0x[0-9a-f]+/, '+X'));
  }

  it('kretprobe enabled after the exit fprobe (the samples\' order)', () => {
    // 7.2: the kprobe ops runs first at entry, so fgraph saved rethook's trampoline (sample x-trace.d).
    // 6.12: both on rethook, which gives both the real caller.
    expect(scenario(false)).toEqual(
      profileOf(series).fprobeBackend === 'fgraph'
        ? ["fexit: ([unknown/kretprobe'd] <- vfs_read)", 'kret: (ksys_read+X <- vfs_read)']
        : ['fexit: (ksys_read+X <- vfs_read)', 'kret: (ksys_read+X <- vfs_read)'],
    );
  });

  it('kretprobe enabled before the exit fprobe', () => {
    expect(scenario(true)).toEqual(
      profileOf(series).fprobeBackend === 'fgraph'
        ? ['kret: (return_to_handler+X <- vfs_read)', 'fexit: (ksys_read+X <- vfs_read)']
        : ["kret: ([unknown/kretprobe'd] <- vfs_read)", 'fexit: (ksys_read+X <- vfs_read)'],
    );
  });
});

describe('preempt depth seen from handlers (what events recorded there show)', () => {
  it.each(SERIES)('%s', (series) => {
    const { kernel, ftrace, read, kp } = setup(series);
    const depth: Record<string, number> = {};
    const at = (k: string) => (_a: unknown, _b: unknown, _c: unknown, _d: unknown, _e: unknown, task: Task) => void (depth[k] = kernel.context(task).preemptCount);
    const fentry = new Fprobe({ entry: at('fentry') as never });
    registerFprobe(ftrace, fentry, 'vfs_read');
    read();
    const alone = depth.fentry;
    const fexit = new Fprobe({ exit: at('fexit') as never });
    registerFprobe(ftrace, fexit, 'vfs_read');
    const kp1 = new Kprobe({ symbol: 'vfs_read', pre: (_p, _r, task) => void (depth.kp = kernel.context(task).preemptCount) });
    kp.register(kp1);
    const kr1 = new Kretprobe({ symbol: 'vfs_read', handler: (ri) => void (depth.kr = kernel.context(ri.task).preemptCount) });
    kp.registerKretprobe(kr1);
    read();
    expect({ alone, ...depth }).toEqual(kernel.profile.fprobeBackend === 'fgraph' ? { alone: 1, fentry: 2, fexit: 1, kp: 1, kr: 0 } : { alone: 0, fentry: 1, fexit: 1, kp: 1, kr: 0 });
  });
});
