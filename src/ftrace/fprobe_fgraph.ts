/**
 * fprobe on 7.x: entry-only fprobes on one shared ftrace_ops
 * (`fprobe_ftrace_entry`), fprobes with an exit handler on one shared
 * fgraph_ops (`fprobe_fgraph_entry` / `fprobe_return`). Fprobes are found by
 * ip (fprobe_ip_table) and, on return, checked again by pointer
 * (fprobe_table): the header each call leaves on the shadow stack names the
 * fprobe (pointer and data size in one word), so an fprobe unregistered
 * between a call's entry and its return is simply skipped. Each backend
 * registers with its first fprobe and goes away with its last; an ip leaves a
 * backend's filter when no fprobe of that kind remains on it.
 */
import { fail } from '../kernel/errno.js';
import { PtRegs } from '../kernel/regs.js';
import type { KernelFunction } from '../kernel/symbols.js';
import type { Task } from '../kernel/task.js';
import { FtraceRecords } from './dyn_ftrace.js';
import { FgraphOps, type Fgraph, type FgraphEnt, type FgraphRet } from './fgraph.js';
import { MAX_FPROBE_DATA_SIZE, callFprobeEntry, callFprobeExit, sizeInLong, type Fprobe, type FprobeBackend } from './fprobe.js';
import type { Ftrace } from './ftrace.js';
import { FtraceRegs } from './ftrace_regs.js';
import { FTRACE_OPS_FL_SAVE_ARGS, FtraceOps } from './ftrace_ops.js';
import { ftraceTestRecursionTrylock, ftraceTestRecursionUnlock } from './recursion.js';

/** FPROBE_HEADER_SIZE_IN_LONG on 64-bit: the header is one word. */
const FPROBE_HEADER_SIZE_IN_LONG = 1;

/** struct fprobe_hlist_node: one (ip, fprobe) pair of the ip table. */
interface FprobeNode {
  readonly id: number;
  readonly ip: bigint;
  fp: Fprobe | null;
}

export class FprobeGraph implements FprobeBackend {
  /** fprobe_ip_table, by function id (one per ip): newest first. */
  private readonly ipTable = new Map<number, FprobeNode[]>();
  /** fprobe_table: registered fprobes by pointer (its low 32 bits; the rest is checked). */
  private readonly fprobeTable = new Map<number, Fprobe>();
  private readonly nodesOf = new Map<Fprobe, FprobeNode[]>();
  readonly ftraceOps: FtraceOps;
  readonly graphOps: FgraphOps;
  nrFtraceFprobes = 0;
  nrFgraphFprobes = 0;
  ftraceRegistered = false;
  graphRegistered = false;
  private readonly fgraph: Fgraph;
  /** The ftrace_regs exit handlers get (fprobe_return runs under fgraph's recursion lock: one at a time per task, never kept). */
  private readonly exitRegs = new FtraceRegs(new PtRegs());

  constructor(private readonly ftrace: Ftrace) {
    this.fgraph = ftrace.fgraph;
    this.ftraceOps = new FtraceOps({
      func: (ip, parentIp, _op, regs, task, id) => this.ftraceEntry(ip, parentIp, regs, task, id),
      funcSym: 'fprobe_ftrace_entry',
      flags: FTRACE_OPS_FL_SAVE_ARGS,
    });
    this.graphOps = new FgraphOps({
      entryfunc: (trace, gops, regs, task) => this.fgraphEntry(trace, gops, regs, task),
      retfunc: (trace, gops, regs, task) => this.fgraphReturn(trace, gops, regs, task),
      entrySym: 'fprobe_fgraph_entry',
      retSym: 'fprobe_return',
    });
  }

  /** fprobe_registered(). */
  isRegistered(fp: Fprobe): boolean {
    return this.fprobeTable.get(fp.ptrLo) === fp;
  }

  /** The fprobes on a function, newest first (what the entry paths walk). */
  fprobesOn(id: number): Fprobe[] {
    return (this.ipTable.get(id) ?? []).flatMap((n) => (n.fp ? [n.fp] : []));
  }

  // ------------------------------------------------------------------ registration

