/**
 * The emulated kernel's deterministic randomness: every random choice of the
 * background activity comes from a stream derived from `--seed`, one stream
 * per purpose (per CPU, per subsystem), so that runs with the same seed and
 * the same sequence of steps make the same choices.
 */
export class Rng {
  private s: number;

  constructor(seed: number, label = '') {
    let h = (seed | 0) ^ 0x9e3779b9;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
    this.s = h >>> 0 || 0x6d2b79f5;
  }

  /** A derived, independent stream. */
  fork(label: string): Rng {
    return new Rng(this.u32(), label);
  }

  /** mulberry32: 32 random bits. */
  u32(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return n <= 1 ? 0 : Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** Picks by weight. */
  weighted<T>(items: readonly T[], weight: (t: T) => number): T {
    let total = 0;
    for (const it of items) total += weight(it);
    let r = this.next() * total;
    for (const it of items) {
      r -= weight(it);
      if (r < 0) return it;
    }
    return items[items.length - 1]!;
  }

  /** Exponentially distributed with the given mean (Poisson arrivals). */
  exp(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }
}
