/**
 * fprobe and tracepoint-probe events (trace_fprobe.c): a TraceFprobe is one
 * probe of such an event — its functions (or, for `t:`, the tracepoint's
 * probe stub, which the tracepoint then calls with its prototype's
 * arguments) and its fprobe. As the profile's fprobeRegisters says, the
 * fprobe registers when the event is enabled and unregisters when disabled
 * (7.x), or registers at definition (disabled) and only flips
 * FPROBE_FL_DISABLED (6.12). Entry records carry `__probe_ip`, exit records
 * `__probe_func`, `__probe_ret_ip`, `$retval` and the entry arguments kept in
 * the fprobe's entry data. The parser half is trace_fprobe_parse.ts.
 */
import type { ExecContext } from '../../kernel/context.js';
import { fail, isKernelError } from '../../kernel/errno.js';
import type { PtRegs } from '../../kernel/regs.js';
import type { Task } from '../../kernel/task.js';
import type { ModuleState } from '../../kernel/module.js';
import type { TracepointProbe } from '../../kernel/tracepoint.js';
import { disableFprobe, enableFprobe, Fprobe, registerFprobe, unregisterFprobe } from '../../ftrace/fprobe.js';
import { TRACE_ENTRY_SIZE, writeCommonHeader, type OutputContext } from '../event_type.js';
import { buildProbeRecord, storeEntryData, type FetchSource } from '../probe/fetch_exec.js';
import { truncate } from '../probe/kstr.js';
import type { KRet } from '../probe/parse_context.js';
import { ProbeDynEvent, probeIpHead, type AppendableProbe, type TraceProbe } from '../probe/trace_probe.js';
import { updateSymbolArgs } from '../probe/update_arg.js';
import { bumpPreempt } from './probe_context.js';
import { probeMemory } from './probe_memory.js';
import type { DynEventRegistry, DynEventRuntime } from './trace_dynevent.js';
import { tracepointParams } from './tracepoint_args.js';
import { writeU64LE } from '../../kernel/u64_le.js';

interface FprobeLocation {
  /** Function (glob) or tracepoint name. */
  symbol: string;
  tracepoint: boolean;
  /** fp.nr_maxactive (where the profile has fprobeMaxactive). */
  maxactive: number;
}

/** The tracepoint calling a probe stub on each task now: what the records made inside the stub build on. */
export class TprobeStubCalls {
  private readonly calls = new Map<Task, ExecContext>();

  /** `f` runs as the stub call of the tracepoint whose context is `ctx` (a nested call restores the outer one). */
  run(ctx: ExecContext, f: () => void): void {
    const task = ctx.task;
    const outer = this.calls.get(task);
    this.calls.set(task, ctx);
    try {
      f();
    } finally {
      if (outer) this.calls.set(task, outer);
      else this.calls.delete(task);
    }
  }

  /** The context of the tracepoint calling a stub on `task`, if one is. */
  of(task: Task): ExecContext | undefined {
    return this.calls.get(task);
  }
}

export class TraceFprobe extends ProbeDynEvent implements AppendableProbe {
  readonly type = 'fprobe';
  /** Its fprobe while registered. */
  private fp?: Fprobe;
  /** A tracepoint probe's callback on its tracepoint, which calls the stub. */
  private tpoint?: { name: string; probe: TracepointProbe<never> };

  constructor(
    reg: DynEventRegistry,
    tp: TraceProbe,
    readonly loc: FprobeLocation,
  ) {
    super(reg, tp);
  }

  // ------------------------------------------------------------ dynamic_events

  /** trace_fprobe_show(). */
  protected showHead(): string {
    const { tp, loc } = this;
    let s = loc.tracepoint ? 't' : 'f';
    if (this.reg.env.profile.fprobeMaxactive && tp.isReturn && loc.maxactive) s += String(loc.maxactive);
    return `${s}:${tp.group}/${tp.name} ${loc.symbol}${tp.isReturn ? '%return' : ''}`;
  }

  protected matchHead(word: string): boolean {
    return truncate(this.loc.symbol, 64) === word;
  }

  /** An entry and an exit probe, or an fprobe and a tracepoint probe, make different events. */
  sameKind(other: ProbeDynEvent): boolean {
    return super.sameKind(other) && other instanceof TraceFprobe && other.loc.tracepoint === this.loc.tracepoint;
  }

