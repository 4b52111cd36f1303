/**
 * Where instructions start inside an emulated function: what x86's
 * can_probe() decides by decoding from the symbol's start, so that a kprobe
 * at `func+offs` is accepted on an instruction boundary and refused with
 * EILSEQ inside an instruction.
 *
 * The built-in models know the real kernel's text (kernel_text.ts): its
 * decoding, endbr64 and the sites it will not patch. Elsewhere (modules, a
 * host's kernel), a model, deterministic per function:
 *  - an IBT kernel starts functions that may be called indirectly with
 *    endbr64 (4 bytes): traceable ones whose __fentry__ call is at +4, and,
 *    for the others (whose prologue we cannot see), global ones;
 *  - a traceable function then has its 5-byte __fentry__ call;
 *  - the rest is a sequence of instructions whose lengths follow the
 *    distribution measured on the real 7.2 kernel (probing every offset of
 *    a few functions), drawn from a generator seeded by the function's name.
 */
import type { KernelText, ReservedText } from './kernel_text.js';
import type { KernelFunction } from './symbols.js';

export const ENDBR64_LEN = 4;
const FENTRY_CALL_LEN = 5;

/** The real text of vmlinux, from `start` (_stext); loaded when first asked. */
export interface TextSource {
  start: bigint;
  load(): KernelText;
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

export class InsnModel {
  private readonly cache = new WeakMap<KernelFunction, Uint8Array>();
  private loaded?: KernelText;

  constructor(private readonly source?: TextSource) {}

  /** The real text and `fn`'s offset in it, when the model has the text and `fn` is in it. */
  private textOf(fn: KernelFunction): { text: KernelText; at: number } | undefined {
    if (!this.source || fn.module || fn.addr < this.source.start) return undefined;
    const text = (this.loaded ??= this.source.load());
    const at = Number(fn.addr - this.source.start);
    return at < text.size ? { text, at } : undefined;
  }

  /** Whether the function starts with endbr64 (arch_adjust_kprobe_addr() then moves an entry probe to +4). */
  hasEndbr(fn: KernelFunction): boolean {
    const t = this.textOf(fn);
    if (t) return t.text.startsWithEndbr(t.at);
    if (fn.traceable) return fn.fentryOffset === ENDBR64_LEN;
    return fn.type === 'T' || fn.type === 'W';
  }

  /** Code at `offset` in `fn` that the kernel will not patch (check_kprobe_address_safe()), if known. */
  reserved(fn: KernelFunction, offset: number): ReservedText | undefined {
    const t = this.textOf(fn);
    return t?.text.reserved(t.at + offset);
  }

  /**
   * Whether an instruction starts at `offset` in `fn` (0 <= offset < size).
   * An offset at or past the end belongs to the next symbol: resolve the
   * address again (as the kernel does) before asking.
   */
  isInsnBoundary(fn: KernelFunction, offset: number): boolean {
    if (!Number.isInteger(offset) || offset < 0) return false;
    if (offset === 0) return true;
    if (offset >= fn.size) return false;
    const t = this.textOf(fn);
    if (t) return t.text.isInsnStart(t.at + offset);
    return this.map(fn)[offset] === 1;
  }

  /** All instruction start offsets of `fn` (for tests and listings). */
  boundaries(fn: KernelFunction): number[] {
    const out: number[] = [];
    const t = this.textOf(fn);
    if (t) {
      for (let i = 0; i < fn.size; i++) if (t.text.isInsnStart(t.at + i)) out.push(i);
      return out;
    }
    const m = this.map(fn);
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
    if (this.hasEndbr(fn)) pc = mark(m, ENDBR64_LEN);
    if (fn.traceable) pc = mark(m, fn.fentryOffset + FENTRY_CALL_LEN);
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
