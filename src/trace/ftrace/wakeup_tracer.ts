/**
 * The wakeup, wakeup_rt and wakeup_dl tracers (trace_sched_wakeup.c): from
 * the wake-up of the highest-priority task so far (any task, real-time
 * ones, deadline ones) to the moment it is switched in, through the
 * scheduler's tracepoints. The wake-up (ftrace/wakeup, `+`), the switch
 * (ftrace/context_switch, `==>`), their stacks and, with
 * `function-trace`, the functions run meanwhile on the wakee's CPU are
 * recorded; the longest wait is kept in the snapshot buffer and
 * tracing_max_latency.
 */
import type { ExecContext } from '../../kernel/context.js';
import { fail } from '../../kernel/errno.js';
import { TASK_REPORT_MAX, TASK_STATE_BITS, type Task } from '../../kernel/task.js';
import type { TracepointArgs } from '../../kernel/tracepoint.js';
import type { EventField, TraceRecord } from '../event_type.js';
import type { PrintableEventType } from '../ftrace_entries.js';
import type { TraceArray } from '../trace_array.js';
import type { Tracer } from '../tracer.js';
import type { Tracing } from '../tracing.js';
import { recordStack } from './kernel_stack.js';
import { LatencyFunctionOps, SavedFlags, latencyFunction, latencyOptionChanging, reportLatency } from './latency.js';
import { writeRecord } from './record.js';

const TRACE_CTX = 2;
const TRACE_WAKE = 3;
/** struct ctx_switch_entry. */
const CTX_SIZE = 24;
const TASK_STATE_CHARS = 'RSDTtXZPI';
const SCHED_DEADLINE = 6;

function field(type: string, name: string, offset: number, size: number): EventField {
  return { type, name, offset, size, signed: false };
}

/** task_state_index() of a TASK_REPORT state: the position of its bit (0 for running, preempted included). */
function stateIndexOf(bits: number): number {
  return bits && bits < TASK_REPORT_MAX ? 32 - Math.clz32(bits) : 0;
}

function stateIndex(t: Task): number {
  return stateIndexOf(TASK_STATE_BITS[t.state] ?? 0);
}

/** ftrace/context_switch (`==>`) and ftrace/wakeup (`  +`) as trace_ctxwake_print() and trace_ctxwake_raw() print them. */
function ctxWakeType(id: number, name: string, delim: string, fmtArrow: string, tracing: Tracing): PrintableEventType {
  const wake = id === TRACE_WAKE;
  const st = (d: Buffer, i: number): string => TASK_STATE_CHARS[d[i]] ?? '?';
  return {
    id,
    system: 'ftrace',
    name,
    internal: true,
    fields: [
      field('unsigned int', 'prev_pid', 8, 4),
      field('unsigned int', 'next_pid', 12, 4),
      field('unsigned int', 'next_cpu', 16, 4),
      field('unsigned char', 'prev_prio', 20, 1),
      field('unsigned char', 'prev_state', 21, 1),
      field('unsigned char', 'next_prio', 22, 1),
      field('unsigned char', 'next_state', 23, 1),
    ],
    printFmt: `"%u:%u:%u  ${fmtArrow} %u:%u:%u [%03u]", REC->prev_pid, REC->prev_prio, REC->prev_state, REC->next_pid, REC->next_prio, REC->next_state, REC->next_cpu`,
    output(rec: TraceRecord) {
      const d = rec.data;
      const next = d.readUInt32LE(12);
      return (
        ` ${String(d.readUInt32LE(8)).padStart(7)}:${String(d[20]).padStart(3)}:${st(d, 21)} ${delim} [${String(d.readUInt32LE(16)).padStart(3, '0')}] ` +
        `${String(next).padStart(7)}:${String(d[22]).padStart(3)}:${st(d, 23)} ${tracing.cmdlines.find(next)}\n`
      );
    },
    raw(rec: TraceRecord) {
      const d = rec.data;
      return `${d.readUInt32LE(8)} ${d[20]} ${wake ? '+' : st(d, 21)} ${d.readUInt32LE(16)} ${d.readUInt32LE(12)} ${d[22]} ${st(d, 23)}\n`;
    },
  };
}

