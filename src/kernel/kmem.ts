/**
 * The kernel address space and where objects go in it, at x86_64's
 * addresses: slab objects in the direct map (0xffff888...), one region per
 * cache so a cache's objects sit together; kernel stacks in vmalloc space
 * (0xffffc900...); strings the kernel keeps (names) interned.
 */
import { AddressSpace, RegionAllocator } from './memory.js';

const DIRECT_MAP = 0xffff888000000000n;
const VMALLOC_START = 0xffffc90000000000n;
/** THREAD_SIZE on x86_64 (16 KiB), and the guard gap between vmalloc'd stacks. */
export const THREAD_SIZE = 0x4000;
const STACK_STRIDE = 0x8000n;
/** Each slab cache's share of the direct map (objects of one cache sit together). */
const CACHE_REGION = 0x10000000n;
const SLAB_BASE = DIRECT_MAP + 0x4000000n;

/** kmalloc size classes (SLUB's kmalloc-N caches). */
const KMALLOC_SIZES = [8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192];

export function kmallocSize(n: number): number {
  for (const s of KMALLOC_SIZES) if (n <= s) return s;
  return Math.ceil(n / 4096) * 4096;
}

function kmallocCacheName(n: number): string {
  const s = kmallocSize(n);
  return s <= 8192 ? `kmalloc-${s >= 1024 ? `${s / 1024}k` : s}` : `kmalloc-large`;
}

class SlabCache {
  private readonly alloc_: RegionAllocator;

  constructor(
    readonly name: string,
    readonly objectSize: number,
    mem: AddressSpace,
    base: bigint,
  ) {
    this.alloc_ = new RegionAllocator(mem, base, base + CACHE_REGION);
  }

  alloc(): bigint {
    return this.alloc_.alloc(this.objectSize, Math.min(64, this.objectSize >= 64 ? 64 : 8));
  }

  free(addr: bigint): void {
    this.alloc_.release(addr);
  }

  owns(addr: bigint): boolean {
    return this.alloc_.owns(addr);
  }
}

export class KernelMemory {
  readonly space = new AddressSpace();
  private readonly caches = new Map<string, SlabCache>();
  /** The caches in the order of their regions: an object's region names its cache. */
  private readonly regions: SlabCache[] = [];
  private readonly strings = new Map<string, bigint>();
  private nextStack = VMALLOC_START + 0x10000n;
  private readonly freeStacks: bigint[] = [];

  /** The slab cache of this name, made on first use with objects of `size` bytes. */
  cache(name: string, size: number): SlabCache {
    let c = this.caches.get(name);
    if (!c) {
      c = new SlabCache(name, size, this.space, SLAB_BASE + BigInt(this.regions.length) * CACHE_REGION);
      this.caches.set(name, c);
      this.regions.push(c);
    }
    return c;
  }

  cacheAlloc(name: string, size: number): bigint {
    return this.cache(name, size).alloc();
  }

  /** kmalloc(n): an object of the size class holding n bytes. */
  kmalloc(n: number): bigint {
    return this.cacheAlloc(kmallocCacheName(n), kmallocSize(n));
  }

  /** kfree / kmem_cache_free: the object goes back to its cache. */
  free(addr: bigint): void {
    this.cacheOf(addr)?.free(addr);
  }

  /** The cache a live object came from. */
  cacheOf(addr: bigint): SlabCache | undefined {
    if (addr < SLAB_BASE) return undefined;
    const c = this.regions[Number((addr - SLAB_BASE) / CACHE_REGION)];
    return c?.owns(addr) ? c : undefined;
  }

  /** A string the kernel holds for good (event and file names): one copy per distinct string. */
  kstr(s: string): bigint {
    let a = this.strings.get(s);
    if (a === undefined) {
      a = this.kmalloc(Buffer.byteLength(s, 'latin1') + 1);
      this.space.writeCString(a, s);
      this.strings.set(s, a);
    }
    return a;
  }

  /** A kernel stack: returns its base (lowest address); the stack grows down from base + THREAD_SIZE. */
  allocStack(): bigint {
    const base = this.freeStacks.pop() ?? ((this.nextStack += STACK_STRIDE) - STACK_STRIDE);
    this.space.map(base + BigInt(THREAD_SIZE) - 0x1000n, 0x1000);
    return base;
  }

  freeStack(base: bigint): void {
    this.freeStacks.push(base);
  }
}
