/**
 * The function profiler (FUNCTION_PROFILER, ftrace.c): while
 * function_profile_enabled is 1, an fgraph_ops over the top-level filter
 * counts each function's calls per CPU and sums their time (graph-time:
 * including children, or not) for trace_stat/functionN.
 */
import { sprintSymbolNoOffset } from '../kernel/kallsyms.js';
import { type CountedCalls, UNSEEN_CALL_NS } from '../kernel/counted_calls.js';
import type { Kernel } from '../kernel/kernel.js';
import type { Task } from '../kernel/task.js';
import { FgraphOps } from './fgraph.js';
import type { Ftrace } from './ftrace.js';
import type { FuncHash } from './ftrace_hash.js';

interface Profile {
  ip: bigint;
  counter: number;
  /** Summed time in ns (bigint: squares overflow doubles). */
  time: bigint;
  timeSquared: bigint;
}

/** Settings the profiler reads at each call (graph-time, sleep-time, tracing_thresh, prof-text-offset). */
export interface ProfilerSettings {
  graphTime(): boolean;
  sleepTime(): boolean;
  /** tracing_thresh in ns (0: none). */
  threshNs(): number;
  textOffset(): boolean;
}

export class FunctionProfiler {
  enabled = false;
  private stats: Map<bigint, Profile>[];
  private gops?: FgraphOps;

  private readonly kernel: Kernel;

  constructor(private readonly ftrace: Ftrace) {
    const kernel = (this.kernel = ftrace.kernel);
    this.stats = Array.from({ length: kernel.nrCpus }, () => new Map());
  }

  /**
   * function_profile_enabled write: turning it on clears the counts and
   * registers the profiler's fgraph_ops over `globalHash` (the top-level filter).
   */
  setEnabled(on: boolean, globalHash: FuncHash, settings: ProfilerSettings): void {
    if (on === this.enabled) return;
    const fgraph = this.ftrace.fgraph;
    if (on) {
      for (const s of this.stats) s.clear();
      this.gops = this.makeOps(globalHash, settings);
      fgraph.register(this.gops);
      this.enabled = true;
    } else {
      this.enabled = false;
      if (this.gops) fgraph.unregister(this.gops);
    }
  }

  private makeOps(globalHash: FuncHash, settings: ProfilerSettings): FgraphOps {
    const { fgraph, tasks } = this.ftrace;
    const clock = this.kernel.clock;
    const gops: FgraphOps = new FgraphOps({
      entrySym: 'profile_graph_entry',
      retSym: 'profile_graph_return',
      funcHash: globalHash,
      // All it does with a call is count it and add up its time: calls in subtrees not run are given at once.
      count: {
        words: 4, // the 24 bytes its entry reserves, and their header
        add: (task, calls, times, takes) => this.countCalls(task, calls, times, takes, settings),
      },
      entryfunc: (trace, g, _regs, task) => {
        this.count(this.kernel.context(task).cpu, trace.func);
        const at = fgraph.reserveData(task, g.idx, 24);
        if (at < 0) return false;
        const s = fgraph.stackOf(task)!;
        s[at + 1] = 0n;
        s[at + 2] = BigInt(tasks.of(task).ftraceSleeptime);
        s[at] = BigInt(clock.now());
        return true;
      },
      retfunc: (trace, g, _regs, task) => {
        const rettime = BigInt(clock.now());
        if (!this.enabled) return;
        const d = fgraph.retrieveData(task, g.idx);
        const s = fgraph.stackOf(task);
        if (!d || !s || !s[d.index]) return;
        let calltime = rettime - s[d.index];
        const sleep = BigInt(tasks.of(task).ftraceSleeptime);
        if (!settings.sleepTime() && sleep) calltime -= sleep - s[d.index + 2];
        if (!settings.graphTime()) {
          const parent = fgraph.retrieveParentData(task, g.idx, 1);
          if (parent) s[parent.index + 1] += calltime;
          const sub = s[d.index + 1];
          calltime = sub && sub < calltime ? calltime - sub : 0n;
        }
        const rec = this.stats[this.kernel.context(task).cpu]?.get(trace.func);
        if (rec) {
          rec.time += calltime;
          rec.timeSquared += calltime * calltime;
        }
      },
    });
    return gops;
  }

