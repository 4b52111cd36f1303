/** x86_64 registers as hooks see them (struct pt_regs, and ftrace_regs as a partial view). */

/** pt_regs field order (arch/x86/include/asm/ptrace.h, 64-bit): offsets are index * 8. */
export const PT_REGS = ['r15', 'r14', 'r13', 'r12', 'bp', 'bx', 'r11', 'r10', 'r9', 'r8', 'ax', 'cx', 'dx', 'si', 'di', 'orig_ax', 'ip', 'cs', 'flags', 'sp', 'ss'] as const;
export type RegName = (typeof PT_REGS)[number];

/** Integer arguments in calling-convention order: $arg1 is %di. */
export const ARG_REGS: readonly RegName[] = ['di', 'si', 'dx', 'cx', 'r8', 'r9'];

const INDEX: Record<string, number> = Object.fromEntries(PT_REGS.map((n, i) => [n, i]));

/** What ftrace_regs carries on x86_64: argument and return registers, ip, sp, bp. */
const FTRACE_REGS = new Set<RegName>(['di', 'si', 'dx', 'cx', 'r8', 'r9', 'ax', 'ip', 'sp', 'bp']);

/**
 * Registers of one call. Most calls are never looked at, so the full
 * register file is made only when something reads or writes a register
 * other than the arguments, %sp, %ip and %ax.
 */
export class PtRegs {
  private r_?: BigUint64Array;
  private args_: readonly bigint[] = NO_ARGS;
  private sp_ = 0n;
  private ip_ = 0n;
  private ax_ = 0n;
  /** A pt_regs built from ftrace_regs: only FTRACE_REGS are valid, the rest read as 0. */
  partial = false;

  /** The register file in pt_regs order (made on first use). */
  get r(): BigUint64Array {
    let r = this.r_;
    if (!r) {
      r = new BigUint64Array(PT_REGS.length);
      for (let i = 0; i < this.args_.length && i < ARG_REGS.length; i++) r[INDEX[ARG_REGS[i]!]!] = this.args_[i]!;
      r[INDEX.sp] = this.sp_;
      r[INDEX.ip] = this.ip_;
      r[INDEX.ax] = this.ax_;
      this.r_ = r;
    }
    return r;
  }

  /** Sets the argument registers (%di, %si, ... from the first) without making the register file. */
  setArgs(values: readonly bigint[]): void {
    if (this.r_) {
      for (let i = 0; i < ARG_REGS.length; i++) this.r_[INDEX[ARG_REGS[i]!]!] = values[i] ?? 0n;
    } else this.args_ = values;
  }

  get(name: RegName): bigint {
    if (this.partial && !FTRACE_REGS.has(name)) return 0n;
    if (this.r_) return this.r_[INDEX[name]!]!;
    switch (name) {
      case 'sp':
        return this.sp_;
      case 'ip':
        return this.ip_;
      case 'ax':
        return this.ax_;
      default: {
        const i = ARG_INDEX[name];
        return i === undefined ? 0n : (this.args_[i] ?? 0n);
      }
    }
  }

  set(name: RegName, v: bigint): void {
    this.r[INDEX[name]!] = BigInt.asUintN(64, v);
  }

  /** The value at pt_regs offset `off` (the kernel's regs_get_register). */
  atOffset(off: number): bigint | undefined {
    if (off % 8 !== 0 || off < 0 || off / 8 >= PT_REGS.length) return undefined;
    return this.get(PT_REGS[off / 8]!);
  }

  get sp(): bigint {
    return this.r_ ? this.r_[INDEX.sp]! : this.sp_;
  }

  set sp(v: bigint) {
    if (this.r_) this.r_[INDEX.sp] = v;
    else this.sp_ = v;
  }

  get ip(): bigint {
    return this.r_ ? this.r_[INDEX.ip]! : this.ip_;
  }

  set ip(v: bigint) {
    if (this.r_) this.r_[INDEX.ip] = v;
    else this.ip_ = v;
  }

  get ax(): bigint {
    return this.r_ ? this.r_[INDEX.ax]! : this.ax_;
  }

  set ax(v: bigint) {
    const u = BigInt.asUintN(64, v);
    if (this.r_) this.r_[INDEX.ax] = u;
    else this.ax_ = u;
  }

  /** The n-th integer argument register (1-based), or undefined past %r9. */
  arg(n: number): bigint | undefined {
    const name = ARG_REGS[n - 1];
    return name === undefined ? undefined : this.get(name);
  }

  /** A partial copy, as fprobe hands ftrace_regs to kprobe-style consumers. */
  toPartial(): PtRegs {
    const p = new PtRegs();
    p.r.set(this.r);
    p.partial = true;
    return p;
  }

  static offsetOf(name: string): number | undefined {
    const i = INDEX[name];
    return i === undefined ? undefined : i * 8;
  }
}

const NO_ARGS: readonly bigint[] = [];
const ARG_INDEX: Partial<Record<RegName, number>> = Object.fromEntries(ARG_REGS.map((n, i) => [n, i]));
