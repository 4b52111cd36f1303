/**
 * kprobes (kernel/kprobes.c, arch/x86/kernel/kprobes/): a handler on any
 * instruction of a kernel function. On a function's __fentry__ site the
 * probe runs through ftrace (KPROBES_ON_FTRACE: one shared kprobe ftrace_ops,
 * `kprobe_ftrace_handler`, with SAVE_REGS — and IPMODIFY for probes with a
 * post handler); elsewhere through an int3 breakpoint of the executor,
 * jump-optimized once armed ([OPTIMIZED]). Several probes on one address
 * share an aggregate probe. kretprobes are kprobes on the function entry
 * whose pre handler hooks the return through rethook.
 */
import { fail } from '../kernel/errno.js';
import type { Kernel } from '../kernel/kernel.js';
import { kprobeSite } from '../kernel/kprobe_site.js';
import type { PtRegs } from '../kernel/regs.js';
import type { KernelFunction } from '../kernel/symbols.js';
import type { Task } from '../kernel/task.js';
import type { Ftrace } from './ftrace.js';
import { FTRACE_OPS_FL_IPMODIFY, FTRACE_OPS_FL_SAVE_REGS, FtraceOps } from './ftrace_ops.js';
import { renderKprobeList } from './kprobe_list.js';
import { ftraceTestRecursionTrylock, ftraceTestRecursionUnlock } from './recursion.js';
import { Rethook, RethookNode, RETHOOK_NODE_SIZE, type RethookCore, type RethookPool } from './rethook.js';

export const KPROBE_FLAG_GONE = 1;
export const KPROBE_FLAG_DISABLED = 2;
export const KPROBE_FLAG_OPTIMIZED = 4;
export const KPROBE_FLAG_FTRACE = 8;
export const KPROBE_FLAG_ON_FUNC_ENTRY = 16;

/** KRETPROBE_MAXACTIVE_MAX: trace_kprobe's limit on `r<N>:`. */
export const KRETPROBE_MAXACTIVE_MAX = 4096;
/** KRETPROBE_MAX_DATA_SIZE. */
export const KRETPROBE_MAX_DATA_SIZE = 4096;
const INT3_INSN_SIZE = 1n;
const MCOUNT_INSN_SIZE = 5n;
/** JMP32_INSN_SIZE: an optimized probe replaces this many bytes with a jump. */
const JMP32_INSN_SIZE = 5;
/** OPTIMIZE_DELAY: the optimizer runs 5 jiffies (HZ=250) after a probe is armed. */
const OPTIMIZE_DELAY_NS = 5 * 4_000_000;

/** Where a probe goes: a symbol (+offset), or an address (+offset). */
export interface KprobeSpec {
  symbol?: string;
  offset?: number;
  addr?: bigint;
}

/** Pre handler: runs before the probed instruction; true means it changed regs.ip (the post handler is skipped). */
export type KprobePre = (p: Kprobe, regs: PtRegs, task: Task) => boolean | void;
/** Post handler: runs after the probed instruction. */
export type KprobePost = (p: Kprobe, regs: PtRegs, task: Task) => void;

/** struct kprobe. */
export class Kprobe {
  symbol?: string;
  offset: number;
  /** The probed address: given, or resolved (and adjusted past endbr64) at registration. */
  addr: bigint;
  pre?: KprobePre;
  post?: KprobePost;
  /** Hits lost to recursion (a kprobe hit while another kprobe's handler ran on that CPU). */
  nmissed = 0;
  /** Times its pre handler ran (the emulator's count; trace_kprobe keeps its own). */
  nhit = 0;
  flags = 0;
  /** A name for stats (`kprobes/kp1`). */
  name?: string;
  /** The kretprobe this kprobe is the entry of. */
  kretprobe?: Kretprobe;
  /** @internal the function probed and the offset in it, once registered. */
  fn?: KernelFunction;
  /** @internal */
  fnOffset = 0;
  /** @internal when (clock ns) the optimizer turns the armed int3 into a jump; -1: not pending. */
  optimizeAt = -1;

