/** x86_64 registers as hooks see them (struct pt_regs, and ftrace_regs as a partial view). */

/** pt_regs field order (arch/x86/include/asm/ptrace.h, 64-bit): offsets are index * 8. */
export const PT_REGS = ['r15', 'r14', 'r13', 'r12', 'bp', 'bx', 'r11', 'r10', 'r9', 'r8', 'ax', 'cx', 'dx', 'si', 'di', 'orig_ax', 'ip', 'cs', 'flags', 'sp', 'ss'] as const;
export type RegName = (typeof PT_REGS)[number];

/** Integer arguments in calling-convention order: $arg1 is %di. */
export const ARG_REGS: readonly RegName[] = ['di', 'si', 'dx', 'cx', 'r8', 'r9'];

const INDEX: Record<string, number> = Object.fromEntries(PT_REGS.map((n, i) => [n, i]));

/** What ftrace_regs carries on x86_64: argument and return registers, ip, sp, bp. */
const FTRACE_REGS = new Set<RegName>(['di', 'si', 'dx', 'cx', 'r8', 'r9', 'ax', 'ip', 'sp', 'bp']);

export class PtRegs {
  readonly r = new BigUint64Array(PT_REGS.length);
  /** A pt_regs built from ftrace_regs: only FTRACE_REGS are valid, the rest read as 0. */
  partial = false;

  get(name: RegName): bigint {
    if (this.partial && !FTRACE_REGS.has(name)) return 0n;
    return this.r[INDEX[name]];
  }

  set(name: RegName, v: bigint): void {
    this.r[INDEX[name]] = BigInt.asUintN(64, v);
  }

  /** The value at pt_regs offset `off` (the kernel's regs_get_register). */
  atOffset(off: number): bigint | undefined {
    if (off % 8 !== 0 || off < 0 || off / 8 >= PT_REGS.length) return undefined;
    return this.get(PT_REGS[off / 8]);
  }

  get sp(): bigint {
    return this.r[INDEX.sp];
  }

  set sp(v: bigint) {
    this.r[INDEX.sp] = v;
  }

  get ip(): bigint {
    return this.r[INDEX.ip];
  }

  set ip(v: bigint) {
    this.r[INDEX.ip] = v;
  }

  get ax(): bigint {
    return this.r[INDEX.ax];
  }

  set ax(v: bigint) {
    this.r[INDEX.ax] = BigInt.asUintN(64, v);
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
