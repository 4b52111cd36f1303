/**
 * fprobe and tracepoint-probe events at run time (trace_fprobe.c): each
 * probe point is an fprobe — on its functions, or for `t:` on the
 * tracepoint's probe stub, which the tracepoint then calls with its
 * prototype's arguments. 7.2 registers it when the event is enabled and
 * unregisters it when disabled; 6.12 registers it at definition (disabled)
 * and only flips FPROBE_FL_DISABLED. Entry records carry `__probe_ip`, exit
 * records `__probe_func`, `__probe_ret_ip`, `$retval` and the entry
 * arguments kept in the fprobe's entry data.
 */
import { fail } from '../../kernel/errno.js';
import type { ExecContext } from '../../kernel/context.js';
import type { PtRegs } from '../../kernel/regs.js';
import type { Task } from '../../kernel/task.js';
import type { TracepointProbe } from '../../kernel/tracepoint.js';
import { disableFprobe, enableFprobe, Fprobe, registerFprobe, unregisterFprobe } from '../../ftrace/fprobe.js';
import { contextOf, executorOf } from '../../ftrace/kernel_seam.js';
import { TRACE_ENTRY_SIZE, writeCommonHeader } from '../event_type.js';
import { buildProbeRecord, storeEntryData, type FetchSource } from '../probe/fetch_exec.js';
import { fprobeEnableCheck } from '../probe/fprobe.js';
import type { FprobeLocation, ProbeEvent, TraceProbe } from '../probe/trace_probe.js';
import type { DynEvents, ProbeRuntime } from './dyn_events.js';
import { bumpPreempt } from './probe_context.js';
import type { ProbeEventType } from './probe_event_type.js';
import { probeMemory } from './probe_memory.js';
import { tracepointParams } from './tracepoint_args.js';

/** One probe point: its fprobe, and for a tracepoint probe the tracepoint callback that calls the stub. */
interface FprobePoint {
  fp: Fprobe;
  tracepoint?: { name: string; probe: TracepointProbe<never> };
}

export class FprobeRuntime implements ProbeRuntime {
  private readonly points = new Map<TraceProbe, FprobePoint>();
  /** The tracepoint's context while it calls a probe stub: what the stub's records build on. */
  private readonly stubContext = new Map<Task, ExecContext>();

  constructor(private readonly dyn: DynEvents) {}

  private get legacy(): boolean {
    return this.dyn.kernel.series === '6.12';
  }

  /** 6.12 registers at definition, disabled unless the event is on. */
  added(tp: TraceProbe): void {
    if (this.legacy || tp.ev?.enabled) {
      try {
        this.register(tp);
      } catch {
        // the parser checked the target: nothing more to say here
      }
    }
  }

  removed(tp: TraceProbe): void {
    this.unregister(tp);
  }

  enable(ev: ProbeEvent, _type: ProbeEventType): void {
    const done: TraceProbe[] = [];
    try {
      for (const tp of ev.probes) {
        if (this.legacy) {
          const p = this.points.get(tp);
          if (p) enableFprobe(p.fp);
        } else {
          // __register_trace_fprobe() at enable: @symbols resolve now, the pattern must still match
          const ret = fprobeEnableCheck(tp, this.dyn.env);
          if (ret) fail(ret);
          this.register(tp);
        }
        done.push(tp);
      }
    } catch (e) {
      for (const tp of done) this.off(tp);
      throw e;
    }
  }

  disable(ev: ProbeEvent, _type: ProbeEventType): void {
    for (const tp of ev.probes) this.off(tp);
  }

  /** 7.2 detaches the fprobe; 6.12 keeps it, disabled. */
  private off(tp: TraceProbe): void {
    if (this.legacy) {
      const p = this.points.get(tp);
      if (p) disableFprobe(p.fp);
    } else this.unregister(tp);
  }

