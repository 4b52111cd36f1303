/**
 * Where ftrace_ops trampolines are allocated: one page each in the module
 * area (execmem), lowest free page first, as the addresses enabled_functions
 * shows (`tramp: 0xffffffffc0600000`).
 */
import type { Series } from '../kernel/series.js';

const PAGE = 0x1000n;

/** First trampoline page of each series' model (after the boot-time modules). */
const BASE: Record<Series, bigint> = {
  '7.2': 0xffffffffc0600000n,
  '6.12': 0xffffffffc0290000n,
};

export class TrampolineSpace {
  private readonly base: bigint;
  private readonly used = new Set<bigint>();

  constructor(series: Series) {
    this.base = BASE[series];
  }

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