  sameLocation(other: ProbeDynEvent): boolean {
    return other instanceof TraceFprobe && other.loc.symbol === this.loc.symbol;
  }

  // ------------------------------------------------------------ registration

  /** Whether the fprobe registers at definition (kept, disabled, while the event is off) rather than on enable. */
  private get atDefinition(): boolean {
    return this.reg.env.profile.fprobeRegisters === 'definition';
  }

  /**
   * What the fprobe's target needs at definition time. Registered on enable,
   * the pattern need only match a traceable function
   * (trace_fprobe_verify_target); registered at definition, the fprobe
   * registers at once (register_fprobe(): the symbol, as an ftrace filter
   * word, must match, EINVAL otherwise).
   */
  register(): KRet {
    const ret = this.verifyTarget();
    if (ret) return ret;
    const rt = this.reg.runtime;
    // registered at definition, disabled unless the event is on
    if (rt && (this.atDefinition || this.event.enabled)) {
      try {
        this.attach(rt);
      } catch (e) {
        // the target was checked: nothing more to say here
        if (!isKernelError(e)) throw e;
      }
    }
    return 0;
  }

  private verifyTarget(): KRet {
    const { env } = this.reg;
    const { loc } = this;
    if (this.atDefinition) {
      const u = updateSymbolArgs(this.tp.args, env);
      if (u) return u;
      if (loc.tracepoint) return 0;
      // register_fprobe() sets the symbol as an ftrace filter: `12345` is the 12345th function
      return env.kallsyms.countFtraceFilter(loc.symbol) > 0 ? 0 : 'EINVAL';
    }
    if (loc.tracepoint) return 0;
    return env.kallsyms.countTraceable(loc.symbol) > 0 ? 0 : 'ENOENT';
  }

  /**
   * __register_trace_fprobe(), run when the event is enabled: `@symbol`
   * arguments resolve now (ENOENT if unknown) and the pattern must still match.
   * Registered at definition, all this was done then (verifyTarget): enabling
   * cannot fail.
   */
  private enableCheck(): KRet {
    const { env } = this.reg;
    if (this.atDefinition) return 0;
    const u = updateSymbolArgs(this.tp.args, env);
    if (u) return u;
    if (this.loc.tracepoint) return 0;
    return env.kallsyms.countTraceable(this.loc.symbol) > 0 ? 0 : 'ENOENT';
  }

  protected unregister(): void {
    this.detach();
  }

  // ------------------------------------------------------------ run time

  enable(): void {
    const rt = this.reg.live();
    if (this.atDefinition) {
      if (this.fp) enableFprobe(this.fp);
      return;
    }
    // __register_trace_fprobe() at enable: @symbols resolve now, the pattern must still match
    const ret = this.enableCheck();
    if (ret) fail(ret);
    this.attach(rt);
  }

  /** Registered on enable, the fprobe is detached; registered at definition, it stays, disabled. */
  disable(): void {
    if (this.atDefinition) {
      if (this.fp) disableFprobe(this.fp);
    } else this.detach();
  }

  /** A `t:` probe on a module's tracepoint: attached when the module comes (if it is to be armed), detached when it goes. */
  moduleChanged(module: string, state: ModuleState): void {
    if (!this.loc.tracepoint) return;
    const rt = this.reg.runtime;
    if (!rt) return;
    if (state === 'coming' && !this.fp && (this.atDefinition || this.event.enabled)) this.attach(rt);
    else if (state === 'going' && this.fp && rt.kernel.symbols.byName(`__probestub_${this.loc.symbol}`)[0]?.module === module) this.detach();
  }

  private attach(rt: DynEventRuntime): void {
    if (this.fp) return;
    const { tp, loc } = this;
    const kernel = rt.kernel;
    // a tracepoint of a module not loaded: the probe waits for it
    if (loc.tracepoint && !kernel.symbols.byName(`__probestub_${loc.symbol}`).length) return;
    const fp = new Fprobe({
      name: `${tp.group}/${tp.name}`,
      entryDataSize: tp.isReturn ? tp.entryArgs.length * 8 : 0,
      nrMaxactive: loc.maxactive,
      entry: tp.isReturn
        ? tp.entryArgs.length
          ? (_fp, _ip, _retIp, regs, data, task) => this.storeEntry(rt, regs, data, task)
          : undefined
        : (_fp, ip, _retIp, regs, _data, task) => this.fentry(rt, ip, regs, task),
      exit: tp.isReturn ? (_fp, ip, retIp, regs, data, task) => this.fexit(rt, ip, retIp, regs, data, task) : undefined,
    });
    if (this.atDefinition && !this.event.enabled) fp.disabled = true;
    let tpoint: TraceFprobe['tpoint'];
    if (loc.tracepoint) {
      const stub = `__probestub_${loc.symbol}`;
      registerFprobe(rt.ftrace, fp, [stub]);
      tpoint = { name: loc.symbol, probe: this.stubCaller(rt, stub) };
      kernel.tracepoints.register(loc.symbol, tpoint.probe);
    } else {
      registerFprobe(rt.ftrace, fp, loc.symbol);
    }
    this.fp = fp;
    this.tpoint = tpoint;
  }

