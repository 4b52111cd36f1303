/**
 * kprobe and kretprobe events at run time (trace_kprobe.c): each probe point
 * is a kprobe (or kretprobe) registered at definition, disabled until its
 * event is enabled; its dispatcher counts hits and records `__probe_ip` and
 * the arguments (kretprobes: `__probe_func`, `__probe_ret_ip`, `$retval`,
 * and the entry arguments their entry handler saved).
 */
import { TRACE_FLAG_HARDIRQ, TRACE_FLAG_IRQS_OFF, TRACE_FLAG_NMI, type ExecContext } from '../../kernel/context.js';
import type { PtRegs } from '../../kernel/regs.js';
import type { Task } from '../../kernel/task.js';
import { contextOf } from '../../ftrace/kernel_seam.js';
import { Kprobe, Kprobes, Kretprobe, type KretprobeInstance } from '../../ftrace/kprobes.js';
import { TRACE_ENTRY_SIZE, writeCommonHeader } from '../event_type.js';
import { buildProbeRecord, storeEntryData } from '../probe/fetch_exec.js';
import type { KprobeLocation, ProbeEvent, TraceProbe } from '../probe/trace_probe.js';
import type { DynEvents, ProbeRuntime } from './dyn_events.js';
import { genCtxDec } from './probe_context.js';
import type { ProbeEventType } from './probe_event_type.js';
import { probeMemory } from './probe_memory.js';

/** One probe point: its kprobe (or kretprobe), while registered, and trace_kprobe's hit count. */
interface KprobePoint {
  kp?: Kprobe;
  rp?: Kretprobe;
  nhit: number;
}

export class KprobeRuntime implements ProbeRuntime {
  private readonly points = new Map<TraceProbe, KprobePoint>();

  constructor(private readonly dyn: DynEvents) {}

  private get kprobes(): Kprobes {
    return Kprobes.of(this.dyn.kernel);
  }

  /** __register_trace_kprobe(): registered now, enabled only if the event is on; a probe that waits for its module stays unregistered. */
  added(tp: TraceProbe): void {
    const loc = tp.loc as KprobeLocation;
    const point: KprobePoint = { nhit: 0 };
    this.points.set(tp, point);
    const where = loc.symbol !== undefined ? { symbol: loc.symbol, offset: loc.offset } : { addr: loc.addr, offset: 0 };
    const name = `${tp.group}/${tp.event}`;
    const disabled = !tp.ev?.enabled;
    try {
      if (tp.isReturn) {
        const rp = new Kretprobe({
          ...where,
          name,
          maxactive: loc.maxactive,
          dataSize: tp.entryArgs.length * 8,
          entry: tp.entryArgs.length ? (ri, regs) => this.entryHandler(tp, ri, regs) : undefined,
          handler: (ri, regs) => this.kretprobeDispatcher(tp, point, ri, regs),
        });
        this.kprobes.registerKretprobe(rp, { disabled });
        point.rp = rp;
      } else {
        const kp = new Kprobe({ ...where, name, pre: (p, regs, task) => this.kprobeDispatcher(tp, point, p, regs, task) });
        this.kprobes.register(kp, { disabled });
        point.kp = kp;
      }
    } catch {
      // not registrable now (an unloaded module's symbol): the probe waits, as the kernel's does
    }
  }

  removed(tp: TraceProbe): void {
    const point = this.points.get(tp);
    this.points.delete(tp);
    if (point?.rp) this.kprobes.unregisterKretprobe(point.rp);
    if (point?.kp) this.kprobes.unregister(point.kp);
  }

  /** enable_trace_kprobe(): every registered probe of the event, rolled back if one fails. */
  enable(ev: ProbeEvent, _type: ProbeEventType): void {
    const done: Kprobe[] = [];
    try {
      for (const tp of ev.probes) {
        const kp = this.kprobeOf(tp);
        if (!kp) continue;
        this.kprobes.enable(kp);
        done.push(kp);
      }
    } catch (e) {
      for (const kp of done) this.kprobes.disable(kp);
      throw e;
    }
  }

