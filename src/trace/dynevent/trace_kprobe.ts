/**
 * kprobe and kretprobe events (trace_kprobe.c): a TraceKprobe is one probe of
 * a kprobe event — its place, the kprobe (or kretprobe) registered at
 * definition and enabled with the event, its hit count, and the records its
 * handlers make (`__probe_ip`; kretprobes `__probe_func`, `__probe_ret_ip`,
 * `$retval` and the entry arguments their entry handler saved).
 * The parser half is trace_kprobe_parse.ts.
 */
import type { ModuleState } from '../../kernel/module.js';
import { TRACE_FLAG_HARDIRQ, TRACE_FLAG_IRQS_OFF, TRACE_FLAG_NMI, type ExecContext } from '../../kernel/context.js';
import { isKernelError } from '../../kernel/errno.js';
import type { PtRegs } from '../../kernel/regs.js';
import type { Task } from '../../kernel/task.js';
import { Kprobe } from '../../ftrace/kprobe.js';
import { Kretprobe, type KretprobeInstance } from '../../ftrace/kretprobes.js';
import { TRACE_ENTRY_SIZE, writeCommonHeader, type OutputContext } from '../event_type.js';
import { buildProbeRecord, storeEntryData } from '../probe/fetch_exec.js';
import { truncate } from '../probe/kstr.js';
import { kprobeOnFuncEntry } from '../probe/kprobe_model.js';
import type { KRet } from '../probe/parse_context.js';
import { ProbeDynEvent, probeIpHead, type AppendableProbe, type TraceProbe } from '../probe/trace_probe.js';
import { updateSymbolArgs } from '../probe/update_arg.js';
import { genCtxDec } from './probe_context.js';
import { probeMemory } from './probe_memory.js';
import type { DynEventRegistry, DynEventRuntime } from './trace_dynevent.js';
import { writeU64LE } from '../../kernel/u64_le.js';

interface KprobeLocation {
  /** `[mod:]symbol` as written, undefined for an address probe. */
  symbol?: string;
  offset: number;
  /** Address probe: the address written; after registration, the probed address. */
  addr?: bigint;
  /** rp.maxactive: as given, or the default once registered (0 while deferred). */
  maxactive: number;
}

export class TraceKprobe extends ProbeDynEvent implements AppendableProbe {
  readonly type = 'kprobe';
  /** Its kprobe, or its kretprobe, once registered. */
  private kp?: Kprobe;
  private rp?: Kretprobe;
  /** trace_kprobe's nhit. */
  private nhit = 0;

  constructor(
    reg: DynEventRegistry,
    tp: TraceProbe,
    readonly loc: KprobeLocation,
  ) {
    super(reg, tp);
  }

  // ------------------------------------------------------------ dynamic_events

  /** Where it is, as listings show it: `sym+off`, or the (hashed) address. */
  private place(): string {
    const { loc } = this;
    if (loc.symbol === undefined) return `0x${this.reg.hashPointer(loc.addr ?? 0n)}`;
    return loc.offset ? `${loc.symbol}+${loc.offset}` : loc.symbol;
  }

  /** trace_kprobe_show(). */
  protected showHead(): string {
    const { tp, loc } = this;
    let s = tp.isReturn ? 'r' : 'p';
    if (tp.isReturn && loc.maxactive) s += String(loc.maxactive);
    return `${s}:${tp.group}/${tp.name} ${this.place()}`;
  }

  protected matchHead(word: string): boolean {
    return truncate(this.place(), 64) === word;
  }

  sameLocation(other: ProbeDynEvent): boolean {
    return other instanceof TraceKprobe && (other.loc.symbol ?? 'unknown') === (this.loc.symbol ?? 'unknown') && other.loc.offset === this.loc.offset;
  }

  // ------------------------------------------------------------ registration

  /** __register_trace_kprobe(); an unknown `module:symbol` is accepted and waits for its module. */
  register(): KRet {
    const ret = this.checkRegister();
    if (ret && (ret !== 'ENOENT' || this.moduleExists())) return ret;
    this.arm();
    return 0;
  }