  constructor(spec: KprobeSpec & { pre?: KprobePre; post?: KprobePost; name?: string }) {
    this.symbol = spec.symbol;
    this.offset = spec.offset ?? 0;
    this.addr = spec.addr ?? 0n;
    this.pre = spec.pre;
    this.post = spec.post;
    this.name = spec.name;
  }

  get disabled(): boolean {
    return (this.flags & (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE)) !== 0;
  }

  get gone(): boolean {
    return (this.flags & KPROBE_FLAG_GONE) !== 0;
  }

  /** Runs through ftrace (KPROBE_FLAG_FTRACE). */
  get ftrace(): boolean {
    return (this.flags & KPROBE_FLAG_FTRACE) !== 0;
  }

  /** Its own OPTIMIZED flag (set when queued for the optimizer); `Kprobes.isOptimized(p)` tells whether the jump is in (and sees aggregates). */
  get optimized(): boolean {
    return (this.flags & KPROBE_FLAG_OPTIMIZED) !== 0;
  }
}

/** The probes sharing one address (aggr_kprobe). Its list is newest first. */
export class AggrKprobe {
  flags: number;
  nmissed = 0;
  readonly list: Kprobe[] = [];
  optimizeAt = -1;

  constructor(
    readonly addr: bigint,
    readonly fn: KernelFunction,
    readonly fnOffset: number,
    first: Kprobe,
  ) {
    this.flags = first.flags & ~KPROBE_FLAG_OPTIMIZED;
    this.list.push(first);
  }

  get disabled(): boolean {
    return (this.flags & (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE)) !== 0;
  }

  get hasPost(): boolean {
    return this.list.some((p) => p.post && !p.gone);
  }
}

/** What the kprobe table holds at an address. */
export type KprobeSlot = Kprobe | AggrKprobe;

/** A kretprobe instance: one hooked call (struct kretprobe_instance on its rethook node). */
export interface KretprobeInstance {
  readonly rp: Kretprobe;
  /** The task whose call it hooked. */
  readonly task: Task;
  /** The return address the hook saved: the caller, unless another return hook came first (then its trampoline). */
  readonly retAddr: bigint;
  /** The probed function's address (the kprobe's). */
  readonly funcAddr: bigint;
  /** The return slot's address. */
  readonly frame: bigint;
  /** `dataSize` bytes kept from the entry handler to the return handler. */
  readonly data: Buffer;
}

class KretprobeNode extends RethookNode implements KretprobeInstance {
  readonly data: Buffer;

  constructor(
    rh: Rethook<KretprobeNode>,
    readonly rp: Kretprobe,
  ) {
    super(rh);
    this.data = Buffer.alloc(rp.dataSize);
  }

  get task(): Task {
    return this.hookedTask!;
  }

  get funcAddr(): bigint {
    return this.rp.kp.addr;
  }
}

export type KretprobeEntry = (ri: KretprobeInstance, regs: PtRegs) => number | boolean | void;
export type KretprobeHandler = (ri: KretprobeInstance, regs: PtRegs) => void;

/** struct kretprobe. */
export class Kretprobe {
  readonly kp: Kprobe;
  /** Instances to preallocate; 0 = max(10, 2 x CPUs) at registration. */
  maxactive: number;
  readonly dataSize: number;
  entry?: KretprobeEntry;
  handler: KretprobeHandler;
  /** Calls not hooked because every instance was in use. */
  nmissed = 0;
  /** Return handler calls. */
  nhit = 0;
  /** @internal */
  rh: Rethook<KretprobeNode> | null = null;

  constructor(spec: KprobeSpec & { maxactive?: number; dataSize?: number; entry?: KretprobeEntry; handler: KretprobeHandler; name?: string }) {
    this.kp = new Kprobe({ symbol: spec.symbol, offset: spec.offset, addr: spec.addr, name: spec.name });
    this.kp.kretprobe = this;
    this.maxactive = spec.maxactive ?? 0;
    this.dataSize = spec.dataSize ?? 0;
    this.entry = spec.entry;
    this.handler = spec.handler;
  }

  get name(): string | undefined {
    return this.kp.name;
  }

  /** The rethook pool (allocated / in use / missed), while registered. */
  get rethook(): RethookPool | null {
    return this.rh;
  }
}