  private detach(): void {
    const fp = this.fp;
    if (!fp) return;
    const rt = this.reg.live();
    this.fp = undefined;
    if (this.tpoint) rt.kernel.tracepoints.unregister(this.tpoint.name, this.tpoint.probe);
    this.tpoint = undefined;
    unregisterFprobe(rt.ftrace, fp);
  }

  /** The tracepoint's callback: the probe stub, called with the prototype's arguments (its fprobe sees the entry). */
  private stubCaller(rt: DynEventRuntime, stub: string): TracepointProbe<never> {
    const kernel = rt.kernel;
    const params = kernel.types.funcProto(stub)?.params.slice(1) ?? [];
    const probe: TracepointProbe<Readonly<Record<string, unknown>>> = (ctx, args) => {
      const values = [0n, ...tracepointParams(kernel, params, args, rt.events.strings)];
      rt.stubCalls.run(ctx, () => void kernel.exec.call(ctx.task, stub, values));
    };
    return probe as TracepointProbe<never>;
  }

  /** The context a record made now shows: inside a probe stub, one level deeper than the tracepoint's own event. */
  private recordContext(rt: DynEventRuntime, task: Task): ExecContext {
    const tpctx = rt.stubCalls.of(task);
    return tpctx ? bumpPreempt(tpctx) : rt.kernel.context(task);
  }

  private source(rt: DynEventRuntime, regs: PtRegs, task: Task, edata?: Buffer): FetchSource {
    return { regs, edata, comm: task.comm, mem: probeMemory(rt.kernel, task) };
  }

  /** trace_fprobe_entry_handler(): the entry arguments an exit probe fetches. */
  private storeEntry(rt: DynEventRuntime, regs: PtRegs, data: Buffer | undefined, task: Task): number {
    if (data) storeEntryData(this.tp.entryArgs, regs, probeMemory(rt.kernel, task)).copy(data);
    return 0;
  }

  /** fentry_dispatcher() → __fentry_trace_func(). */
  private fentry(rt: DynEventRuntime, ip: bigint, regs: PtRegs, task: Task): number {
    const ev = this.event;
    if (!ev.enabled) return 0;
    const ctx = this.recordContext(rt, task);
    const src = this.source(rt, regs, task);
    rt.events.emit(ev, ctx, () =>
      buildProbeRecord(this.tp, TRACE_ENTRY_SIZE + 8, src, (b) => {
        writeCommonHeader(b, ev.id, ctx);
        writeU64LE(b, TRACE_ENTRY_SIZE, BigInt.asUintN(64, ip));
      }),
    );
    return 0;
  }

  /** fexit_dispatcher() → __fexit_trace_func(). */
  private fexit(rt: DynEventRuntime, ip: bigint, retIp: bigint, regs: PtRegs, data: Buffer | undefined, task: Task): void {
    const ev = this.event;
    if (!ev.enabled) return;
    const ctx = rt.kernel.context(task);
    const src = this.source(rt, regs, task, data);
    rt.events.emit(ev, ctx, () =>
      buildProbeRecord(this.tp, TRACE_ENTRY_SIZE + 16, src, (b) => {
        writeCommonHeader(b, ev.id, ctx);
        writeU64LE(b, TRACE_ENTRY_SIZE, BigInt.asUintN(64, ip));
        writeU64LE(b, TRACE_ENTRY_SIZE + 8, BigInt.asUintN(64, retIp));
      }),
    );
  }

  /** print_fentry_event() / print_fexit_event(). */
  printHead(data: Buffer, ctx: OutputContext): string {
    return probeIpHead(this.reg.live().kernel, this.tp.isReturn, data, ctx);
  }
}