  private register(tp: TraceProbe): void {
    if (this.points.has(tp)) return;
    const loc = tp.loc as FprobeLocation;
    const kernel = this.dyn.kernel;
    const fp = new Fprobe({
      name: `${tp.group}/${tp.event}`,
      entryDataSize: tp.isReturn ? tp.entryArgs.length * 8 : 0,
      nrMaxactive: loc.maxactive,
      entry: tp.isReturn
        ? tp.entryArgs.length
          ? (_fp, _ip, _retIp, regs, data, task) => this.storeEntry(tp, regs, data, task)
          : undefined
        : (_fp, ip, _retIp, regs, _data, task) => this.fentry(tp, ip, regs, task),
      exit: tp.isReturn ? (_fp, ip, retIp, regs, data, task) => this.fexit(tp, ip, retIp, regs, data, task) : undefined,
    });
    if (this.legacy && !tp.ev?.enabled) fp.disabled = true;
    const point: FprobePoint = { fp };
    if (loc.tracepoint) {
      const stub = `__probestub_${loc.symbol}`;
      registerFprobe(kernel, fp, [stub]);
      point.tracepoint = { name: loc.symbol, probe: this.stubCaller(stub) };
      kernel.tracepoints.register(loc.symbol, point.tracepoint.probe);
    } else {
      registerFprobe(kernel, fp, loc.symbol);
    }
    this.points.set(tp, point);
  }

  private unregister(tp: TraceProbe): void {
    const p = this.points.get(tp);
    if (!p) return;
    this.points.delete(tp);
    if (p.tracepoint) this.dyn.kernel.tracepoints.unregister(p.tracepoint.name, p.tracepoint.probe);
    unregisterFprobe(this.dyn.kernel, p.fp);
  }

  /** The tracepoint's callback: the probe stub, called with the prototype's arguments (its fprobe sees the entry). */
  private stubCaller(stub: string): TracepointProbe<never> {
    const kernel = this.dyn.kernel;
    const params = kernel.types.funcProto(stub)?.params.slice(1) ?? [];
    const probe: TracepointProbe<Readonly<Record<string, unknown>>> = (ctx, args) => {
      const task = ctx.task;
      const values = [0n, ...tracepointParams(kernel, params, args, this.dyn.events.strings)];
      const outer = this.stubContext.get(task);
      this.stubContext.set(task, ctx);
      try {
        void executorOf(kernel).call(task, stub, values);
      } finally {
        if (outer) this.stubContext.set(task, outer);
        else this.stubContext.delete(task);
      }
    };
    return probe as TracepointProbe<never>;
  }

  /** The context a record made now shows: inside a probe stub, one level deeper than the tracepoint's own event. */
  private recordContext(task: Task): ExecContext {
    const tpctx = this.stubContext.get(task);
    return tpctx ? bumpPreempt(tpctx) : contextOf(this.dyn.kernel, task);
  }

  private source(regs: PtRegs, task: Task, edata?: Buffer): FetchSource {
    return { regs, edata, comm: task.comm, mem: probeMemory(this.dyn.kernel, task) };
  }

  /** trace_fprobe_entry_handler(): the entry arguments an exit probe fetches. */
  private storeEntry(tp: TraceProbe, regs: PtRegs, data: Buffer | undefined, task: Task): number {
    if (data) storeEntryData(tp.entryArgs, regs, probeMemory(this.dyn.kernel, task)).copy(data);
    return 0;
  }

  /** fentry_dispatcher() → __fentry_trace_func(). */
  private fentry(tp: TraceProbe, ip: bigint, regs: PtRegs, task: Task): number {
    const type = tp.ev && this.dyn.typeOf(tp.ev);
    if (!type || !tp.ev?.enabled) return 0;
    const ctx = this.recordContext(task);
    const src = this.source(regs, task);
    this.dyn.events.emit(type, ctx, () =>
      buildProbeRecord(tp, TRACE_ENTRY_SIZE + 8, src, (b) => {
        writeCommonHeader(b, type.id, ctx);
        b.writeBigUInt64LE(BigInt.asUintN(64, ip), TRACE_ENTRY_SIZE);
      }),
    );
    return 0;
  }

  /** fexit_dispatcher() → __fexit_trace_func(). */
  private fexit(tp: TraceProbe, ip: bigint, retIp: bigint, regs: PtRegs, data: Buffer | undefined, task: Task): void {
    const type = tp.ev && this.dyn.typeOf(tp.ev);
    if (!type || !tp.ev?.enabled) return;
    const ctx = contextOf(this.dyn.kernel, task);
    const src = this.source(regs, task, data);
    this.dyn.events.emit(type, ctx, () =>
      buildProbeRecord(tp, TRACE_ENTRY_SIZE + 16, src, (b) => {
        writeCommonHeader(b, type.id, ctx);
        b.writeBigUInt64LE(BigInt.asUintN(64, ip), TRACE_ENTRY_SIZE);
        b.writeBigUInt64LE(BigInt.asUintN(64, retIp), TRACE_ENTRY_SIZE + 8);
      }),
    );
  }
}
