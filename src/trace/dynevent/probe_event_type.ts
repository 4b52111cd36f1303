/**
 * The trace event of a probe (kprobe, kretprobe, fprobe, tracepoint probe,
 * eprobe, uprobe): its id, the fields and print fmt the parser computed, and
 * how the trace output prints a record (print_kprobe_event(),
 * print_kretprobe_event(), print_fentry/fexit_event(), print_eprobe_event(),
 * print_uprobe_event()).
 */
import type { Kernel } from '../../kernel/kernel.js';
import { TRACE_ENTRY_SIZE, type EventField, type OutputContext, type TraceEventType, type TraceRecord } from '../event_type.js';
import { printIpSym } from '../ksym.js';
import { printProbeArgs } from '../probe/probe_print.js';
import type { EprobeLocation, ProbeEvent } from '../probe/trace_probe.js';
import { sprintSymbol } from './probe_memory.js';

/** The kretprobe trampoline a return address shows when a kretprobe hooked the return (is_kretprobe_trampoline()). */
const KRETPROBE_TRAMPOLINES = ['arch_rethook_trampoline', '__kretprobe_trampoline'];

export class ProbeEventType implements TraceEventType {
  private trampolines?: Set<bigint>;

  constructor(
    readonly id: number,
    readonly ev: ProbeEvent,
    private readonly kernel: Kernel,
  ) {}

  get system(): string {
    return this.ev.system;
  }

  get name(): string {
    return this.ev.name;
  }

  get fields(): readonly EventField[] {
    return this.ev.fields();
  }

  get printFmt(): string {
    return this.ev.printFmt();
  }

  private isKretprobeTrampoline(addr: bigint): boolean {
    if (!this.trampolines) {
      this.trampolines = new Set();
      for (const n of KRETPROBE_TRAMPOLINES) {
        const s = this.kernel.symbols.lookupName(n);
        if (s) this.trampolines.add(s.addr);
      }
    }
    return this.trampolines.has(addr);
  }

  /** seq_print_ip_sym() with kretprobed(): the trampoline's name is replaced. */
  private ipSym(ip: bigint, offset: boolean, ctx: OutputContext): string {
    const symAddr = ctx.option('sym-addr');
    if (ip !== 0n && this.isKretprobeTrampoline(ip)) {
      return `[unknown/kretprobe'd]${symAddr ? ` <${ip.toString(16).padStart(16, '0')}>` : ''}`;
    }
    return printIpSym(this.kernel, ip, { symOffset: offset, symAddr });
  }

  output(rec: TraceRecord, ctx: OutputContext): string {
    const data = rec.data;
    const tp = this.ev.primary;
    if (!tp) return `${this.name}: (unknown)`;
    const u64 = (off: number): bigint => (off + 8 <= data.length ? data.readBigUInt64LE(off) : 0n);
    let head: string;
    switch (tp.loc.kind) {
      case 'eprobe': {
        const loc = tp.loc as EprobeLocation;
        head = `(${loc.system}.${loc.event})`;
        break;
      }
      case 'uprobe':
        head = tp.isReturn
          ? `(0x${u64(TRACE_ENTRY_SIZE + 8).toString(16)} <- 0x${u64(TRACE_ENTRY_SIZE).toString(16)})`
          : `(0x${u64(TRACE_ENTRY_SIZE).toString(16)})`;
        break;
      default:
        head = tp.isReturn
          ? `(${this.ipSym(u64(TRACE_ENTRY_SIZE + 8), true, ctx)} <- ${this.ipSym(u64(TRACE_ENTRY_SIZE), false, ctx)})`
          : `(${this.ipSym(u64(TRACE_ENTRY_SIZE), true, ctx)})`;
    }
    const args = printProbeArgs(tp.args, data, this.ev.argsOffset(), (a) => sprintSymbol(this.kernel, a));
    return `${this.name}: ${head}${args}`;
  }
}
