/**
 * ftrace_regs on x86_64, as fprobe handlers and other SAVE_ARGS users get it:
 * a live view of the registers saved at the call site — the argument
 * registers, %ax, %ip, %sp and %bp — through which every other register
 * reads as 0 (a partial pt_regs, what ftrace_partial_regs() makes). Writes
 * to the saved registers go through, as a handler changing the return value
 * or the ip would on the kernel.
 */
import { PT_REGS, PtRegs, type RegName } from '../kernel/regs.js';

const SAVED = new Set<RegName>(['di', 'si', 'dx', 'cx', 'r8', 'r9', 'ax', 'ip', 'sp', 'bp']);

export class FtraceRegs extends PtRegs {
  constructor(private saved: PtRegs) {
    super();
    this.partial = true;
  }

  /**
   * The same view, moved to another call's registers: a caller that hands
   * out one view at a time (under the ftrace recursion lock, which no
   * handler outlives) need not make one per call.
   */
  of(saved: PtRegs): this {
    this.saved = saved;
    return this;
  }

  override get(name: RegName): bigint {
    return SAVED.has(name) ? this.saved.get(name) : 0n;
  }

  override set(name: RegName, v: bigint): void {
    if (SAVED.has(name)) this.saved.set(name, v);
  }

  override get r(): BigUint64Array {
    const r = new BigUint64Array(PT_REGS.length);
    PT_REGS.forEach((n, i) => (r[i] = this.get(n)));
    return r;
  }

  override get sp(): bigint {
    return this.saved.sp;
  }

  override set sp(v: bigint) {
    this.saved.sp = v;
  }

  override get ip(): bigint {
    return this.saved.ip;
  }

  override set ip(v: bigint) {
    this.saved.ip = v;
  }

  override get ax(): bigint {
    return this.saved.ax;
  }

  override set ax(v: bigint) {
    this.saved.ax = v;
  }

  override arg(n: number): bigint | undefined {
    return this.saved.arg(n);
  }
}