  /** trace_kprobe_address(): where the probe sits (0 if the symbol is unknown). */
  private address(): bigint {
    const { loc } = this;
    if (loc.symbol === undefined) return loc.addr ?? 0n;
    const s = this.reg.env.kallsyms.lookupName(loc.symbol);
    return s ? s.addr + BigInt(loc.offset) : 0n;
  }

  /** The verdicts of __register_trace_kprobe(): notrace function, @symbols, the kretprobe entry check, then register_kprobe(). */
  private checkRegister(): KRet {
    const { tp, loc } = this;
    const { env } = this.reg;
    const where = this.address();
    if (where && env.kallsyms.lookupAddr(where)) {
      const site = env.kprobeSite(where, true);
      if (!site.ok && site.why === 'notrace') return 'EINVAL';
    }
    const u = updateSymbolArgs(tp.args, env);
    if (u) return u;
    if (tp.isReturn) {
      const e = kprobeOnFuncEntry(env, loc.symbol ? undefined : loc.addr, loc.symbol, loc.offset);
      if (e) return e;
      if (loc.maxactive <= 0) loc.maxactive = Math.max(10, 2 * env.possibleCpus);
    }
    // register_kprobe(): _kprobe_addr() then the address checks
    let target: bigint;
    if (loc.symbol !== undefined) {
      const s = env.kallsyms.lookupName(loc.symbol);
      if (!s) return 'ENOENT';
      target = BigInt.asUintN(64, s.addr + BigInt(loc.offset));
    } else {
      if (!loc.addr) return 'EINVAL';
      target = loc.addr;
    }
    if (!env.kallsyms.lookupAddr(target)) return 'ENOENT';
    const site = env.kprobeSite(target, false);
    if (!site.ok) return site.errno;
    if (loc.symbol === undefined) loc.addr = site.addr;
    return 0;
  }

  /** trace_kprobe_module_exist(): a `mod:sym` probe waits for an unloaded module. */
  private moduleExists(): boolean {
    const { symbol } = this.loc;
    if (symbol === undefined) return false;
    const colon = symbol.indexOf(':');
    if (colon < 0) return true;
    return this.reg.env.kallsyms.moduleLoaded(symbol.slice(0, colon));
  }

  /** Its kprobe (or kretprobe) in the live kernel: registered now, enabled only if the event is on. */
  private arm(): void {
    const rt = this.reg.runtime;
    if (!rt) return;
    const { tp, loc } = this;
    const kprobes = rt.ftrace.kprobes;
    const where = loc.symbol !== undefined ? { symbol: loc.symbol, offset: loc.offset } : { addr: loc.addr, offset: 0 };
    const name = `${tp.group}/${tp.name}`;
    const disabled = !this.event.enabled;
    try {
      if (tp.isReturn) {
        const rp = new Kretprobe({
          ...where,
          name,
          maxactive: loc.maxactive,
          dataSize: tp.entryArgs.length * 8,
          entry: tp.entryArgs.length ? (ri, regs) => this.entryHandler(rt, ri, regs) : undefined,
          handler: (ri, regs) => this.kretprobeDispatcher(rt, ri, regs),
        });
        kprobes.registerKretprobe(rp, { disabled });
        this.rp = rp;
      } else {
        const kp = new Kprobe({ ...where, name, pre: (p, regs, task) => this.kprobeDispatcher(rt, p, regs, task) });
        kprobes.register(kp, { disabled });
        this.kp = kp;
      }
    } catch (e) {
      // not registrable now (an unloaded module's symbol): the probe waits, as the kernel's does
      if (!isKernelError(e)) throw e;
    }
  }

  /** trace_kprobe_module_callback(): a probe on a `mod:symbol` is registered when its module comes, and let go when it goes. */
  moduleChanged(module: string, state: ModuleState): void {
    if (!this.loc.symbol?.startsWith(`${module}:`)) return;
    if (state === 'coming' && !this.armed) this.arm();
    else if (state === 'going' && this.armed) this.unregister();
  }

  protected unregister(): void {
    if (this.rp) this.reg.live().ftrace.kprobes.unregisterKretprobe(this.rp);
    if (this.kp) this.reg.live().ftrace.kprobes.unregister(this.kp);
    this.rp = this.kp = undefined;
  }

