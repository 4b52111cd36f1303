/**
 * The columnar form of a kernel's symbol table, as the built-in model stores
 * it (data/kernel-<series>/symbols.bin.br, written by
 * tools/kernel-data/build.mjs) and as the host mirror builds it from
 * /proc/kallsyms. Columns, not objects: 200,000 symbols load in a few ms.
 *
 * Binary layout (little-endian), after brotli:
 *   "KSYM" u32 version(1) u32 nsym u32 ntrace u32 nmod u64 firstAddr
 *   nmod × { str name, u32 nregions, nregions × { str kind, u64 start, u32 size } }
 *   str names ('\n'-joined, kallsyms order)
 *   u8[nsym] kallsyms type letters
 *   u8[nsym] module index (0 = vmlinux, i = modules[i-1])
 *   varint[nsym] zigzag deltas of the addresses
 *   varint[ntrace] zigzag deltas of the symbol index of each traceable
 *                  function, in available_filter_functions order
 *   u8[ntrace] __fentry__ offset of each
 * where str = u32 length + latin1 bytes.
 */

interface ModuleRegion {
  kind: 'text' | 'rodata' | 'ro_after_init' | 'data';
  start: bigint;
  size: number;
}

export interface ModuleInfo {
  name: string;
  regions: ModuleRegion[];
  /** A module the kernel can load later: its symbols are hidden until it does. */
  loadable?: boolean;
}

export interface SymbolColumns {
  /** Symbol names, in /proc/kallsyms order (vmlinux sorted by address, then each module). */
  names: string[];
  /** Addresses as two 32-bit halves: plain numbers to compare and print, no bigint per symbol. */
  addrHi: Uint32Array;
  addrLo: Uint32Array;
  /** kallsyms type letters as char codes. */
  types: Uint8Array;
  /** 0 for vmlinux, i for modules[i - 1]. */
  mods: Uint8Array;
  modules: ModuleInfo[];
  /** Symbol index of each traceable function, in available_filter_functions order. */
  traceable: Uint32Array;
  fentry: Uint8Array;
}

class SymbolDataError extends Error {}

export function decodeSymbolData(buf: Uint8Array): SymbolColumns {
  const r = new Reader(buf);
  if (r.latin1(4) !== 'KSYM') throw new SymbolDataError('symbol data: bad magic');
  const version = r.u32();
  if (version !== 1) throw new SymbolDataError(`symbol data: version ${version} unsupported`);
  const nsym = r.u32();
  const ntrace = r.u32();
  const nmod = r.u32();
  const first = r.u64();
  const modules: ModuleInfo[] = [];
  for (let i = 0; i < nmod; i++) {
    const name = r.str();
    const regions: ModuleRegion[] = [];
    for (let j = r.u32(); j > 0; j--) {
      const kind = r.str() as ModuleRegion['kind'];
      regions.push({ kind, start: r.u64(), size: r.u32() });
    }
    modules.push({ name, regions });
  }
  const names = r.str().split('\n');
  if (names.length !== nsym) throw new SymbolDataError('symbol data: name count mismatch');
  const types = r.bytes(nsym).slice();
  const mods = r.bytes(nsym).slice();
  const addrHi = new Uint32Array(nsym);
  const addrLo = new Uint32Array(nsym);
  let hi = Number(first >> 32n);
  let lo = Number(first & 0xffffffffn);
  for (let i = 0; i < nsym; i++) {
    lo += r.zigzag();
    const carry = Math.floor(lo / 0x100000000);
    hi = (hi + carry) >>> 0;
    lo -= carry * 0x100000000;
    addrHi[i] = hi;
    addrLo[i] = lo;
  }
  const traceable = new Uint32Array(ntrace);
  let s = 0;
  for (let i = 0; i < ntrace; i++) {
    s += r.zigzag();
    traceable[i] = s;
  }
  const fentry = r.bytes(ntrace).slice();
  return { names, addrHi, addrLo, types, mods, modules, traceable, fentry };
}

class Reader {
  private p = 0;
  private readonly dv: DataView;
  constructor(private readonly b: Uint8Array) {
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  u32(): number {
    const v = this.dv.getUint32(this.p, true);
    this.p += 4;
    return v;
  }
  u64(): bigint {
    const v = this.dv.getBigUint64(this.p, true);
    this.p += 8;
    return v;
  }
  bytes(n: number): Uint8Array {
    if (this.p + n > this.b.byteLength) throw new SymbolDataError('symbol data: truncated');
    const v = this.b.subarray(this.p, this.p + n);
    this.p += n;
    return v;
  }
  latin1(n: number): string {
    return Buffer.from(this.bytes(n)).toString('latin1');
  }
  str(): string {
    return this.latin1(this.u32());
  }
  /** zigzag LEB128; deltas fit in 53 bits, so plain numbers do the shifting. */
  zigzag(): number {
    let z = 0;
    let mul = 1;
    for (;;) {
      const byte = this.b[this.p++]!;
      z += (byte & 0x7f) * mul;
      if (!(byte & 0x80)) break;
      mul *= 128;
    }
    return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
  }
}

/** The address of symbol i. */
export function addrOf(c: Pick<SymbolColumns, 'addrHi' | 'addrLo'>, i: number): bigint {
  return (BigInt(c.addrHi[i]!) << 32n) | BigInt(c.addrLo[i]!);
}

/** Compares symbol i's address with (hi, lo): <0, 0, >0. */
export function cmpAddr(c: Pick<SymbolColumns, 'addrHi' | 'addrLo'>, i: number, hi: number, lo: number): number {
  const h = c.addrHi[i]!;
  return h !== hi ? h - hi : c.addrLo[i]! - lo;
}

/** Distance in bytes from symbol i up to symbol j (j's address above i's, within 2^53). */
export function addrDiff(c: Pick<SymbolColumns, 'addrHi' | 'addrLo'>, j: number, i: number): number {
  return (c.addrHi[j]! - c.addrHi[i]!) * 0x100000000 + (c.addrLo[j]! - c.addrLo[i]!);
}