/** KPROBE_HASH_BITS: the table kprobes/list walks. */
const KPROBE_HASH_BITS = 6;
const GOLDEN_RATIO_64 = 0x61c8864680b583ebn;

/** hash_ptr(addr, 6) on 64-bit. */
export function kprobeHash(addr: bigint): number {
  return Number(BigInt.asUintN(64, addr * GOLDEN_RATIO_64) >> BigInt(64 - KPROBE_HASH_BITS));
}

/** The kprobes subsystem of a kernel. */
export class Kprobes {
  readonly kernel: Kernel;
  /** kprobe_table: per bucket, newest first. */
  private readonly buckets: KprobeSlot[][] = Array.from({ length: 1 << KPROBE_HASH_BITS }, () => []);
  private readonly table = new Map<bigint, KprobeSlot>();
  /** kprobes_all_disarmed (debugfs kprobes/enabled = 0). */
  allDisarmed = false;
  /** current_kprobe of each CPU. */
  private readonly running: (Kprobe | null)[];
  private readonly ftraceOps: FtraceOps;
  private readonly ipmodifyOps: FtraceOps;
  private ftraceEnabled = 0;
  private ipmodifyEnabled = 0;
  /** Registered kretprobes (for stats). */
  readonly kretprobes = new Set<Kretprobe>();
  readonly rethooks: RethookCore;

  constructor(private readonly ftrace: Ftrace) {
    const kernel = (this.kernel = ftrace.kernel);
    this.running = new Array(kernel.nrCpus).fill(null);
    const func: FtraceOps['func'] = (ip, _parentIp, _op, regs, task) => this.ftraceHandler(ip, regs, task);
    this.ftraceOps = new FtraceOps({ func, funcSym: 'kprobe_ftrace_handler', flags: FTRACE_OPS_FL_SAVE_REGS });
    this.ipmodifyOps = new FtraceOps({ func, funcSym: 'kprobe_ftrace_handler', flags: FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY });
    this.rethooks = ftrace.rethooks;
  }

  // ------------------------------------------------------------------ lookup

  /** get_kprobe(): what is registered at `addr`. */
  get(addr: bigint): KprobeSlot | undefined {
    return this.table.get(addr);
  }

  /** Every slot in kprobes/list order. */
  *slots(): IterableIterator<KprobeSlot> {
    for (const b of this.buckets) yield* b;
  }

  /** __get_valid_kprobe(): the slot holding `p` (itself or its aggregate). */
  private validSlot(p: Kprobe): KprobeSlot | undefined {
    const s = this.table.get(p.addr);
    if (!s) return undefined;
    if (s === p) return s;
    if (s instanceof AggrKprobe && s.list.includes(p)) return s;
    return undefined;
  }

  isRegistered(p: Kprobe): boolean {
    return this.validSlot(p) !== undefined;
  }

  /** kprobe_running() on the task's CPU. */
  kprobeRunning(task: Task): Kprobe | null {
    return this.running[task.cpu % this.running.length] ?? null;
  }

  /** kprobe_busy_begin() / _end(): `f` runs as if a kprobe were running on the task's CPU. */
  asBusy<T>(task: Task, f: () => T): T {
    const cpu = task.cpu % this.running.length;
    const prev = this.running[cpu];
    this.running[cpu] = this.busy;
    try {
      return f();
    } finally {
      this.running[cpu] = prev;
    }
  }

  /** The dummy kprobe_busy. */
  private readonly busy = new Kprobe({ symbol: 'kprobe_busy' });

  // ------------------------------------------------------------------ address