  /** register_fprobe_ips(). */
  register(fp: Fprobe, fns: readonly KernelFunction[]): void {
    if (this.isRegistered(fp)) fail('EEXIST');
    const size = Math.ceil(fp.entryDataSize / 8) * 8;
    if (size > MAX_FPROBE_DATA_SIZE) fail('E2BIG');
    fp.entryDataSize = size;
    fp.nmissed = 0;
    const ids = fns.map((f) => f.id);
    for (const id of ids) if (!this.ftrace.records.isTraceable(id)) fail('ENOENT');
    if (!fp.exit) this.ftraceAddIps(ids);
    else this.graphAddIps(ids);
    this.fprobeTable.set(fp.ptrLo, fp);
    const nodes: FprobeNode[] = fns.map((f) => ({ id: f.id, ip: FtraceRecords.ip(f), fp }));
    this.nodesOf.set(fp, nodes);
    for (const n of nodes) {
      // Lists are replaced, never changed in place: handlers may (un)register while a walk is on.
      this.ipTable.set(n.id, [n, ...(this.ipTable.get(n.id) ?? [])]);
      if (!fp.exit) this.nrFtraceFprobes++;
      else this.nrFgraphFprobes++;
    }
  }

  /** unregister_fprobe(). */
  unregister(fp: Fprobe): void {
    const nodes = this.nodesOf.get(fp);
    if (!nodes || !this.isRegistered(fp)) fail('EINVAL');
    const isFtrace = !fp.exit;
    const gone: number[] = [];
    for (const n of nodes) {
      this.deleteNode(n);
      if (!this.existsOnHash(n.id, isFtrace)) gone.push(n.id);
    }
    this.fprobeTable.delete(fp.ptrLo);
    this.nodesOf.delete(fp);
    if (isFtrace) this.ftraceRemoveIps(gone);
    else this.graphRemoveIps(gone);
  }

  private deleteNode(n: FprobeNode): void {
    const fp = n.fp;
    if (!fp) return;
    if (!fp.exit) this.nrFtraceFprobes--;
    else this.nrFgraphFprobes--;
    n.fp = null;
    const list = (this.ipTable.get(n.id) ?? []).filter((x) => x !== n);
    if (list.length) this.ipTable.set(n.id, list);
    else this.ipTable.delete(n.id);
  }

  /** fprobe_exists_on_hash(): another fprobe of the same kind is still on this function. */
  private existsOnHash(id: number, ftrace: boolean): boolean {
    return (this.ipTable.get(id) ?? []).some((n) => n.fp && !n.fp.exit === ftrace);
  }

  private ftraceAddIps(ids: number[]): void {
    this.ftrace.setFilterIds(this.ftraceOps, ids);
    if (this.ftraceRegistered) return;
    try {
      this.ftrace.register(this.ftraceOps);
    } catch (e) {
      this.ftrace.setFilterIds(this.ftraceOps, [], { reset: true });
      throw e;
    }
    this.ftraceRegistered = true;
  }

  private ftraceRemoveIps(ids: number[]): void {
    if (!this.nrFtraceFprobes) {
      if (this.ftraceRegistered) {
        this.ftrace.unregister(this.ftraceOps);
        this.ftraceRegistered = false;
      }
      this.ftrace.setFilterIds(this.ftraceOps, [], { reset: true });
    } else if (ids.length) this.ftrace.setFilterIds(this.ftraceOps, ids, { remove: true });
  }

  private graphAddIps(ids: number[]): void {
    this.ftrace.setFilterIds(this.graphOps.ops, ids);
    if (this.graphRegistered) return;
    try {
      this.fgraph.register(this.graphOps);
    } catch (e) {
      // 17th fgraph user: ENOSPC.
      this.ftrace.setFilterIds(this.graphOps.ops, [], { reset: true });
      throw e;
    }
    this.graphRegistered = true;
  }

  private graphRemoveIps(ids: number[]): void {
    if (!this.nrFgraphFprobes) {
      if (this.graphRegistered) {
        this.fgraph.unregister(this.graphOps);
        this.graphRegistered = false;
      }
      this.ftrace.setFilterIds(this.graphOps.ops, [], { reset: true });
    } else if (ids.length) this.ftrace.setFilterIds(this.graphOps.ops, ids, { remove: true });
  }

  // ------------------------------------------------------------------ entry-only: ftrace_ops

  /** fprobe_ftrace_entry(). */
  private ftraceEntry(ip: bigint, parentIp: bigint, regs: PtRegs, task: Task, id: number): void {
    const bit = ftraceTestRecursionTrylock(this.ftrace.tasks, task);
    if (bit < 0) return;
    try {
      const nodes = this.ipTable.get(id);
      if (!nodes) return;
      let fregs: PtRegs | undefined;
      for (const n of nodes) {
        const fp = n.fp;
        if (!fp || fp.disabled || fp.exit) continue;
        if (!fp.entry) continue;
        fregs ??= new FtraceRegs(regs);
        this.callEntry(fp, ip, parentIp, fregs, undefined, task);
      }
    } finally {
      ftraceTestRecursionUnlock(this.ftrace.tasks, task, bit);
    }
  }