class WakeupTracing {
  private tr?: TraceArray;
  private rt = false;
  private dl = false;
  /** tracer_enabled. */
  private enabled = false;
  /** The task whose wake-up is being timed, its CPU, priority, and when it was woken. */
  private task?: Task;
  private cpu = -1;
  private currentCpu = -1;
  private prio = Infinity;
  private tracingDl = false;
  private timestamp = 0;
  private disabled = 0;
  private readonly flags = new SavedFlags(['overwrite', 'latency-format']);
  private readonly ops = new LatencyFunctionOps((ip, parentIp, _op, _regs, task) => this.functionCall(ip, parentIp, task), 'wakeup_tracer_call');
  private readonly onWakeup = (ctx: ExecContext, a: TracepointArgs['sched_wakeup']): void => this.probeWakeup(ctx, a.pid);
  private readonly onSwitch = (ctx: ExecContext, a: TracepointArgs['sched_switch']): void => this.probeSwitch(ctx, a.next_pid, stateIndexOf(Number(a.prev_state)));
  private readonly onMigrate = (_ctx: ExecContext, a: TracepointArgs['sched_migrate_task']): void => {
    if (this.task && a.pid === this.task.pid) this.currentCpu = a.dest_cpu;
  };

  constructor(private readonly tracing: Tracing) {}

  tracer(name: string, rt: boolean, dl: boolean): Tracer {
    return {
      name,
      allowInstances: true,
      usesSnapshot: true,
      printMax: true,
      init: (tr) => this.init(tr, rt, dl),
      reset: (tr) => this.reset(tr),
      start: (tr) => {
        this.wakeupReset(tr);
        this.enabled = true;
      },
      stop: () => {
        this.enabled = false;
      },
      coreOptionChanging: (tr, opt, on) => latencyOptionChanging(this.flags, this.ops, tr, opt, on),
    };
  }

  private init(tr: TraceArray, rt: boolean, dl: boolean): void {
    if (this.tr) fail('EBUSY');
    this.rt = rt;
    this.dl = dl;
    this.flags.set(tr);
    tr.maxLatency = 0;
    this.tr = tr;
    const tps = this.tracing.kernel.tracepoints;
    tps.register('sched_wakeup', this.onWakeup);
    tps.register('sched_wakeup_new', this.onWakeup);
    tps.register('sched_switch', this.onSwitch);
    tps.register('sched_migrate_task', this.onMigrate);
    this.wakeupReset(tr);
    this.ops.start(tr);
    this.enabled = tr.tracingOn;
  }

  private reset(tr: TraceArray): void {
    this.enabled = false;
    this.ops.stop(tr);
    const tps = this.tracing.kernel.tracepoints;
    tps.unregister('sched_switch', this.onSwitch);
    tps.unregister('sched_wakeup_new', this.onWakeup);
    tps.unregister('sched_wakeup', this.onWakeup);
    tps.unregister('sched_migrate_task', this.onMigrate);
    this.wakeupReset(tr);
    this.flags.restore(tr);
    this.tr = undefined;
  }

  /** wakeup_reset(): an empty buffer and no wake-up timed. */
  private wakeupReset(tr: TraceArray): void {
    tr.reset();
    this.clear();
  }

  /** __wakeup_reset(). */
  private clear(): void {
    this.cpu = -1;
    this.prio = Infinity;
    this.tracingDl = false;
    this.task = undefined;
  }

  private isDl(t: Task): boolean {
    return t.policy === SCHED_DEADLINE;
  }

  /** wakeup_tracer_call(): functions run on the wakee's CPU while its wake-up is timed. */
  private functionCall(ip: bigint, parentIp: bigint, task: Task): void {
    const tr = this.tr;
    if (!tr || !this.task || this.disabled) return;
    const ctx = this.tracing.kernel.context(task);
    if (ctx.cpu !== this.currentCpu) return;
    this.disabled++;
    try {
      latencyFunction(tr, ip, parentIp, ctx);
    } finally {
      this.disabled--;
    }
  }