  /**
   * _kprobe_addr() and the checks of register_kprobe(): the adjusted address,
   * the function and offset, or the kernel's errno.
   */
  private resolve(spec: KprobeSpec): { addr: bigint; fn: KernelFunction; offset: number; onFuncEntry: boolean; ftrace: boolean } {
    const hasAddr = spec.addr !== undefined && spec.addr !== 0n;
    if ((spec.symbol && hasAddr) || (!spec.symbol && !hasAddr)) fail('EINVAL');
    let base: bigint;
    if (spec.symbol) {
      const colon = spec.symbol.indexOf(':');
      const s = colon >= 0 ? this.kernel.symbols.lookupName(spec.symbol.slice(colon + 1), spec.symbol.slice(0, colon)) : this.kernel.symbols.lookupName(spec.symbol);
      if (!s) fail('ENOENT');
      base = s.addr;
    } else base = spec.addr!;
    const site = kprobeSite(this.kernel, BigInt.asUintN(64, base + BigInt(spec.offset ?? 0)), false);
    if (!site.ok) fail(site.errno);
    return site;
  }

  // ------------------------------------------------------------------ registration

  /** register_kprobe(): EINVAL (registered twice, not text, blacklisted), EILSEQ (inside an instruction), ENOENT (no such symbol), EBUSY (IPMODIFY clash). */
  register(p: Kprobe, opts: { disabled?: boolean } = {}): void {
    if (this.isRegistered(p)) fail('EINVAL');
    const site = this.resolve({ symbol: p.symbol, offset: p.offset, addr: p.symbol ? undefined : p.addr });
    p.addr = site.addr;
    p.fn = site.fn;
    p.fnOffset = site.offset;
    p.flags = (opts.disabled ? KPROBE_FLAG_DISABLED : 0) | (site.onFuncEntry ? KPROBE_FLAG_ON_FUNC_ENTRY : 0) | (site.ftrace ? KPROBE_FLAG_FTRACE : 0);
    p.nmissed = 0;
    const old = this.table.get(p.addr);
    if (old) {
      this.registerAggr(old, p);
      return;
    }
    this.insert(p);
    if (!p.disabled && !this.allDisarmed) {
      try {
        this.arm(p);
      } catch (e) {
        this.remove(p);
        throw e;
      }
    }
  }

  private insert(s: KprobeSlot): void {
    this.table.set(s.addr, s);
    this.buckets[kprobeHash(s.addr)].unshift(s);
  }

  private remove(s: KprobeSlot): void {
    this.table.delete(s.addr);
    const b = this.buckets[kprobeHash(s.addr)];
    const i = b.indexOf(s);
    if (i >= 0) b.splice(i, 1);
  }

  private replace(old: KprobeSlot, s: KprobeSlot): void {
    this.table.set(s.addr, s);
    const b = this.buckets[kprobeHash(s.addr)];
    const i = b.indexOf(old);
    if (i >= 0) b[i] = s;
  }

  /** register_aggr_kprobe(): a second probe on an address. */
  private registerAggr(old: KprobeSlot, p: Kprobe): void {
    let ap: AggrKprobe;
    if (old instanceof AggrKprobe) ap = old;
    else {
      ap = new AggrKprobe(old.addr, old.fn!, old.fnOffset, old);
      if (old.flags & KPROBE_FLAG_OPTIMIZED) ap.flags |= KPROBE_FLAG_OPTIMIZED;
      ap.optimizeAt = old.optimizeAt;
      old.flags &= ~KPROBE_FLAG_OPTIMIZED;
      old.optimizeAt = -1;
      this.replace(old, ap);
    }
    ap.list.unshift(p);
    if (p.post) this.unoptimize(ap);
    if (ap.disabled && !p.disabled) {
      ap.flags &= ~KPROBE_FLAG_DISABLED;
      if (!this.allDisarmed) {
        try {
          this.arm(ap);
        } catch (e) {
          ap.flags |= KPROBE_FLAG_DISABLED;
          ap.list.splice(ap.list.indexOf(p), 1);
          throw e;
        }
      }
    }
  }

  /** unregister_kprobe(): silently nothing if `p` is not registered. */
  unregister(p: Kprobe): void {
    const slot = this.validSlot(p);
    if (!slot) return;
    this.disableSlot(p, slot);
    if (slot === p) {
      this.remove(p);
      return;
    }
    const ap = slot as AggrKprobe;
    if (ap.list.length === 1) {
      this.remove(ap);
      ap.list.length = 0;
      return;
    }
    ap.list.splice(ap.list.indexOf(p), 1);
    if (!ap.disabled && !this.allDisarmed) this.optimize(ap);
  }

