/**
 * kprobes (kernel/kprobes.c): a handler on any instruction of a kernel
 * function. The kprobe table, registration (several probes on one address
 * share an aggregate probe), enabling, and what a hit runs; how a probe is
 * armed (ftrace or int3, jump-optimized) is kprobe_arming.ts, kretprobes
 * (kprobes on the function entry that hook the return through rethook) are
 * kretprobes.ts.
 */
import { fail } from '../kernel/errno.js';
import type { Kernel } from '../kernel/kernel.js';
import { kprobeSite } from '../kernel/kprobe_site.js';
import type { PtRegs } from '../kernel/regs.js';
import type { KernelFunction } from '../kernel/symbols.js';
import type { Task } from '../kernel/task.js';
import type { Ftrace } from './ftrace.js';
import { AggrKprobe, Kprobe, KPROBE_FLAG_DISABLED, KPROBE_FLAG_FTRACE, KPROBE_FLAG_ON_FUNC_ENTRY, KPROBE_FLAG_OPTIMIZED, type KprobeSlot, type KprobeSpec } from './kprobe.js';
import { INT3_INSN_SIZE, KprobeArming, type KprobeHits } from './kprobe_arming.js';
import { renderKprobeList } from './kprobe_list.js';
import { type Kretprobe, Kretprobes } from './kretprobes.js';

/** KPROBE_HASH_BITS: the table kprobes/list walks. */
const KPROBE_HASH_BITS = 6;
const GOLDEN_RATIO_64 = 0x61c8864680b583ebn;

/** hash_ptr(addr, 6) on 64-bit. */
export function kprobeHash(addr: bigint): number {
  return Number(BigInt.asUintN(64, addr * GOLDEN_RATIO_64) >> BigInt(64 - KPROBE_HASH_BITS));
}

/** The kprobes subsystem of a kernel. */
export class Kprobes implements KprobeHits {
  readonly kernel: Kernel;
  /** kprobe_table: per bucket, newest first. */
  private readonly buckets: KprobeSlot[][] = Array.from({ length: 1 << KPROBE_HASH_BITS }, () => []);
  private readonly table = new Map<bigint, KprobeSlot>();
  /** kprobes_all_disarmed (debugfs kprobes/enabled = 0). */
  allDisarmed = false;
  /** current_kprobe of each CPU. */
  private readonly running: (Kprobe | null)[];
  private readonly arming: KprobeArming;
  readonly kretprobes: Kretprobes;

  constructor(private readonly ftrace: Ftrace) {
    const kernel = (this.kernel = ftrace.kernel);
    this.running = new Array(kernel.nrCpus).fill(null);
    this.arming = new KprobeArming(ftrace, this);
    this.kretprobes = new Kretprobes(this, ftrace.rethooks);
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
    return this.asRunning(task, this.busy, f);
  }

  /** `f` runs with `p` as the task's CPU's current kprobe. */
  asRunning<T>(task: Task, p: Kprobe, f: () => T): T {
    const cpu = task.cpu % this.running.length;
    const prev = this.running[cpu];
    this.running[cpu] = p;
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
  resolve(spec: KprobeSpec): { addr: bigint; fn: KernelFunction; offset: number; onFuncEntry: boolean; ftrace: boolean } {
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
        this.arming.arm(p);
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
    if (p.post) this.arming.unoptimize(ap);
    if (ap.disabled && !p.disabled) {
      ap.flags &= ~KPROBE_FLAG_DISABLED;
      if (!this.allDisarmed) {
        try {
          this.arming.arm(ap);
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
    if (!ap.disabled && !this.allDisarmed) this.arming.optimize(ap);
  }

  /** enable_kprobe(): EINVAL if not registered or gone. */
  enable(p: Kprobe): void {
    const slot = this.validSlot(p);
    if (!slot || p.gone) fail('EINVAL');
    if (slot !== p) p.flags &= ~KPROBE_FLAG_DISABLED;
    if (!this.allDisarmed && slot.disabled) {
      slot.flags &= ~KPROBE_FLAG_DISABLED;
      try {
        this.arming.arm(slot);
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
      if (!this.allDisarmed && !slot.disabled) this.arming.disarm(slot);
      slot.flags |= KPROBE_FLAG_DISABLED;
    }
  }

  // ------------------------------------------------------------------ kretprobes

  /** register_kretprobe(): see Kretprobes.register(). */
  registerKretprobe(rp: Kretprobe, opts: { disabled?: boolean } = {}): void {
    this.kretprobes.register(rp, opts);
  }

  /** unregister_kretprobe(). */
  unregisterKretprobe(rp: Kretprobe): void {
    this.kretprobes.unregister(rp);
  }

  // ------------------------------------------------------------------ arming

  /**
   * Whether hits of `p` come through the optprobe jump (context as the task
   * runs) rather than int3 (an NMI-like entry with interrupts off). False for
   * ftrace-based and unregistered probes.
   */
  isOptimized(p: Kprobe): boolean {
    const s = this.validSlot(p);
    if (!s) return false;
    this.arming.settle(s);
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
          this.arming.arm(s);
        } catch (e) {
          err = e;
        }
      }
      if (err) throw err;
      return;
    }
    if (this.allDisarmed) return;
    this.allDisarmed = true;
    for (const s of this.slots()) if (!s.disabled) this.arming.disarm(s);
  }

  get armed(): boolean {
    return !this.allDisarmed;
  }

  // ------------------------------------------------------------------ hits

  /** The handlers of the probes at `s`, hit at `addr` through its arming (pre handlers see regs->ip just past the int3). */
  hit(s: KprobeSlot, addr: bigint, regs: PtRegs, task: Task, afterIp: bigint): void {
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