  /** __fprobe_handler() / __fprobe_kprobe_handler(). */
  private callEntry(fp: Fprobe, ip: bigint, retIp: bigint, fregs: PtRegs, data: Buffer | undefined, task: Task): number | boolean | void {
    return callFprobeEntry(this.ftrace, fp, ip, retIp, fregs, data, task);
  }

  // ------------------------------------------------------------------ with exit handlers: fgraph_ops

  /** fprobe_fgraph_entry(): reserve room for every exit fprobe, run the entry handlers, leave a header per fprobe whose exit is wanted. */
  private fgraphEntry(trace: FgraphEnt, gops: FgraphOps, regs: PtRegs, task: Task): boolean {
    const list = this.ipTable.get(trace.id);
    if (!list) return false;
    let reserved = 0;
    let entries = false;
    for (const n of list) {
      const fp = n.fp;
      if (!fp || !fp.exit) continue;
      reserved += FPROBE_HEADER_SIZE_IN_LONG + sizeInLong(fp.entryDataSize);
      if (fp.entry) entries = true;
    }
    let base = -1;
    if (reserved) {
      base = this.fgraph.reserveData(task, gops.idx, reserved * 8);
      if (base < 0) {
        for (const n of list) {
          const fp = n.fp;
          if (fp && !fp.disabled && fp.exit) fp.nmissed++;
        }
        return false;
      }
    }
    const stack = this.fgraph.stackOf(task);
    const w32 = this.fgraph.metaOf(task);
    if (!stack || !w32) return false;
    // ftrace_regs_get_return_address(): the slot as it is now (before fgraph puts return_to_handler there).
    const retIp = entries ? (this.ftrace.exec.memory.readU64(regs.sp) ?? 0n) : 0n;
    const fregs = entries ? new FtraceRegs(regs) : undefined;
    let used = 0;
    for (const n of list) {
      const fp = n.fp;
      if (!fp || fp.disabled || !fp.exit) continue;
      const words = sizeInLong(fp.entryDataSize);
      if (used + FPROBE_HEADER_SIZE_IN_LONG + words > reserved) {
        fp.nmissed++;
        continue;
      }
      const at = base + used;
      let ret: number | boolean | void = 0;
      if (fp.entry) {
        const data = words ? dataView(stack, at + FPROBE_HEADER_SIZE_IN_LONG, words) : undefined;
        ret = this.callEntry(fp, trace.func, retIp, fregs!, data, task);
      } else fp.nhit++;
      if (!ret) {
        // write_fprobe_header(): the pointer's low 60 bits, the size in the top 4.
        w32[2 * at] = fp.ptrLo;
        w32[2 * at + 1] = ((words << 28) | (fp.ptrHi & 0x0fffffff)) >>> 0;
        used += FPROBE_HEADER_SIZE_IN_LONG + words;
      }
    }
    if (used && used < reserved) {
      w32[2 * (base + used)] = 0;
      w32[2 * (base + used) + 1] = 0;
    }
    return used !== 0;
  }

  /** fprobe_return(): walks the headers; an fprobe still registered and enabled gets its exit handler. */
  private fgraphReturn(trace: FgraphRet, gops: FgraphOps, regs: PtRegs, task: Task): void {
    const r = this.fgraph.retrieveData(task, gops.idx);
    const stack = this.fgraph.stackOf(task);
    const w32 = this.fgraph.metaOf(task);
    if (!r || !stack || !w32) return;
    const sizeWords = r.bytes / 8;
    const retIp = regs.ip;
    // rethook replaced the slot before fgraph did (a kretprobe): this call is hooked twice.
    if (retIp === this.ftrace.rethooks.trampoline) this.ftrace.rethooks.stackedHooks++;
    let fregs: FtraceRegs | undefined;
    let curr = 0;
    while (curr < sizeWords) {
      const lo = w32[2 * (r.index + curr)];
      const hi = w32[2 * (r.index + curr) + 1];
      if (!lo && !hi) break;
      const size = hi >>> 28;
      curr += FPROBE_HEADER_SIZE_IN_LONG;
      // fprobe_registered(): only a pointer still in fprobe_table is followed.
      const fp = this.fprobeTable.get(lo);
      if (fp && (fp.ptrHi & 0x0fffffff) === (hi & 0x0fffffff) && !fp.disabled && fp.exit) {
        if (curr + size > sizeWords) break;
        fregs ??= this.exitRegs.of(regs);
        callFprobeExit(this.ftrace, fp, trace.func, retIp, fregs, size ? dataView(stack, r.index + curr, size) : undefined, task);
      }
      curr += size;
    }
  }
}

/** The entry data: a window on the shadow stack itself. */
function dataView(stack: BigUint64Array, index: number, words: number): Buffer {
  return Buffer.from(stack.buffer, stack.byteOffset + index * 8, words * 8);
}
