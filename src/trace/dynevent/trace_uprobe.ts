/**
 * uprobe events (trace_uprobe.c): a TraceUprobe is one probe of a uprobe
 * event, on a file and offset. The emulated kernel runs no user code, but it
 * sees every exec: a uprobe on a program's start (the ELF entry point, or
 * DT_INIT's _init, as a file offset) hits when a process execs that program.
 * Probes elsewhere never hit. uprobe_profile counts the hits.
 * The parser half is trace_uprobe_parse.ts.
 */
import type { ExecContext } from '../../kernel/context.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { TracepointProbe } from '../../kernel/tracepoint.js';
import { TRACE_ENTRY_SIZE, writeCommonHeader, type OutputContext } from '../event_type.js';
import { buildProbeRecord } from '../probe/fetch_exec.js';
import { truncate } from '../probe/kstr.js';
import type { KRet } from '../probe/parse_context.js';
import { ProbeDynEvent, type AppendableProbe, type TraceProbe } from '../probe/trace_probe.js';
import { elfEntry } from '../../host/elf_entry.js';
import { probeMemory } from './probe_memory.js';
import type { DynEventRegistry } from './trace_dynevent.js';

/** Where a position-independent executable is mapped when nothing randomizes it. */
const PIE_BASE = 0x555555554000n;

const hex16 = (v: bigint): string => v.toString(16).padStart(16, '0');

interface UprobeLocation {
  path: string;
  offset: bigint;
  refCtrOffset: bigint;
}

export class TraceUprobe extends ProbeDynEvent implements AppendableProbe {
  readonly type = 'uprobe';
  /** uprobe_profile's count. */
  private nhit = 0;
  /** While armed: the probed file's identity and the user address of the probe (empty when it is not a program's start). */
  private armed?: { inode: string; vaddr: bigint };

  constructor(
    reg: DynEventRegistry,
    tp: TraceProbe,
    readonly loc: UprobeLocation,
  ) {
    super(reg, tp);
  }

  // ------------------------------------------------------------ dynamic_events

  /** The offset (and reference counter) as listings show them. */
  private place(): string {
    const { loc } = this;
    return `0x${hex16(loc.offset)}${loc.refCtrOffset ? `(0x${loc.refCtrOffset.toString(16)})` : ''}`;
  }

  protected showHead(): string {
    const { tp, loc } = this;
    return `${tp.isReturn ? 'r' : 'p'}:${tp.group}/${tp.name} ${loc.path}:${this.place()}`;
  }

  protected matchHead(word: string): boolean {
    const { path } = this.loc;
    if (!word.startsWith(path) || word[path.length] !== ':') return false;
    return truncate(this.place(), 64) === word.slice(path.length + 1);
  }

  /** The file identity uprobes compare (d_real_inode): the path the environment resolves to. */
  private inode(): string {
    const st = this.reg.env.statPath(this.loc.path);
    return typeof st === 'object' ? st.inode : this.loc.path;
  }

  sameLocation(other: ProbeDynEvent): boolean {
    return other instanceof TraceUprobe && other.inode() === this.inode() && other.loc.offset === this.loc.offset;
  }

  /** validate_ref_ctr_offset(): another uprobe at this place with another reference counter. */
  refCtrClash(): boolean {
    const inode = this.inode();
    return this.reg.list.some((ev) => ev instanceof TraceUprobe && ev.inode() === inode && ev.loc.offset === this.loc.offset && ev.loc.refCtrOffset !== this.loc.refCtrOffset);
  }

  // ------------------------------------------------------------ registration and run time

  /** Nothing to check: the uprobe goes in when the event is enabled (now, if it already is). */
  register(): KRet {
    if (this.event.enabled) this.arm();
    return 0;
  }

  protected unregister(): void {
    this.disarm();
  }

  enable(): void {
    this.arm();
  }

  disable(): void {
    this.disarm();
  }

  get hits(): number {
    return this.nhit;
  }

  get isArmed(): boolean {
    return this.armed !== undefined;
  }

