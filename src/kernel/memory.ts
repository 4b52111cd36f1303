/**
 * Emulated memory: a sparse, page-granular address space. The kernel has one
 * (objects, stacks, strings at 0xffff... addresses); each process has its own
 * user space (buffers passed to read/write). Fetches that fault return
 * undefined, as copy_from_kernel_nofault() fails.
 */
const PAGE_SHIFT = 12n;
const PAGE_SIZE = 4096;
const PAGE_MASK = BigInt(PAGE_SIZE - 1);

export class AddressSpace {
  private readonly pages = new Map<bigint, Uint8Array>();

  /** Makes [addr, addr+len) readable and writable (zero-filled). */
  map(addr: bigint, len: number): void {
    for (let p = addr >> PAGE_SHIFT, end = (addr + BigInt(len) + PAGE_MASK) >> PAGE_SHIFT; p < end; p++) {
      if (!this.pages.has(p)) this.pages.set(p, new Uint8Array(PAGE_SIZE));
    }
  }

  unmap(addr: bigint, len: number): void {
    for (let p = addr >> PAGE_SHIFT, end = (addr + BigInt(len) + PAGE_MASK) >> PAGE_SHIFT; p < end; p++) this.pages.delete(p);
  }

  isMapped(addr: bigint): boolean {
    return this.pages.has(addr >> PAGE_SHIFT);
  }

  /** Reads len bytes, or undefined if any byte is unmapped. */
  read(addr: bigint, len: number): Buffer | undefined {
    const out = Buffer.allocUnsafe(len);
    let done = 0;
    while (done < len) {
      const a = addr + BigInt(done);
      const page = this.pages.get(a >> PAGE_SHIFT);
      if (!page) return undefined;
      const off = Number(a & PAGE_MASK);
      const n = Math.min(len - done, PAGE_SIZE - off);
      out.set(page.subarray(off, off + n), done);
      done += n;
    }
    return out;
  }

  /** Writes bytes, mapping pages as needed. */
  write(addr: bigint, data: Uint8Array): void {
    let done = 0;
    while (done < data.length) {
      const a = addr + BigInt(done);
      const key = a >> PAGE_SHIFT;
      let page = this.pages.get(key);
      if (!page) this.pages.set(key, (page = new Uint8Array(PAGE_SIZE)));
      const off = Number(a & PAGE_MASK);
      const n = Math.min(data.length - done, PAGE_SIZE - off);
      page.set(data.subarray(done, done + n), off);
      done += n;
    }
  }

  readU64(addr: bigint): bigint | undefined {
    return this.read(addr, 8)?.readBigUInt64LE(0);
  }

  writeU64(addr: bigint, v: bigint): void {
    const b = Buffer.allocUnsafe(8);
    b.writeBigUInt64LE(BigInt.asUintN(64, v));
    this.write(addr, b);
  }

  /** A NUL-terminated string of at most `max` bytes, or undefined on a fault. */
  readCString(addr: bigint, max = 4096): string | undefined {
    const bytes: number[] = [];
    for (let i = 0; i < max; i++) {
      const b = this.read(addr + BigInt(i), 1);
      if (!b) return bytes.length ? Buffer.from(bytes).toString('latin1') : undefined;
      if (b[0] === 0) break;
      bytes.push(b[0]);
    }
    return Buffer.from(bytes).toString('latin1');
  }

  writeCString(addr: bigint, s: string): void {
    this.write(addr, Buffer.from(s + '\0', 'latin1'));
  }
}

/** A bump allocator over a region of an address space (kmalloc-like, never reuses). */
export class RegionAllocator {
  private next: bigint;

  constructor(
    private readonly mem: AddressSpace,
    base: bigint,
    private readonly end: bigint,
  ) {
    this.next = base;
  }

  alloc(size: number, align = 8): bigint {
    const a = BigInt(align);
    const addr = (this.next + a - 1n) & ~(a - 1n);
    if (addr + BigInt(size) > this.end) throw new Error('emulated memory region exhausted');
    this.next = addr + BigInt(Math.max(size, 1));
    this.mem.map(addr, size);
    return addr;
  }
}
