/**
 * The memory benchmark: what each return-hook mechanism costs and where it
 * runs out. 10,000 tasks and 1,000 return probes (exit fprobes, and
 * kretprobes), on an 8-CPU kernel: bytes of shadow stacks (fgraph: one
 * 4096-byte stack per task as soon as any fgraph user exists) against bytes
 * of rethook pools (per probe: nr_maxactive nodes); then misses with one
 * probe under recursion depth 100 and with 50 tasks inside the probed
 * function at once.
 */
import { Fprobe, registerFprobe } from '../src/ftrace/fprobe.js';
import { Ftrace } from '../src/ftrace/ftrace.js';
import { collectHookStats } from '../src/ftrace/hook_stats.js';
import { Kretprobe } from '../src/ftrace/kretprobes.js';
import type { Call } from '../src/kernel/executor.js';
import { Kernel } from '../src/kernel/kernel.js';
import { THREAD_SIZE } from '../src/kernel/kmem.js';
import type { Series } from '../src/kernel/series.js';
import { Task } from '../src/kernel/task.js';
import { now } from './table.js';

export interface MemoryOptions {
  tasks: number;
  probes: number;
  cpus: number;
  depth: number;
  concurrent: number;
}

export const MEMORY_DEFAULTS: MemoryOptions = { tasks: 10_000, probes: 1_000, cpus: 8, depth: 100, concurrent: 50 };

export type ProbeKind = 'fprobe-exit' | 'kretprobe';

export interface FootprintResult {
  series: Series;
  kind: ProbeKind;
  backend: string;
  shadowStackBytes: number;
  rethookBytes: number;
  rethookNodes: number;
  registerMs: number;
}

export interface MissResult {
  series: Series;
  kind: ProbeKind;
  backend: string;
  scenario: 'recursion' | 'concurrent';
  calls: number;
  handled: number;
  missed: number;
  /** fgraph: calls lost to a full shadow stack. */
  overrun: number;
}

let stackTop = 0xffffc90001000000n;
function newTask(kernel: Kernel, pid: number): Task {
  const t = kernel.tasks.add(new Task(pid, pid, `t${pid}`, 1));
  t.sp = stackTop += BigInt(THREAD_SIZE);
  return t;
}

function backendOf(kernel: Kernel, kind: ProbeKind): string {
  return kind === 'kretprobe' ? 'rethook' : kernel.profile.fprobeBackend;
}

/** Registers `n` return probes of a kind on n distinct functions; returns the handler hit counter. */
function attach(ftrace: Ftrace, kind: ProbeKind, names: readonly string[]): { hits: () => number; missed: () => number } {
  let hits = 0;
  const fps: Fprobe[] = [];
  const rps: Kretprobe[] = [];
  for (const name of names) {
    if (kind === 'fprobe-exit') {
      const fp = new Fprobe({ exit: () => void hits++ });
      registerFprobe(ftrace, fp, [name]);
      fps.push(fp);
    } else {
      const rp = new Kretprobe({ symbol: name, handler: () => void hits++ });
      ftrace.kprobes.registerKretprobe(rp);
      rps.push(rp);
    }
  }
  return { hits: () => hits, missed: () => fps.reduce((s, f) => s + f.nmissed, 0) + rps.reduce((s, r) => s + r.nmissed, 0) };
}

/** Functions a kretprobe can go on too (traceable, entry on the __fentry__ site, not blacklisted). */
function probeTargets(kernel: Kernel, n: number): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const f of kernel.symbols.traceable()) {
    if (out.length >= n) break;
    if (f.module || seen.has(f.name) || kernel.symbols.byName(f.name).length !== 1) continue;
    if (kernel.kprobeBlacklist.contains(f.addr + BigInt(f.fentryOffset))) continue;
    seen.add(f.name);
    out.push(f.name);
  }
  return out;
}

export function runFootprint(series: Series, kind: ProbeKind, o: MemoryOptions): FootprintResult {
  const kernel = new Kernel({ series, cpus: o.cpus });
  for (let i = 0; i < o.tasks; i++) newTask(kernel, 10_000 + i);
  const ftrace = new Ftrace(kernel);
  const names = probeTargets(kernel, o.probes);
  const t0 = now();
  attach(ftrace, kind, names);
  const registerMs = now() - t0;
  const s = collectHookStats(ftrace, { perTaskLimit: 0 });
  return {
    series,
    kind,
    backend: backendOf(kernel, kind),
    shadowStackBytes: s.fgraph.bytesAllocated,
    rethookBytes: s.rethook.bytes,
    rethookNodes: s.rethook.allocated,
    registerMs,
  };
}

export async function runMisses(series: Series, kind: ProbeKind, scenario: 'recursion' | 'concurrent', o: MemoryOptions): Promise<MissResult> {
  const kernel = new Kernel({ series, cpus: o.cpus });
  const ftrace = new Ftrace(kernel);
  const exec = ftrace.exec;
  const fn = scenario === 'recursion' ? 'dput' : 'vfs_read';
  const probe = attach(ftrace, kind, [fn]);
  let calls = 0;
  let overrun = 0;
  if (scenario === 'recursion') {
    const task = newTask(kernel, 500);
    const go = (x: Call | null, d: number): unknown => {
      calls++;
      const body = (c: Call) => (d > 1 ? (go(c, d - 1), 0) : 0);
      return x ? x.call(fn, [], body) : exec.call(task, fn, [], body);
    };
    go(null, o.depth);
    overrun = ftrace.tasks.of(task).traceOverrun;
  } else {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const running: Promise<bigint>[] = [];
    for (let i = 0; i < o.concurrent; i++) {
      calls++;
      const t = newTask(kernel, 600 + i);
      running.push(exec.call(t, 'ksys_read', [], (x) => x.call(fn, [], () => gate.then(() => 0))) as Promise<bigint>);
    }
    open();
    await Promise.all(running);
  }
  if (exec.corruptions) throw new Error(`memory bench: ${exec.corruptions} corrupted returns`);
  return { series, kind, backend: backendOf(kernel, kind), scenario, calls, handled: probe.hits(), missed: probe.missed(), overrun };
}
