/**
 * uprobe events at run time (trace_uprobe.c). The emulated kernel runs no
 * user code, but it sees every exec: a uprobe on a program's start (the
 * ELF entry point, or DT_INIT's _init, as a file offset) hits when a process
 * execs that program.
 * Probes elsewhere never hit. uprobe_profile counts the hits.
 */
import type { ExecContext } from '../../kernel/context.js';
import type { TracepointProbe } from '../../kernel/tracepoint.js';
import { TRACE_ENTRY_SIZE, writeCommonHeader } from '../event_type.js';
import { buildProbeRecord } from '../probe/fetch_exec.js';
import type { ProbeEvent, TraceProbe, UprobeLocation } from '../probe/trace_probe.js';
import type { DynEvents, ProbeRuntime } from './dyn_events.js';
import { elfEntry } from './elf_entry.js';
import type { ProbeEventType } from './probe_event_type.js';
import { probeMemory } from './probe_memory.js';

/** Where a position-independent executable is mapped when nothing randomizes it. */
const PIE_BASE = 0x555555554000n;

interface UprobePoint {
  nhit: number;
  /** The probed file's identity and the user address of the probe, when it is the entry point. */
  armed?: { inode: string; vaddr: bigint };
}

export class UprobeRuntime implements ProbeRuntime {
  private readonly points = new Map<TraceProbe, UprobePoint>();
  private execProbe?: TracepointProbe<never>;

  constructor(private readonly dyn: DynEvents) {}

  added(tp: TraceProbe): void {
    this.points.set(tp, { nhit: 0 });
    if (tp.ev?.enabled) this.arm(tp);
  }

  removed(tp: TraceProbe): void {
    this.disarm(tp);
    this.points.delete(tp);
  }

  enable(ev: ProbeEvent, _type: ProbeEventType): void {
    for (const tp of ev.probes) this.arm(tp);
  }

  disable(ev: ProbeEvent, _type: ProbeEventType): void {
    for (const tp of ev.probes) this.disarm(tp);
  }

  /** uprobe_profile's count. */
  hits(tp: TraceProbe): number {
    return this.points.get(tp)?.nhit ?? 0;
  }

  private arm(tp: TraceProbe): void {
    const p = this.points.get(tp);
    if (!p || p.armed) return;
    const loc = tp.loc as UprobeLocation;
    const st = this.dyn.statPath(loc.path);
    const entry = elfEntry(loc.path);
    const inode = typeof st === 'object' ? st.inode : undefined;
    // only the program's start (its entry point, and _init) is ever reached
    const at = [entry, entry?.init].find((x) => x?.fileOffset === loc.offset);
    if (!inode || !entry || !at || tp.isReturn) p.armed = { inode: '', vaddr: 0n };
    else p.armed = { inode, vaddr: entry.pie ? PIE_BASE + at.vaddr : at.vaddr };
    this.watchExecs();
  }

  private disarm(tp: TraceProbe): void {
    const p = this.points.get(tp);
    if (p) p.armed = undefined;
    if (![...this.points.values()].some((x) => x.armed) && this.execProbe) {
      this.dyn.kernel.tracepoints.unregister('sched_process_exec', this.execProbe);
      this.execProbe = undefined;
    }
  }

  private watchExecs(): void {
    if (this.execProbe) return;
    const probe: TracepointProbe<Readonly<Record<string, unknown>>> = (ctx, args) => this.exec(ctx, String(args.filename ?? ''));
    this.execProbe = probe as TracepointProbe<never>;
    // after the exec event itself: the program starts once exec is done
    this.dyn.kernel.tracepoints.register('sched_process_exec', this.execProbe, -(1 << 20));
  }

  /** A process starts a program: uprobes on its entry point hit. */
  private exec(ctx: ExecContext, filename: string): void {
    const task = ctx.task;
    const exe = (task as unknown as { exe?: string }).exe ?? filename;
    const st = this.dyn.statPath(exe);
    if (typeof st !== 'object') return;
    for (const [tp, p] of this.points) {
      if (!p.armed || p.armed.inode !== st.inode) continue;
      p.nhit++;
      const type = tp.ev && this.dyn.typeOf(tp.ev);
      if (!type) continue;
      // user context: preemption on, nothing of the exec path held
      const uctx: ExecContext = { ...ctx, flags: 0, preemptCount: 0 };
      const vaddr = p.armed.vaddr;
      this.dyn.events.emit(type, uctx, () =>
        buildProbeRecord(tp, TRACE_ENTRY_SIZE + 8, { comm: task.comm, mem: probeMemory(this.dyn.kernel, task) }, (b) => {
          writeCommonHeader(b, type.id, uctx);
          b.writeBigUInt64LE(vaddr, TRACE_ENTRY_SIZE);
        }),
      );
    }
  }
}