  // ------------------------------------------------------------ run time

  private get armed(): Kprobe | undefined {
    return this.rp?.kp ?? this.kp;
  }

  enable(): void {
    const kp = this.armed;
    if (kp) this.reg.live().ftrace.kprobes.enable(kp);
  }

  disable(): void {
    const kp = this.armed;
    if (kp) this.reg.live().ftrace.kprobes.disable(kp);
  }

  /** trace_kprobe_nhit() and trace_kprobe_missed(). */
  profile(): { hits: number; missed: number } {
    const missed = this.rp ? this.rp.kp.nmissed + this.rp.nmissed : (this.kp?.nmissed ?? 0);
    return { hits: this.nhit, missed };
  }

  /**
   * The context a kprobe's record shows: through ftrace, the handler's
   * context as the ftrace core keeps it; from an int3, the NMI-like entry
   * (hardirq, NMI, interrupts off) with trace_event_buffer_reserve()'s
   * decrement borrowing into the flags.
   */
  private entryContext(rt: DynEventRuntime, p: Kprobe, task: Task): ExecContext {
    const ctx = rt.kernel.context(task);
    if (p.ftrace) return ctx;
    return genCtxDec({ ...ctx, flags: ctx.flags | TRACE_FLAG_NMI | TRACE_FLAG_HARDIRQ | TRACE_FLAG_IRQS_OFF });
  }

  /** kprobe_dispatcher() → __kprobe_trace_func(). */
  private kprobeDispatcher(rt: DynEventRuntime, p: Kprobe, regs: PtRegs, task: Task): boolean {
    this.nhit++;
    const ev = this.event;
    if (!ev.enabled) return false;
    const ctx = this.entryContext(rt, p, task);
    rt.events.emit(ev, ctx, () =>
      buildProbeRecord(this.tp, TRACE_ENTRY_SIZE + 8, { regs, comm: task.comm, mem: probeMemory(rt.kernel, task) }, (b) => {
        writeCommonHeader(b, ev.id, ctx);
        writeU64LE(b, TRACE_ENTRY_SIZE, p.addr);
      }),
    );
    return false;
  }

  /** trace_kprobe_entry_handler(): the entry arguments a return probe fetches, kept in the instance. */
  private entryHandler(rt: DynEventRuntime, ri: KretprobeInstance, regs: PtRegs): number {
    storeEntryData(this.tp.entryArgs, regs, probeMemory(rt.kernel, ri.task)).copy(ri.data);
    return 0;
  }

  /** kretprobe_dispatcher() → __kretprobe_trace_func(). */
  private kretprobeDispatcher(rt: DynEventRuntime, ri: KretprobeInstance, regs: PtRegs): void {
    this.nhit++;
    const ev = this.event;
    if (!ev.enabled) return;
    const task = ri.task;
    const ctx = rt.kernel.context(task);
    rt.events.emit(ev, ctx, () =>
      buildProbeRecord(this.tp, TRACE_ENTRY_SIZE + 16, { regs, edata: ri.data, comm: task.comm, mem: probeMemory(rt.kernel, task) }, (b) => {
        writeCommonHeader(b, ev.id, ctx);
        writeU64LE(b, TRACE_ENTRY_SIZE, ri.funcAddr);
        writeU64LE(b, TRACE_ENTRY_SIZE + 8, ri.retAddr);
      }),
    );
  }

  /** print_kprobe_event() / print_kretprobe_event(). */
  printHead(data: Buffer, ctx: OutputContext): string {
    return probeIpHead(this.reg.live().kernel, this.tp.isReturn, data, ctx);
  }
}

/** kprobe_profile: `  %-44s %15lu %15lu` (event, hits, misses) per kprobe. */
export function kprobeProfile(reg: DynEventRegistry): string {
  let out = '';
  for (const ev of reg.list) {
    if (!(ev instanceof TraceKprobe)) continue;
    const { hits, missed } = ev.profile();
    out += `  ${ev.tp.name.padEnd(44)} ${String(hits).padStart(15)} ${String(missed).padStart(15)}\n`;
  }
  return out;
}