  private arm(): void {
    const rt = this.reg.runtime;
    if (!rt || this.armed) return;
    const { loc } = this;
    const st = this.reg.env.statPath(loc.path);
    const entry = elfEntry(loc.path);
    const inode = typeof st === 'object' ? st.inode : undefined;
    // only the program's start (its entry point, and _init) is ever reached
    const at = [entry, entry?.init].find((x) => x?.fileOffset === loc.offset);
    if (!inode || !entry || !at || this.tp.isReturn) this.armed = { inode: '', vaddr: 0n };
    else this.armed = { inode, vaddr: entry.pie ? PIE_BASE + at.vaddr : at.vaddr };
    rt.uprobes.watch();
  }

  private disarm(): void {
    this.armed = undefined;
    this.reg.runtime?.uprobes.unwatchIfIdle();
  }

  /** A process starts the program `inode` names: a hit if this uprobe is on its start. */
  hit(ctx: ExecContext, inode: string): void {
    const armed = this.armed;
    if (!armed || armed.inode !== inode) return;
    this.nhit++;
    const rt = this.reg.live();
    const ev = this.event;
    const task = ctx.task;
    // user context: preemption on, nothing of the exec path held
    const uctx: ExecContext = { ...ctx, flags: 0, preemptCount: 0 };
    rt.events.emit(ev, uctx, () =>
      buildProbeRecord(this.tp, TRACE_ENTRY_SIZE + 8, { comm: task.comm, mem: probeMemory(rt.kernel, task) }, (b) => {
        writeCommonHeader(b, ev.id, uctx);
        b.writeBigUInt64LE(armed.vaddr, TRACE_ENTRY_SIZE);
      }),
    );
  }

  /** print_uprobe_event(): the user addresses in hex. */
  printHead(data: Buffer, _ctx: OutputContext): string {
    const u64 = (off: number): bigint => (off + 8 <= data.length ? data.readBigUInt64LE(off) : 0n);
    return this.tp.isReturn
      ? `(0x${u64(TRACE_ENTRY_SIZE + 8).toString(16)} <- 0x${u64(TRACE_ENTRY_SIZE).toString(16)})`
      : `(0x${u64(TRACE_ENTRY_SIZE).toString(16)})`;
  }
}

/** The exec watch armed uprobes share (what the uprobes core is to them): hits in definition order. */
export class UprobeExecs {
  private probe?: TracepointProbe<never>;

  constructor(
    private readonly kernel: Kernel,
    private readonly reg: DynEventRegistry,
  ) {}

  /** A uprobe was armed: execs are watched. */
  watch(): void {
    if (this.probe) return;
    const probe: TracepointProbe<Readonly<Record<string, unknown>>> = (ctx, args) => this.exec(ctx, String(args.filename ?? ''));
    this.probe = probe as TracepointProbe<never>;
    // after the exec event itself: the program starts once exec is done
    this.kernel.tracepoints.register('sched_process_exec', this.probe, -(1 << 20));
  }

  /** A uprobe was disarmed: with none armed, execs are no longer watched. */
  unwatchIfIdle(): void {
    if (!this.probe || this.reg.list.some((ev) => ev instanceof TraceUprobe && ev.isArmed)) return;
    this.kernel.tracepoints.unregister('sched_process_exec', this.probe);
    this.probe = undefined;
  }

  /** A process starts a program: uprobes on its entry point hit. */
  private exec(ctx: ExecContext, filename: string): void {
    const exe = ctx.task.exe ?? filename;
    const st = this.reg.env.statPath(exe);
    if (typeof st !== 'object') return;
    for (const ev of this.reg.list) if (ev instanceof TraceUprobe) ev.hit(ctx, st.inode);
  }
}

/** uprobe_profile: `  %s %-44s %15lu` (file, event, hits) per uprobe. */
export function uprobeProfile(reg: DynEventRegistry): string {
  let out = '';
  for (const ev of reg.list) {
    if (ev instanceof TraceUprobe) out += `  ${ev.loc.path} ${ev.tp.name.padEnd(44)} ${String(ev.hits).padStart(15)}\n`;
  }
  return out;
}
