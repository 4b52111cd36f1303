/**
 * Function probes (ftrace_func_probe): the commands of set_ftrace_filter
 * (`func:traceoff:3`, `func:enable_event:sched:sched_switch`, ...). Each kind
 * of probe (probe_ops) has, per trace array, one ftrace_ops over the
 * functions it was set on, and optional per-function data (its count).
 */
import { fail } from '../kernel/errno.js';
import type { PtRegs } from '../kernel/regs.js';
import type { Task } from '../kernel/task.js';
import type { Ftrace } from './ftrace.js';
import { FTRACE_OPS_FL_DYNAMIC, FTRACE_OPS_FL_ENABLED, FtraceOps } from './ftrace_ops.js';
import { ftraceMatch, parseFilterRegex, type FtraceGlob } from './glob.js';

/** One call of a probe: where it fired and in which task. */
interface ProbeHit {
  ip: bigint;
  parentIp: bigint;
  /** The function id. */
  id: number;
  regs: PtRegs;
  task: Task;
}

/** struct ftrace_probe_ops: what a command does at each call, and how its entries list. */
export interface ProbeOps<D = unknown> {
  /** Runs at each call of a function the probe is on; `data` is this function's data. */
  func(hit: ProbeHit, owner: unknown, data: D | undefined): void;
  /** The set_ftrace_filter line (without newline) for function `name` with its data. */
  print(name: string, data: D | undefined): string;
  /** Per-function data when the probe is set on a new function (init). */
  init?(id: number, initData: unknown): D;
  /** The function's data goes away (free). */
  free?(id: number, data: D | undefined): void;
}

/** struct ftrace_func_probe: one probe_ops on one trace array. */
class FuncProbe {
  readonly ops: FtraceOps;
  /** Per-function data (ftrace_func_mapper). */
  readonly data = new Map<number, unknown>();

  constructor(
    readonly probeOps: ProbeOps,
    readonly owner: unknown,
  ) {
    this.ops = new FtraceOps({
      func: (ip, parentIp, _op, regs, task, id) => {
        // function_trace_probe_call() runs the probe with preemption disabled.
        task.preemptCount++;
        try {
          this.probeOps.func({ ip, parentIp, id, regs, task }, this.owner, this.data.get(id));
        } finally {
          task.preemptCount--;
        }
      },
      funcSym: 'function_trace_probe_call',
      flags: FTRACE_OPS_FL_DYNAMIC,
    });
  }
}

/** The function probes of one trace array (tr->func_probes, newest first). */
export class FuncProbes {
  list: FuncProbe[] = [];

  constructor(
    private readonly ftrace: Ftrace,
    readonly owner: unknown,
  ) {}

  /**
   * register_ftrace_function_probe(): puts `probeOps` on every function the
   * glob matches that it is not already on. Returns how many it was added to;
   * EINVAL when none.
   */
  register(glob: string, probeOps: ProbeOps, initData?: unknown): number {
    let probe = this.list.find((p) => p.probeOps === probeOps);
    const created = !probe;
    if (!probe) {
      probe = new FuncProbe(probeOps, this.owner);
      this.list = [probe, ...this.list];
    }
    const old = probe.ops.filterHash;
    const hash = old.copy();
    const matched = this.ftrace.matchRecords(hash, glob);
    const added: number[] = [];
    if (matched > 0) for (const id of hash) if (!old.has(id)) added.push(id);
    if (!added.length) {
      if (created) this.list = this.list.filter((p) => p !== probe);
      fail('EINVAL');
    }
    for (const id of added) probe.data.set(id, probeOps.init?.(id, initData));
    this.ftrace.setHash(probe.ops.funcHash, 'filter', hash);
    if (!(probe.ops.flags & FTRACE_OPS_FL_ENABLED)) this.ftrace.register(probe.ops);
    return added.length;
  }

  /**
   * unregister_ftrace_function_probe_func(): takes `probeOps` off the
   * functions whose names match the glob (`*` or empty: all). ENODEV when the
   * probe is not set here, EINVAL when it is on no matching function.
   */
  unregister(glob: string, probeOps: ProbeOps): void {
    const probe = this.list.find((p) => p.probeOps === probeOps);
    if (!probe) fail('ENODEV');
    let g: FtraceGlob | undefined;
    if (glob && glob !== '*') {
      const parsed = parseFilterRegex(glob);
      if (parsed.not) fail('EINVAL');
      g = parsed;
    }
    const old = probe.ops.filterHash;
    if (old.empty) fail('EINVAL');
    const hash = old.copy();
    const removed: number[] = [];
    const { records } = this.ftrace;
    for (const id of old) {
      const fn = records.fns[records.indexOf[id]];
      if (g && !ftraceMatch(fn.name, g)) continue;
      hash.delete(id);
      removed.push(id);
    }
    if (!removed.length) fail('EINVAL');
    if (hash.empty) this.ftrace.unregister(probe.ops);
    this.ftrace.setHash(probe.ops.funcHash, 'filter', hash);
    for (const id of removed) {
      probeOps.free?.(id, probe.data.get(id));
      probe.data.delete(id);
    }
    if (hash.empty) this.list = this.list.filter((p) => p !== probe);
  }

  /** clear_ftrace_function_probes(): everything off (instance removal). */
  clear(): void {
    for (const p of [...this.list]) this.unregister('', p.probeOps);
  }

  /** The probe lines of set_ftrace_filter. */
  show(): string {
    const { records } = this.ftrace;
    let out = '';
    for (const p of this.list) {
      const ids = [...p.ops.filterHash].sort((a, b) => records.indexOf[a] - records.indexOf[b]);
      for (const id of ids) {
        const fn = records.fns[records.indexOf[id]];
        out += p.probeOps.print(fn.module ? `${fn.name} [${fn.module}]` : fn.name, p.data.get(id)) + '\n';
      }
    }
    return out;
  }

  /** The probe of a kind here, if set. */
  probeOf(probeOps: ProbeOps): FuncProbe | undefined {
    return this.list.find((p) => p.probeOps === probeOps);
  }
}
