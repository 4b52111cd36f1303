/**
 * Where instructions start inside an emulated function: what x86's
 * can_probe() decides by decoding from the symbol's start, so that a kprobe
 * at `func+offs` is accepted on an instruction boundary and refused with
 * EILSEQ inside an instruction.
 *
 * The model, deterministic per function:
 *  - an IBT kernel starts functions that may be called indirectly with
 *    endbr64 (4 bytes): traceable ones whose __fentry__ call is at +4, and,
 *    for the others (whose prologue we cannot see), global ones;
 *  - a traceable function then has its 5-byte __fentry__ call;
 *  - the rest is a sequence of instructions whose lengths follow the
 *    distribution measured on the real 7.2 kernel (probing every offset of
 *    a few functions), drawn from a generator seeded by the function's name;
 *  - for the functions probed on the real kernel (insn-boundaries data of
 *    the built-in model), the real boundaries, as far as they were probed.
 * So `vfs_read` accepts +0, +4 (after endbr64), +9 (after the call), 16 …
 * and `do_sys_openat2` (no endbr64) +0, +5 …, as the real kernel does.
 */
import type { KernelFunction } from './symbols.js';

export const ENDBR64_LEN = 4;
const FENTRY_CALL_LEN = 5;

/** Real boundaries of a function, known up to (not including) offset `upto`. */
export interface KnownBoundaries {
  upto: number;
  offsets: readonly number[];
}

/**
 * Instruction lengths after the prologue, weighted as counted on the real
 * 7.2 kernel (vfs_read, kernel_clone, tracefs_create_dir, do_sys_openat2,
 * vfs_write, dput, kfree, schedule, do_exit; 387 instructions).
 */
const LENGTH_WEIGHTS: readonly [number, number][] = [
  [1, 19],
  [2, 67],
  [3, 93],
  [4, 42],
  [5, 80],
  [6, 29],
  [7, 31],
  [8, 18],
  [9, 6],
  [10, 2],
];
const WEIGHT_TOTAL = LENGTH_WEIGHTS.reduce((s, [, w]) => s + w, 0);

/** Whether the function starts with endbr64 (arch_adjust_kprobe_addr() then moves an entry probe to +4). */
export function hasEndbr(fn: KernelFunction): boolean {
  if (fn.traceable) return fn.fentryOffset === ENDBR64_LEN;
  return fn.type === 'T' || fn.type === 'W';
}

export class InsnModel {
  private readonly cache = new WeakMap<KernelFunction, Uint8Array>();

  /** @param known real boundaries by function name (vmlinux functions only). */
  constructor(private readonly known: ReadonlyMap<string, KnownBoundaries> = new Map()) {}

  /**
   * Whether an instruction starts at `offset` in `fn` (0 <= offset < size).
   * An offset at or past the end belongs to the next symbol: resolve the
   * address again (as the kernel does) before asking.
   */
  isInsnBoundary(fn: KernelFunction, offset: number): boolean {
    if (!Number.isInteger(offset) || offset < 0) return false;
    if (offset === 0) return true;
    if (offset >= fn.size) return false;
    return this.map(fn)[offset] === 1;
  }

  /** All instruction start offsets of `fn` (for tests and listings). */
  boundaries(fn: KernelFunction): number[] {
    const m = this.map(fn);
    const out: number[] = [];
    for (let i = 0; i < m.length; i++) if (m[i]) out.push(i);
    return out;
  }

  private map(fn: KernelFunction): Uint8Array {
    let m = this.cache.get(fn);
    if (!m) {
      m = this.build(fn);
      this.cache.set(fn, m);
    }
    return m;
  }

  private build(fn: KernelFunction): Uint8Array {
    const size = Math.max(1, fn.size);
    const m = new Uint8Array(size);
    m[0] = 1;
    let pc = 0;
    const known = fn.module ? undefined : this.known.get(fn.name);
    if (known) {
      for (const o of known.offsets) if (o < size) m[o] = 1;
      pc = Math.max(0, ...known.offsets.filter((o) => o < Math.min(size, known.upto)));
    } else {
      if (hasEndbr(fn)) pc = mark(m, ENDBR64_LEN);
      if (fn.traceable) pc = mark(m, fn.fentryOffset + FENTRY_CALL_LEN);
    }
    // From the last known boundary on, draw instruction lengths.
    const rand = mulberry32(fnv1a(fn.name));
    for (;;) {
      pc += drawLength(rand);
      if (pc >= size) break;
      m[pc] = 1;
    }
    return m;
  }
}

function mark(m: Uint8Array, pc: number): number {
  if (pc < m.length) m[pc] = 1;
  return pc;
}

function drawLength(rand: () => number): number {
  let r = rand() * WEIGHT_TOTAL;
  for (const [len, w] of LENGTH_WEIGHTS) {
    r -= w;
    if (r < 0) return len;
  }
  return LENGTH_WEIGHTS[LENGTH_WEIGHTS.length - 1]![0];
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