  disable(ev: ProbeEvent, _type: ProbeEventType): void {
    for (const tp of ev.probes) {
      const kp = this.kprobeOf(tp);
      if (kp) this.kprobes.disable(kp);
    }
  }

  private kprobeOf(tp: TraceProbe): Kprobe | undefined {
    const p = this.points.get(tp);
    return p?.rp?.kp ?? p?.kp;
  }

  /** trace_kprobe_nhit() and trace_kprobe_missed(). */
  profile(tp: TraceProbe): { hits: number; missed: number } {
    const p = this.points.get(tp);
    if (!p) return { hits: 0, missed: 0 };
    const missed = p.rp ? p.rp.kp.nmissed + p.rp.nmissed : (p.kp?.nmissed ?? 0);
    return { hits: p.nhit, missed };
  }

  /**
   * The context a kprobe's record shows: through ftrace, the handler's
   * context as the ftrace core keeps it; from an int3, the NMI-like entry
   * (hardirq, NMI, interrupts off) with trace_event_buffer_reserve()'s
   * decrement borrowing into the flags.
   */
  private entryContext(p: Kprobe, task: Task): ExecContext {
    const ctx = contextOf(this.dyn.kernel, task);
    if (p.ftrace) return ctx;
    return genCtxDec({ ...ctx, flags: ctx.flags | TRACE_FLAG_NMI | TRACE_FLAG_HARDIRQ | TRACE_FLAG_IRQS_OFF });
  }

  /** kprobe_dispatcher() → __kprobe_trace_func(). */
  private kprobeDispatcher(tp: TraceProbe, point: KprobePoint, p: Kprobe, regs: PtRegs, task: Task): boolean {
    point.nhit++;
    const type = tp.ev && this.dyn.typeOf(tp.ev);
    if (!type || !tp.ev?.enabled) return false;
    const ctx = this.entryContext(p, task);
    const kernel = this.dyn.kernel;
    this.dyn.events.emit(type, ctx, () =>
      buildProbeRecord(tp, TRACE_ENTRY_SIZE + 8, { regs, comm: task.comm, mem: probeMemory(kernel, task) }, (b) => {
        writeCommonHeader(b, type.id, ctx);
        b.writeBigUInt64LE(p.addr, TRACE_ENTRY_SIZE);
      }),
    );
    return false;
  }

  /** trace_kprobe_entry_handler(): the entry arguments a return probe fetches, kept in the instance. */
  private entryHandler(tp: TraceProbe, ri: KretprobeInstance, regs: PtRegs): number {
    storeEntryData(tp.entryArgs, regs, probeMemory(this.dyn.kernel, ri.task)).copy(ri.data);
    return 0;
  }

  /** kretprobe_dispatcher() → __kretprobe_trace_func(). */
  private kretprobeDispatcher(tp: TraceProbe, point: KprobePoint, ri: KretprobeInstance, regs: PtRegs): void {
    point.nhit++;
    const type = tp.ev && this.dyn.typeOf(tp.ev);
    if (!type || !tp.ev?.enabled) return;
    const task = ri.task;
    const kernel = this.dyn.kernel;
    const ctx = contextOf(kernel, task);
    this.dyn.events.emit(type, ctx, () =>
      buildProbeRecord(tp, TRACE_ENTRY_SIZE + 16, { regs, edata: ri.data, comm: task.comm, mem: probeMemory(kernel, task) }, (b) => {
        writeCommonHeader(b, type.id, ctx);
        b.writeBigUInt64LE(ri.funcAddr, TRACE_ENTRY_SIZE);
        b.writeBigUInt64LE(ri.retAddr, TRACE_ENTRY_SIZE + 8);
      }),
    );
  }
}