  /** Calls not run one by one (counted_calls.ts): their hits, and their nominal time (with children, or without under nograph-time). */
  private countCalls(task: Task, calls: CountedCalls, times: number, takes: (id: number) => boolean, settings: ProfilerSettings): void {
    if (!this.enabled) return;
    const s = this.stats[this.kernel.context(task).cpu];
    if (!s) return;
    const graphTime = settings.graphTime();
    for (let i = 0; i < calls.ids.length; i++) {
      if (!takes(calls.ids[i]!)) continue;
      const ip = calls.ips[i]!;
      let rec = s.get(ip);
      if (!rec) s.set(ip, (rec = { ip, counter: 0, time: 0n, timeSquared: 0n }));
      const n = calls.counts[i]! * times;
      rec.counter += n;
      rec.time += BigInt(graphTime ? calls.incl[i]! * times : n * UNSEEN_CALL_NS);
      rec.timeSquared += BigInt(graphTime ? calls.incl2[i]! * times : n * UNSEEN_CALL_NS * UNSEEN_CALL_NS);
    }
  }

  /** function_profile_call(): one more hit. */
  private count(cpu: number, ip: bigint): void {
    if (!this.enabled) return;
    const s = this.stats[cpu];
    if (!s) return;
    let rec = s.get(ip);
    if (!rec) s.set(ip, (rec = { ip, counter: 0, time: 0n, timeSquared: 0n }));
    rec.counter++;
  }

  /** trace_stat/function<cpu>. */
  show(cpu: number, settings: ProfilerSettings): string {
    let out =
      '  Function                               Hit    Time            Avg             s^2\n' +
      '  --------                               ---    ----            ---             ---\n';
    const recs = [...(this.stats[cpu]?.values() ?? [])].filter((r) => r.counter > 0);
    // trace_stat lists in decreasing order of total time.
    recs.sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
    const thresh = BigInt(settings.threshNs());
    for (const rec of recs) {
      const n = BigInt(rec.counter);
      const avg = rec.time / n;
      if (thresh && avg < thresh) continue;
      const name = this.name(rec.ip, settings);
      out += `  ${name.slice(0, 30).padEnd(30)}  ${String(rec.counter).padStart(10)}    `;
      let stddev = 0n;
      const denom = n * (n - 1n) * 1000n;
      if (denom) stddev = (n * rec.timeSquared - rec.time * rec.time) / denom;
      out += `${duration(rec.time)}    ${duration(avg)}    ${duration(stddev)}\n`;
    }
    return out;
  }

  private name(ip: bigint, settings: ProfilerSettings): string {
    const t = this.kernel.symbols;
    if (settings.textOffset()) {
      const text = t.lookupName('_text')?.addr;
      const hit = t.lookup(ip);
      if (hit?.sym.module) return `  ${hit.sym.module}+0x${(ip - hit.sym.addr).toString(16)}`;
      if (text !== undefined) return `  _text+0x${(ip - text).toString(16)}`;
    }
    // kallsyms_lookup(): the bare name, no module suffix.
    const n = sprintSymbolNoOffset(t, ip);
    return n.replace(/ \[.*\]$/, '');
  }
}

/** trace_print_graph_duration() of a bigint ns value. */
function duration(ns: bigint): string {
  const usecs = ns / 1000n;
  const nsecs = ns % 1000n;
  const u = usecs.toString();
  let s = u;
  let len = u.length;
  if (len < 7) {
    const digits = Math.min(5, 8 - len) - 1;
    const frac = nsecs.toString().padStart(3, '0').slice(0, digits);
    s += `.${frac}`;
    len += frac.length + 1;
  }
  s += ' us ';
  for (let i = len; i < 8; i++) s += ' ';
  return s;
}
