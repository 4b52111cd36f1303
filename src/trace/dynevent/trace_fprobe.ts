/**
 * fprobe and tracepoint-probe events at run time (trace_fprobe.c): entry
 * records (`__probe_ip`, the arguments from ftrace_regs), exit records
 * (`__probe_func`, `__probe_ret_ip`, `$retval`, entry arguments saved in the
 * fprobe's entry data), and tracepoint probes fed by the tracepoint with its
 * prototype's arguments.
 */
import type { ExecContext } from '../../kernel/context.js';
import type { TracepointProbe } from '../../kernel/tracepoint.js';
import { TRACE_ENTRY_SIZE, writeCommonHeader } from '../event_type.js';
import { buildProbeRecord, type FetchRegs, type FetchSource } from '../probe/fetch_exec.js';
import type { FprobeLocation, ProbeEvent, TraceProbe } from '../probe/trace_probe.js';
import type { DynEvents, ProbeRuntime } from './dyn_events.js';
import { bumpPreempt } from './probe_context.js';
import type { ProbeEventType } from './probe_event_type.js';
import { probeMemory } from './probe_memory.js';
import { tracepointParams } from './tracepoint_args.js';

/** Registers holding a tracepoint stub's arguments: `void *__data` first, then the prototype's. */
class StubRegs implements FetchRegs {
  constructor(private readonly values: readonly bigint[]) {}
  atOffset(): bigint | undefined {
    return 0n;
  }
  get sp(): bigint {
    return 0n;
  }
  get ax(): bigint {
    return 0n;
  }
  arg(n: number): bigint | undefined {
    return n <= 6 ? (this.values[n - 1] ?? 0n) : undefined;
  }
}

/** What an armed probe point holds. */
interface Armed {
  disarm(): void;
}

export class FprobeRuntime implements ProbeRuntime {
  private readonly armed = new Map<TraceProbe, Armed>();

  constructor(private readonly dyn: DynEvents) {}

  added(tp: TraceProbe): void {
    if (tp.ev?.enabled) this.arm(tp);
  }

  removed(tp: TraceProbe): void {
    this.disarm(tp);
  }

  enable(ev: ProbeEvent, _type: ProbeEventType): void {
    const done: TraceProbe[] = [];
    try {
      for (const tp of ev.probes) {
        this.arm(tp);
        done.push(tp);
      }
    } catch (e) {
      for (const tp of done) this.disarm(tp);
      throw e;
    }
  }

  disable(ev: ProbeEvent, _type: ProbeEventType): void {
    for (const tp of ev.probes) this.disarm(tp);
  }

  private arm(tp: TraceProbe): void {
    if (this.armed.has(tp)) return;
    const loc = tp.loc as FprobeLocation;
    if (loc.tracepoint) this.armed.set(tp, this.armTracepoint(tp, loc));
  }

  private disarm(tp: TraceProbe): void {
    this.armed.get(tp)?.disarm();
    this.armed.delete(tp);
  }

  /** A tracepoint probe: the stub's prototype gives the arguments, the record names the stub's ftrace site. */
  private armTracepoint(tp: TraceProbe, loc: FprobeLocation): Armed {
    const kernel = this.dyn.kernel;
    const tps = kernel.tracepoints;
    const stubName = `__probestub_${loc.symbol}`;
    const stub = kernel.symbols.byName(stubName)[0];
    const ip = stub ? stub.addr + BigInt(stub.fentryOffset) : 0n;
    // the stub's parameters after its `void *__data`
    const params = kernel.types.funcProto(stubName)?.params.slice(1) ?? [];
    const te = this.dyn.events;
    const probe: TracepointProbe<Readonly<Record<string, unknown>>> = (ctx, args) => {
      const ev = tp.ev;
      const type = ev && this.dyn.typeOf(ev);
      if (!ev || !type) return;
      const values = [0n, ...tracepointParams(kernel, params, args, te.strings)];
      // the stub is entered through fprobe: one level deeper than the event's own record
      const rctx = bumpPreempt(ctx);
      this.emitEntry(tp, type.id, rctx, ip, { regs: new StubRegs(values), comm: ctx.task.comm, mem: probeMemory(kernel, ctx.task) });
    };
    tps.register(loc.symbol, probe as TracepointProbe<never>);
    return { disarm: () => tps.unregister(loc.symbol, probe as TracepointProbe<never>) };
  }

  /** __fentry_trace_func(): the entry record into every array where the event is on. */
  emitEntry(tp: TraceProbe, id: number, ctx: ExecContext, ip: bigint, src: FetchSource): void {
    const type = tp.ev && this.dyn.typeOf(tp.ev);
    if (!type) return;
    this.dyn.events.emit(type, ctx, () =>
      buildProbeRecord(tp, TRACE_ENTRY_SIZE + 8, src, (b) => {
        writeCommonHeader(b, id, ctx);
        b.writeBigUInt64LE(BigInt.asUintN(64, ip), TRACE_ENTRY_SIZE);
      }),
    );
  }

  /** __fexit_trace_func(): the exit record. */
  emitExit(tp: TraceProbe, id: number, ctx: ExecContext, func: bigint, retIp: bigint, src: FetchSource): void {
    const type = tp.ev && this.dyn.typeOf(tp.ev);
    if (!type) return;
    this.dyn.events.emit(type, ctx, () =>
      buildProbeRecord(tp, TRACE_ENTRY_SIZE + 16, src, (b) => {
        writeCommonHeader(b, id, ctx);
        b.writeBigUInt64LE(BigInt.asUintN(64, func), TRACE_ENTRY_SIZE);
        b.writeBigUInt64LE(BigInt.asUintN(64, retIp), TRACE_ENTRY_SIZE + 8);
      }),
    );
  }
}
