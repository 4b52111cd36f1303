/**
 * Emulated memory: a sparse, page-granular address space. The kernel has one
 * (objects, stacks, strings at 0xffff... addresses); each process has its own
 * user space (buffers passed to read/write). Fetches that fault return
 * undefined, as copy_from_kernel_nofault() fails.
 */
const PAGE_SHIFT = 12n;
const PAGE_SIZE = 4096;
const PAGE_MASK = BigInt(PAGE_SIZE - 1);
const U64_MAX = (1n << 64n) - 1n;

/** A page: its bytes, and a view for word accesses. */
interface Page {
  u8: Uint8Array;
  dv: DataView;
}

function newPage(): Page {
  const u8 = new Uint8Array(PAGE_SIZE);
  return { u8, dv: new DataView(u8.buffer) };
}

export class AddressSpace {
  /** Pages by page number (addr >> 12 fits a double exactly). */
  private readonly pages = new Map<number, Page>();
  private lastKey = -1;
  private lastPage?: Page;
  /**
   * The last two word addresses used, with their page and offset: calls
   * read and write the same stack slots over and over, and every fresh
   * address costs BigInt arithmetic (an allocation per operation).
   */
  private wordAddr0 = -1n;
  private wordPage0?: Page;
  private wordOff0 = 0;
  private wordAddr1 = -1n;
  private wordPage1?: Page;
  private wordOff1 = 0;
  /** The offset of the word word() found last. */
  private wordOff = 0;

  private page(key: number, create: boolean): Page | undefined {
    if (key === this.lastKey) return this.lastPage;
    let p = this.pages.get(key);
    if (!p) {
      if (!create) return undefined;
      this.pages.set(key, (p = newPage()));
    }
    this.lastKey = key;
    this.lastPage = p;
    return p;
  }

  /** Makes [addr, addr+len) readable and writable (zero-filled). */
  map(addr: bigint, len: number): void {
    const first = Number(addr >> PAGE_SHIFT);
    const end = Number((addr + BigInt(len) + PAGE_MASK) >> PAGE_SHIFT);
    for (let p = first; p < end; p++) if (!this.pages.has(p)) this.pages.set(p, newPage());
  }

  unmap(addr: bigint, len: number): void {
    const first = Number(addr >> PAGE_SHIFT);
    const end = Number((addr + BigInt(len) + PAGE_MASK) >> PAGE_SHIFT);
    for (let p = first; p < end; p++) this.pages.delete(p);
    this.lastKey = -1;
    this.lastPage = undefined;
    this.wordAddr0 = this.wordAddr1 = -1n;
    this.wordPage0 = this.wordPage1 = undefined;
  }

  /** The page and offset of a word that lies within one page (undefined: it crosses a page, or is unmapped and not to be made). */
  private word(addr: bigint, create: boolean): Page | undefined {
    if (addr === this.wordAddr0) {
      this.wordOff = this.wordOff0;
      return this.wordPage0;
    }
    if (addr === this.wordAddr1) {
      this.wordOff = this.wordOff1;
      return this.wordPage1;
    }
    const off = Number(addr & PAGE_MASK);
    if (off > PAGE_SIZE - 8) return undefined;
    const p = this.page(Number(addr >> PAGE_SHIFT), create);
    if (!p) return undefined;
    // Round robin: the newer of the two stays.
    this.wordAddr1 = this.wordAddr0;
    this.wordPage1 = this.wordPage0;
    this.wordOff1 = this.wordOff0;
    this.wordAddr0 = addr;
    this.wordPage0 = p;
    this.wordOff0 = off;
    this.wordOff = off;
    return p;
  }

  isMapped(addr: bigint): boolean {
    return this.pages.has(Number(addr >> PAGE_SHIFT));
  }

  /** Reads len bytes, or undefined if any byte is unmapped. */
  read(addr: bigint, len: number): Buffer | undefined {
    const out = Buffer.allocUnsafe(len);
    let done = 0;
    while (done < len) {
      const a = addr + BigInt(done);
      const page = this.page(Number(a >> PAGE_SHIFT), false);
      if (!page) return undefined;
      const off = Number(a & PAGE_MASK);
      const n = Math.min(len - done, PAGE_SIZE - off);
      out.set(page.u8.subarray(off, off + n), done);
      done += n;
    }
    return out;
  }

  /** Writes bytes, mapping pages as needed. */
  write(addr: bigint, data: Uint8Array): void {
    let done = 0;
    while (done < data.length) {
      const a = addr + BigInt(done);
      const page = this.page(Number(a >> PAGE_SHIFT), true)!;
      const off = Number(a & PAGE_MASK);
      const n = Math.min(data.length - done, PAGE_SIZE - off);
      page.u8.set(data.subarray(done, done + n), off);
      done += n;
    }
  }

