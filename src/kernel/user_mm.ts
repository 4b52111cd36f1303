/**
 * A process's user address space as its system calls show it: the buffers
 * it passes to read/write and the path strings it passes to open/mkdir live
 * at plausible user addresses (a PIE heap at 0x55..., the stack at
 * 0x7ff...), with the bytes they hold, so `+0(%si):ustring` on
 * do_sys_openat2 or `$arg2:ustring` on vfs_write read them back.
 */
import { AddressSpace } from './memory.js';

const PAGE = 0x1000n;

/** FNV-1a over a number: per-process layout choices that are stable for a pid. */
function mix(n: number, salt: number): number {
  let h = 0x811c9dc5 ^ salt;
  for (let i = 0; i < 4; i++) h = Math.imul(h ^ ((n >>> (8 * i)) & 0xff), 0x01000193);
  return h >>> 0;
}

export class UserMm {
  readonly space = new AddressSpace();
  /** Top of the main thread's stack (below the randomized stack top). */
  readonly stackTop: bigint;
  private readonly heapBase: bigint;
  private heapNext: bigint;
  /** Reused buffers by purpose and size class, as a program reuses its read buffer. */
  private readonly buffers = new Map<string, { addr: bigint; size: number }>();
  private stackNext: bigint;

  constructor(tgid: number, seed: number) {
    const r1 = BigInt(mix(tgid, seed) & 0x3ffff);
    const r2 = BigInt(mix(tgid, seed ^ 0x5bd1e995) & 0xfffff);
    this.stackTop = 0x7ffc00000000n + r1 * PAGE;
    this.heapBase = 0x555555554000n + r2 * PAGE + 0x20000n;
    this.heapNext = this.heapBase;
    this.stackNext = this.stackTop - 0x1000n;
  }

  /** A heap buffer of at least `size` bytes for `purpose` ('read', 'write', ...), reused while big enough. */
  buffer(purpose: string, size: number): bigint {
    const cur = this.buffers.get(purpose);
    if (cur && cur.size >= size) return cur.addr;
    const n = BigInt(Math.max(0x1000, Math.ceil(size / 0x1000) * 0x1000));
    const addr = this.heapNext + 0x10n;
    this.heapNext += n + 0x20n;
    this.space.map(addr, Number(n));
    this.buffers.set(purpose, { addr, size: Number(n) - 0x10 });
    return addr;
  }

  /** Copies bytes to user memory (copy_to_user) at addr. */
  put(addr: bigint, data: Uint8Array): void {
    this.space.write(addr, data);
  }

  /** A NUL-terminated string on the stack, as a program passes a path it built. */
  stackString(s: string): bigint {
    const bytes = Buffer.from(s + '\0', 'latin1');
    const len = BigInt((bytes.length + 15) & ~15);
    if (this.stackNext - len < this.stackTop - 0x10000n) this.stackNext = this.stackTop - 0x1000n;
    this.stackNext -= len;
    this.space.write(this.stackNext, bytes);
    return this.stackNext;
  }

  /** A small structure on the stack (struct stat, struct pollfd...). */
  stackBuffer(size: number): bigint {
    const len = BigInt((size + 15) & ~15);
    if (this.stackNext - len < this.stackTop - 0x10000n) this.stackNext = this.stackTop - 0x1000n;
    this.stackNext -= len;
    this.space.map(this.stackNext, size);
    return this.stackNext;
  }
}