  /** enable_kprobe(): EINVAL if not registered or gone. */
  enable(p: Kprobe): void {
    const slot = this.validSlot(p);
    if (!slot || p.gone) fail('EINVAL');
    if (slot !== p) p.flags &= ~KPROBE_FLAG_DISABLED;
    if (!this.allDisarmed && slot.disabled) {
      slot.flags &= ~KPROBE_FLAG_DISABLED;
      try {
        this.arm(slot);
      } catch (e) {
        slot.flags |= KPROBE_FLAG_DISABLED;
        if (slot !== p) p.flags |= KPROBE_FLAG_DISABLED;
        throw e;
      }
    }
  }

  /** disable_kprobe(): EINVAL if not registered. */
  disable(p: Kprobe): void {
    const slot = this.validSlot(p);
    if (!slot) fail('EINVAL');
    this.disableSlot(p, slot);
  }

  /** __disable_kprobe(). */
  private disableSlot(p: Kprobe, slot: KprobeSlot): void {
    if (p.disabled) return;
    if (slot !== p) p.flags |= KPROBE_FLAG_DISABLED;
    if (slot === p || (slot as AggrKprobe).list.every((k) => k.disabled)) {
      if (!this.allDisarmed && !slot.disabled) this.disarm(slot);
      slot.flags |= KPROBE_FLAG_DISABLED;
    }
  }

  // ------------------------------------------------------------------ kretprobes

  /** register_kretprobe(): EINVAL off a function entry or registered twice, ENOENT, E2BIG (data > 4096). */
  registerKretprobe(rp: Kretprobe, opts: { disabled?: boolean } = {}): void {
    const site = this.resolve({ symbol: rp.kp.symbol, offset: rp.kp.offset, addr: rp.kp.symbol ? undefined : rp.kp.addr });
    if (!site.onFuncEntry) fail('EINVAL');
    if (this.isRegistered(rp.kp) || rp.rh) fail('EINVAL');
    if (rp.dataSize > KRETPROBE_MAX_DATA_SIZE) fail('E2BIG');
    if (rp.maxactive <= 0) rp.maxactive = Math.max(10, 2 * this.kernel.nrCpus);
    rp.kp.pre = (_p, regs, task) => this.preHandlerKretprobe(rp, regs, task);
    rp.kp.post = undefined;
    const label = rp.name ? `kretprobe:${rp.name}` : `kretprobe:${rp.kp.symbol ?? '0x' + rp.kp.addr.toString(16)}`;
    const rh = new Rethook<KretprobeNode>(
      this.rethooks,
      (ri, _ret, regs, task) => this.kretprobeHandler(ri, regs, task),
      RETHOOK_NODE_SIZE + rp.dataSize,
      rp.maxactive,
      (h) => new KretprobeNode(h, rp),
      label,
    );
    rp.rh = rh;
    rp.nmissed = 0;
    try {
      this.register(rp.kp, opts);
    } catch (e) {
      rh.free();
      rp.rh = null;
      throw e;
    }
    this.kretprobes.add(rp);
  }

  unregisterKretprobe(rp: Kretprobe): void {
    if (!this.kretprobes.has(rp)) return;
    this.unregister(rp.kp);
    rp.rh?.free();
    rp.rh = null;
    this.kretprobes.delete(rp);
  }

  /** pre_handler_kretprobe(): take an instance and hook the return (or miss). */
  private preHandlerKretprobe(rp: Kretprobe, regs: PtRegs, task: Task): boolean {
    const rh = rp.rh;
    if (!rh) return false;
    const ri = rh.tryGet();
    if (!ri) {
      rp.nmissed++;
      return false;
    }
    ri.hookedTask = task;
    if (rp.entry && rp.entry(ri, regs)) rh.recycle(ri);
    else rh.hook(ri, regs, task);
    return false;
  }

  /** kretprobe_rethook_handler(): the user's handler, as the running kprobe. */
  private kretprobeHandler(ri: KretprobeNode, regs: PtRegs, task: Task): void {
    const rp = ri.rp;
    if (!rp.handler) return;
    const cpu = task.cpu % this.running.length;
    const prev = this.running[cpu];
    this.running[cpu] = rp.kp;
    try {
      rp.nhit++;
      rp.handler(ri, regs);
    } finally {
      this.running[cpu] = prev;
    }
  }