  /** probe_wakeup(): a task of higher priority than the one timed (and than the waker) starts a new timing. */
  private probeWakeup(ctx: ExecContext, pid: number): void {
    const tr = this.tr;
    if (!tr || !this.enabled || this.disabled) return;
    const p = this.tracing.kernel.tasks.get(pid);
    if (!p) return;
    const curr = ctx.task;
    this.tracing.cmdlines.save(p.pid, p.comm);
    this.tracing.cmdlines.save(curr.pid, curr.comm);
    const dl = this.isDl(p);
    const rtOrDl = dl || p.prio < 100;
    if (this.tracingDl || (this.dl && !dl) || (this.rt && !rtOrDl) || (!dl && (p.prio >= this.prio || p.prio >= curr.prio))) return;
    this.disabled++;
    try {
      this.clear();
      this.cpu = p.cpu;
      this.currentCpu = p.cpu;
      this.prio = p.prio;
      this.tracingDl = dl;
      this.task = p;
      this.timestamp = tr.buffer.now();
      this.ctxWakeRecord(tr, TRACE_WAKE, curr, p, ctx);
      recordStack(tr, ctx);
      const f = curr.frames;
      const ip = f.length > 1 ? f[f.length - 1].fn.addr : 0n;
      const parent = f.length > 1 ? f[f.length - 2].fn.addr : 0n;
      latencyFunction(tr, ip, parent, ctx);
    } finally {
      this.disabled--;
    }
  }

  /** probe_wakeup_sched_switch(): the timed task is switched in: its wait is a latency, perhaps the new maximum. */
  private probeSwitch(ctx: ExecContext, nextPid: number, prevState: number): void {
    const tr = this.tr;
    const task = this.task;
    const prev = ctx.task;
    this.tracing.cmdlines.save(prev.pid, prev.comm);
    if (!tr || !this.enabled || !task || nextPid !== task.pid || this.disabled) return;
    this.disabled++;
    try {
      const f = prev.frames;
      const ip = f.length ? f[f.length - 1].fn.addr : 0n;
      const parent = f.length > 1 ? f[f.length - 2].fn.addr : 0n;
      latencyFunction(tr, ip, parent, ctx);
      this.ctxWakeRecord(tr, TRACE_CTX, prev, task, ctx, prevState);
      recordStack(tr, ctx);
      const delta = tr.buffer.now() - this.timestamp;
      if (reportLatency(tr, delta) && !tr.stopCount) {
        tr.maxLatency = delta;
        tr.updateMaxTr(task, this.cpu, { timestamp: this.timestamp, criticalStart: 0n, criticalEnd: 0n });
      }
      this.clear();
    } finally {
      this.disabled--;
    }
  }

  /** tracing_sched_switch_trace() / tracing_sched_wakeup_trace(): `prev` is the task switched out, or the waker. */
  private ctxWakeRecord(tr: TraceArray, type: number, prev: Task, next: Task, ctx: ExecContext, prevState = stateIndex(prev)): void {
    writeRecord(tr, ctx, type, CTX_SIZE, (buf, off) => {
      buf.writeUInt32LE(prev.pid, off + 8);
      buf.writeUInt32LE(next.pid, off + 12);
      buf.writeUInt32LE(next.cpu, off + 16);
      buf[off + 20] = prev.prio & 0xff;
      buf[off + 21] = prevState;
      buf[off + 22] = next.prio & 0xff;
      buf[off + 23] = type === TRACE_WAKE ? 0 : stateIndex(next);
    });
  }
}

/** Registers wakeup, wakeup_rt and wakeup_dl (init_wakeup_tracer()) and the records they write. */
export function registerWakeupTracers(tracing: Tracing): void {
  tracing.eventTypes.register(ctxWakeType(TRACE_CTX, 'context_switch', '==>', '==>', tracing));
  tracing.eventTypes.register(ctxWakeType(TRACE_WAKE, 'wakeup', '  +', '==+', tracing));
  const w = new WakeupTracing(tracing);
  tracing.tracers.register(w.tracer('wakeup', false, false));
  tracing.tracers.register(w.tracer('wakeup_rt', true, false));
  tracing.tracers.register(w.tracer('wakeup_dl', false, true));
}
