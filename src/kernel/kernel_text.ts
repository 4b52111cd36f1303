/**
 * What the real kernel's text tells a kprobe (text.bin.br, built by
 * tools/kernel-data/text.mjs from the bzImage of the model's build): where
 * each instruction of [_stext, _etext) starts in the text as it runs
 * (paravirt calls patched as at boot), which functions start with
 * endbr64, and the code check_kprobe_address_safe() refuses to patch
 * (jump label sites, static call sites, BUG() sites). Offsets are from
 * _stext.
 *
 * Layout (after brotli): "TEXT" u32 version(1) u32 textSize, u32 nInsns and
 * nInsns instruction lengths (bytes), then four lists (u32 count, varint
 * deltas): endbr64 function starts, jump label sites (followed by one length
 * byte each), static call sites, bug sites.
 */

/** Why the kernel will not put a kprobe on an address of its text. */
export type ReservedText = 'jump-label' | 'static-call' | 'bug';

/** A static call site is a 5-byte call. */
const STATIC_CALL_LEN = 5;

export class KernelText {
  readonly size: number;
  /** One bit per byte of text: an instruction starts there. */
  private readonly starts: Uint8Array;
  private readonly endbr: Set<number>;
  private readonly jumpSites: Int32Array;
  private readonly jumpLens: Uint8Array;
  private readonly staticCalls: Int32Array;
  private readonly bugs: Set<number>;

  constructor(data: Uint8Array) {
    const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (String.fromCharCode(...data.subarray(0, 4)) !== 'TEXT' || dv.getUint32(4, true) !== 1) throw new Error('text.bin: bad header');
    this.size = dv.getUint32(8, true);
    const n = dv.getUint32(12, true);
    let p = 16;
    this.starts = new Uint8Array((this.size >> 3) + 1);
    let off = 0;
    for (let i = 0; i < n; i++) {
      this.starts[off >> 3]! |= 1 << (off & 7);
      off += data[p + i]!;
    }
    p += n;
    const list = (): Int32Array => {
      const count = dv.getUint32(p, true);
      p += 4;
      const out = new Int32Array(count);
      let v = 0;
      for (let i = 0; i < count; i++) {
        let d = 0;
        let mul = 1;
        for (;;) {
          const b = data[p++]!;
          d += (b & 0x7f) * mul;
          mul *= 128;
          if (!(b & 0x80)) break;
        }
        out[i] = v += d;
      }
      return out;
    };
    this.endbr = new Set(list());
    this.jumpSites = list();
    this.jumpLens = data.slice(p, p + this.jumpSites.length);
    p += this.jumpSites.length;
    this.staticCalls = list();
    this.bugs = new Set(list());
  }

  /** Whether an instruction starts at `off` (can_probe()'s decoding). */
  isInsnStart(off: number): boolean {
    return off >= 0 && off < this.size && (this.starts[off >> 3]! & (1 << (off & 7))) !== 0;
  }

  /** Whether the function at `off` starts with endbr64. */
  startsWithEndbr(off: number): boolean {
    return this.endbr.has(off);
  }

  /** The site covering `off` that the kernel will not patch, if any. */
  reserved(off: number): ReservedText | undefined {
    const j = lastAtOrBefore(this.jumpSites, off);
    if (j >= 0 && off < this.jumpSites[j]! + this.jumpLens[j]!) return 'jump-label';
    const s = lastAtOrBefore(this.staticCalls, off);
    if (s >= 0 && off < this.staticCalls[s]! + STATIC_CALL_LEN) return 'static-call';
    if (this.bugs.has(off)) return 'bug';
    return undefined;
  }
}

/** Index of the last element <= v in a sorted array, or -1. */
function lastAtOrBefore(a: Int32Array, v: number): number {
  let lo = 0;
  let hi = a.length - 1;
  let r = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! <= v) {
      r = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return r;
}