  // ------------------------------------------------------------------ arming

  /** arm_kprobe(): ftrace ops filter or breakpoint, then jump optimization. */
  private arm(s: KprobeSlot): void {
    const fn = s instanceof AggrKprobe ? s.fn : s.fn!;
    const offset = s instanceof AggrKprobe ? s.fnOffset : s.fnOffset;
    if (s.flags & KPROBE_FLAG_FTRACE) {
      this.armFtrace(fn, this.slotHasPost(s));
      return;
    }
    this.ftrace.exec.setBreakpoint(fn, offset, (addr, regs, task) => this.int3Handler(addr, regs, task));
    this.optimize(s);
  }

  /** disarm_kprobe(). */
  private disarm(s: KprobeSlot): void {
    const fn = s instanceof AggrKprobe ? s.fn : s.fn!;
    if (s.flags & KPROBE_FLAG_FTRACE) {
      this.disarmFtrace(fn, this.slotHasPost(s));
      return;
    }
    this.unoptimize(s);
    this.ftrace.exec.clearBreakpoint(fn, s instanceof AggrKprobe ? s.fnOffset : s.fnOffset);
  }

  private slotHasPost(s: KprobeSlot): boolean {
    return s instanceof AggrKprobe ? s.hasPost : !!s.post;
  }

  /** The ops armed ftrace kprobes of this kind share. */
  private opsFor(ipmodify: boolean): FtraceOps {
    return ipmodify ? this.ipmodifyOps : this.ftraceOps;
  }

  /** __arm_kprobe_ftrace(): the ip joins the shared ops' filter; the ops registers with its first ip. */
  private armFtrace(fn: KernelFunction, ipmodify: boolean): void {
    const ops = this.opsFor(ipmodify);
    const ftrace = this.ftrace;
    ftrace.setFilterIds(ops, [fn.id]);
    const cnt = ipmodify ? this.ipmodifyEnabled : this.ftraceEnabled;
    if (cnt === 0) {
      try {
        ftrace.register(ops);
      } catch (e) {
        ftrace.setFilterIds(ops, [fn.id], { remove: true });
        throw e;
      }
    }
    if (ipmodify) this.ipmodifyEnabled++;
    else this.ftraceEnabled++;
  }

  private disarmFtrace(fn: KernelFunction, ipmodify: boolean): void {
    const ops = this.opsFor(ipmodify);
    const cnt = ipmodify ? this.ipmodifyEnabled : this.ftraceEnabled;
    if (cnt === 1) this.ftrace.unregister(ops);
    if (ipmodify) this.ipmodifyEnabled--;
    else this.ftraceEnabled--;
    this.ftrace.setFilterIds(ops, [fn.id], { remove: true });
  }

  /**
   * optimize_kprobe(): an armed int3 probe without post handlers is marked
   * OPTIMIZED and queued for the optimizer (kprobes/list shows it at once),
   * which replaces int3 with a jump 5 jiffies later (if the function has
   * room for one). Until then hits come through int3.
   */
  private optimize(s: KprobeSlot): void {
    if (s.flags & (KPROBE_FLAG_FTRACE | KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE | KPROBE_FLAG_OPTIMIZED)) return;
    if (this.slotHasPost(s)) return;
    const fn = s instanceof AggrKprobe ? s.fn : s.fn!;
    const offset = s instanceof AggrKprobe ? s.fnOffset : s.fnOffset;
    if (offset + JMP32_INSN_SIZE > fn.size) return;
    s.flags |= KPROBE_FLAG_OPTIMIZED;
    s.optimizeAt = this.kernel.clock.now() + OPTIMIZE_DELAY_NS;
  }

  private unoptimize(s: KprobeSlot): void {
    s.flags &= ~KPROBE_FLAG_OPTIMIZED;
    s.optimizeAt = -1;
  }