  /** Zeroes len mapped bytes in place. */
  zero(addr: bigint, len: number): void {
    let done = 0;
    while (done < len) {
      const a = addr + BigInt(done);
      const page = this.page(Number(a >> PAGE_SHIFT), false);
      const off = Number(a & PAGE_MASK);
      const n = Math.min(len - done, PAGE_SIZE - off);
      page?.u8.fill(0, off, off + n);
      done += n;
    }
  }

  readU64(addr: bigint): bigint | undefined {
    const p = this.word(addr, false);
    if (p) return p.dv.getBigUint64(this.wordOff, true);
    if (Number(addr & PAGE_MASK) <= PAGE_SIZE - 8) return undefined;
    return this.read(addr, 8)?.readBigUInt64LE(0);
  }

  writeU64(addr: bigint, v: bigint): void {
    const p = this.word(addr, true);
    if (p) {
      p.dv.setBigUint64(this.wordOff, v >= 0n && v <= U64_MAX ? v : BigInt.asUintN(64, v), true);
      return;
    }
    const b = Buffer.allocUnsafe(8);
    b.writeBigUInt64LE(BigInt.asUintN(64, v));
    this.write(addr, b);
  }

  readU32(addr: bigint): number | undefined {
    const off = Number(addr & PAGE_MASK);
    if (off <= PAGE_SIZE - 4) {
      const p = this.page(Number(addr >> PAGE_SHIFT), false);
      return p ? p.dv.getUint32(off, true) : undefined;
    }
    return this.read(addr, 4)?.readUInt32LE(0);
  }

  /** Writes an unsigned little-endian integer of 1, 2, 4 or 8 bytes. */
  writeUint(addr: bigint, size: number, v: bigint | number): void {
    if (size === 8) return this.writeU64(addr, BigInt(v));
    const n = typeof v === 'number' ? v >>> 0 : Number(BigInt.asUintN(32, v));
    const off = Number(addr & PAGE_MASK);
    if (off <= PAGE_SIZE - size) {
      const dv = this.page(Number(addr >> PAGE_SHIFT), true)!.dv;
      if (size === 4) dv.setUint32(off, n, true);
      else if (size === 2) dv.setUint16(off, n & 0xffff, true);
      else dv.setUint8(off, n & 0xff);
      return;
    }
    const b = Buffer.alloc(size);
    b.writeUIntLE(size === 4 ? n : n & ((1 << (8 * size)) - 1), 0, size);
    this.write(addr, b);
  }

  /** A NUL-terminated string of at most `max` bytes, or undefined on a fault. */
  readCString(addr: bigint, max = 4096): string | undefined {
    const bytes: number[] = [];
    let a = addr;
    while (bytes.length < max) {
      const page = this.page(Number(a >> PAGE_SHIFT), false);
      if (!page) return bytes.length ? Buffer.from(bytes).toString('latin1') : undefined;
      let off = Number(a & PAGE_MASK);
      for (; off < PAGE_SIZE && bytes.length < max; off++) {
        const b = page.u8[off]!;
        if (b === 0) return Buffer.from(bytes).toString('latin1');
        bytes.push(b);
      }
      a = (a | PAGE_MASK) + 1n;
    }
    return Buffer.from(bytes).toString('latin1');
  }

  writeCString(addr: bigint, s: string): void {
    this.write(addr, Buffer.from(s + '\0', 'latin1'));
  }
}

/**
 * A bump allocator over a region of an address space (kmalloc-like); freed
 * blocks are reused by size. Blocks are keyed by their offset in the region
 * (a double), not their bigint address: hashing a bigint costs more than the
 * rest of an allocation.
 */
export class RegionAllocator {
  private next: bigint;
  private readonly free = new Map<number, bigint[]>();
  private readonly sizes = new Map<number, number>();

  constructor(
    private readonly mem: AddressSpace,
    private readonly base: bigint,
    private readonly end: bigint,
  ) {
    this.next = base;
  }

  alloc(size: number, align = 8): bigint {
    const again = this.free.get(size)?.pop();
    if (again !== undefined) {
      this.sizes.set(Number(again - this.base), size);
      return again;
    }
    const a = BigInt(align);
    const addr = (this.next + a - 1n) & ~(a - 1n);
    if (addr + BigInt(size) > this.end) throw new Error('emulated memory region exhausted');
    this.next = addr + BigInt(Math.max(size, 1));
    this.mem.map(addr, size);
    this.sizes.set(Number(addr - this.base), size);
    return addr;
  }

  /** Whether addr is a block handed out and not released. */
  owns(addr: bigint): boolean {
    return addr >= this.base && addr < this.end && this.sizes.has(Number(addr - this.base));
  }

  /** Returns a block to the allocator, zeroed (its pages stay mapped: stale pointers read zeros, not faults). */
  release(addr: bigint): void {
    if (addr < this.base || addr >= this.end) return;
    const key = Number(addr - this.base);
    const size = this.sizes.get(key);
    if (size === undefined) return;
    this.sizes.delete(key);
    this.mem.zero(addr, size);
    let l = this.free.get(size);
    if (!l) this.free.set(size, (l = []));
    l.push(addr);
  }
}
