/**
 * Where ftrace_ops trampolines are allocated: one page each in the module
 * area (execmem), lowest free page first, as the addresses enabled_functions
 * shows (`tramp: 0xffffffffc0600000`).
 */
const PAGE = 0x1000n;

export class TrampolineSpace {
  private readonly used = new Set<bigint>();

  /** `base`: the first page, after the boot-time modules (the profile's trampolineBase). */
  constructor(private readonly base: bigint) {}

  alloc(): bigint {
    let a = this.base;
    while (this.used.has(a)) a += PAGE;
    this.used.add(a);
    return a;
  }

  free(addr: bigint): void {
    this.used.delete(addr);
  }

  /** Whether `addr` lies in a live trampoline (is_ftrace_trampoline()). */
  contains(addr: bigint): boolean {
    return this.used.has(addr & ~(PAGE - 1n));
  }
}