  /** kprobe_optimizer(): a queued probe whose delay has passed has its jump now. */
  private settle(s: KprobeSlot): void {
    if (s.optimizeAt >= 0 && this.kernel.clock.now() >= s.optimizeAt) s.optimizeAt = -1;
  }

  /**
   * Whether hits of `p` come through the optprobe jump (context as the task
   * runs) rather than int3 (an NMI-like entry with interrupts off). False for
   * ftrace-based and unregistered probes.
   */
  isOptimized(p: Kprobe): boolean {
    const s = this.validSlot(p);
    if (!s) return false;
    this.settle(s);
    return (s.flags & KPROBE_FLAG_OPTIMIZED) !== 0 && s.optimizeAt < 0;
  }

  /** arm_all_kprobes() / disarm_all_kprobes() (debugfs kprobes/enabled). */
  setArmed(on: boolean): void {
    if (on) {
      if (!this.allDisarmed) return;
      this.allDisarmed = false;
      let err: unknown;
      for (const s of this.slots()) {
        if (s.disabled) continue;
        try {
          this.arm(s);
        } catch (e) {
          err = e;
        }
      }
      if (err) throw err;
      return;
    }
    if (this.allDisarmed) return;
    this.allDisarmed = true;
    for (const s of this.slots()) if (!s.disabled) this.disarm(s);
  }

  get armed(): boolean {
    return !this.allDisarmed;
  }

  // ------------------------------------------------------------------ hits

  /** kprobe_ftrace_handler(): the probe on this __fentry__ site, with regs->ip as after an int3. */
  private ftraceHandler(ip: bigint, regs: PtRegs, task: Task): void {
    const bit = ftraceTestRecursionTrylock(this.ftrace.tasks, task);
    if (bit < 0) return;
    // The events this handler records drop the depth it adds (trace_event_buffer_reserve()).
    task.preemptCount--;
    try {
      const s = this.table.get(ip);
      if (!s || s.disabled) return;
      this.hit(s, ip, regs, task, ip + MCOUNT_INSN_SIZE);
    } finally {
      task.preemptCount++;
      ftraceTestRecursionUnlock(this.ftrace.tasks, task, bit);
    }
  }

  /** kprobe_int3_handler() (or the optprobe trampoline once optimized). */
  private int3Handler(addr: bigint, regs: PtRegs, task: Task): void {
    const s = this.table.get(addr);
    if (!s || s.disabled) return;
    this.settle(s);
    this.hit(s, addr, regs, task, addr + INT3_INSN_SIZE);
  }

  private hit(s: KprobeSlot, addr: bigint, regs: PtRegs, task: Task, afterIp: bigint): void {
    const cpu = task.cpu % this.running.length;
    if (this.running[cpu]) {
      this.incMissed(s);
      return;
    }
    const origIp = regs.ip;
    regs.ip = addr + INT3_INSN_SIZE;
    try {
      let changed = false;
      const list = s instanceof AggrKprobe ? s.list : [s];
      for (const p of list) {
        if (p.disabled) continue;
        this.running[cpu] = p;
        p.nhit++;
        if (p.pre && this.call(() => p.pre!(p, regs, task))) {
          changed = true;
          break;
        }
      }
      if (!changed) {
        regs.ip = afterIp;
        for (const p of list) {
          if (p.disabled || !p.post) continue;
          this.running[cpu] = p;
          this.call(() => p.post!(p, regs, task));
        }
      }
    } finally {
      regs.ip = origIp;
      this.running[cpu] = null;
    }
  }

  /** A handler that throws is a bug in its user: logged, counted, never passed to the probed code. */
  private call(f: () => boolean | void): boolean {
    try {
      return !!f();
    } catch (e) {
      this.ftrace.hookFailed(e);
      return false;
    }
  }

  /** kprobes_inc_nmissed_count(). */
  private incMissed(s: KprobeSlot): void {
    if (s instanceof AggrKprobe) for (const p of s.list) p.nmissed++;
    else s.nmissed++;
  }

  // ------------------------------------------------------------------ debugfs

  /** /sys/kernel/debug/kprobes/list. */
  listText(): string {
    return renderKprobeList(this.kernel.symbols, this.slots());
  }
}
