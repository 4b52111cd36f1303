/** Values an event's print-fmt arguments evaluate to, with C integer semantics. */
import type { SymbolTable } from '../../../kernel/symbols.js';

export type IntBits = 8 | 16 | 32 | 64;

export type Val =
  /** An integer (or pointer) of a C type: `v` is already wrapped to `bits` and sign. */
  | { k: 'int'; v: bigint; bits: IntBits; signed: boolean }
  /** A C string made by a helper (__get_str, __print_flags...) or a literal. */
  | { k: 'str'; s: string }
  /** Bytes inside the record (an array field, a dynamic array): what a pointer into the entry points at. */
  | { k: 'mem'; buf: Buffer; elemBits: IntBits; elemSigned: boolean }
  /** A brace list `{ mask, "name" }`. */
  | { k: 'list'; items: Val[] };

/** What printing needs from outside the record. */
export interface PrintEnv {
  /** For %pS / %ps / %pB. */
  symbols?: SymbolTable;
  /** %p's hashed pointer id (32 bits on the kernel); absent: a fixed per-process key. */
  hashPointer?(addr: bigint): bigint;
  /** A NUL-terminated string at a kernel address (for `%s` of a `const char *` field). */
  readKernelString?(addr: bigint): string | undefined;
  /** Kernel memory (for %pI4 and the like given a kernel pointer). */
  readKernel?(addr: bigint, len: number): Buffer | undefined;
  /** A kernel variable a print fmt reads at print time (`jiffies`). */
  variable?(name: string): bigint | undefined;
}

/** Options of the trace array that change how events print. */
export interface PrintOptions {
  /** hash-ptr: %p prints hashed ids (default on). */
  hashPtr: boolean;
  /** bitmask-list: bitmasks print as ranges "0-3,5" instead of hex. */
  bitmaskList: boolean;
}

export const DEFAULT_PRINT_OPTIONS: PrintOptions = { hashPtr: true, bitmaskList: false };

export function wrap(v: bigint, bits: IntBits, signed: boolean): bigint {
  return signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
}

export function int(v: bigint, bits: IntBits = 32, signed = true): Val {
  return { k: 'int', v: wrap(v, bits, signed), bits, signed };
}

export class EvalError extends Error {}

/** The integer behind a value (pointers to record memory have none: 0). */
export function toBig(v: Val): bigint {
  switch (v.k) {
    case 'int':
      return v.v;
    case 'str':
    case 'mem':
      return 1n; // a non-NULL pointer
    default:
      throw new EvalError('a list is not a value');
  }
}

export function truthy(v: Val): boolean {
  return v.k === 'int' ? v.v !== 0n : true;
}

/** Bytes of a char array up to its first NUL. */
export function cString(buf: Buffer): string {
  const z = buf.indexOf(0);
  return buf.toString('latin1', 0, z < 0 ? buf.length : z);
}

/** Size and signedness of a C scalar type by name (pointers are 64-bit unsigned). */
export function scalarType(base: string, ptr = 0): { bits: IntBits; signed: boolean } | undefined {
  if (ptr > 0) return { bits: 64, signed: false };
  const b = base.replace(/\b(const|volatile)\b/g, '').replace(/\s+/g, ' ').trim();
  const t = SCALARS[b];
  if (t) return { bits: t[0], signed: t[1] };
  if (/^enum /.test(b)) return { bits: 32, signed: false };
  return undefined;
}

const SCALARS: Record<string, [IntBits, boolean]> = {
  char: [8, true], 'signed char': [8, true], 'unsigned char': [8, false], bool: [8, false], _Bool: [8, false],
  short: [16, true], 'short int': [16, true], 'signed short': [16, true], 'unsigned short': [16, false], 'unsigned short int': [16, false], 'short unsigned int': [16, false],
  int: [32, true], signed: [32, true], 'signed int': [32, true], unsigned: [32, false], 'unsigned int': [32, false],
  long: [64, true], 'long int': [64, true], 'signed long': [64, true], 'unsigned long': [64, false], 'unsigned long int': [64, false], 'long unsigned int': [64, false],
  'long long': [64, true], 'long long int': [64, true], 'signed long long': [64, true], 'unsigned long long': [64, false], 'unsigned long long int': [64, false], 'long long unsigned int': [64, false],
  u8: [8, false], u16: [16, false], u32: [32, false], u64: [64, false], s8: [8, true], s16: [16, true], s32: [32, true], s64: [64, true],
  __u8: [8, false], __u16: [16, false], __u32: [32, false], __u64: [64, false], __s8: [8, true], __s16: [16, true], __s32: [32, true], __s64: [64, true],
  __le16: [16, false], __le32: [32, false], __le64: [64, false], __be16: [16, false], __be32: [32, false], __be64: [64, false],
  size_t: [64, false], ssize_t: [64, true], loff_t: [64, true], pid_t: [32, true], uid_t: [32, false], gid_t: [32, false],
  gfp_t: [32, false], dev_t: [32, false], umode_t: [16, false], ino_t: [64, false], sector_t: [64, false], blkcnt_t: [64, false],
  phys_addr_t: [64, false], dma_addr_t: [64, false], resource_size_t: [64, false], cputime_t: [64, false], ktime_t: [64, true],
  clockid_t: [32, true], time64_t: [64, true], off_t: [64, true], key_serial_t: [32, true], qid_t: [32, false],
  uintptr_t: [64, false], intptr_t: [64, true], xfs_ino_t: [64, false], irq_hw_number_t: [64, false], netdev_features_t: [64, false],
};
