/**
 * What a mount's FUSE requests cost: how many of each kind, and how long
 * each took from its arrival to its answer (a blocking read counts the time
 * it waited). Kept as counts and a log-scale histogram per kind, so that
 * recording costs a few additions and the control command `load` can report
 * percentiles.
 */

/** Buckets per doubling: bucket i holds latencies of about 2^(i/4) µs. */
const PER_OCTAVE = 4;
const BUCKETS = 26 * PER_OCTAVE;

class KindStats {
  count = 0;
  totalMs = 0;
  maxMs = 0;
  readonly hist = new Uint32Array(BUCKETS);

  add(ms: number): void {
    this.count++;
    this.totalMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
    const us = ms * 1000;
    const b = us <= 1 ? 0 : Math.min(BUCKETS - 1, Math.floor(Math.log2(us) * PER_OCTAVE));
    this.hist[b]!++;
  }

  /** The latency (ms) below which a fraction `p` of requests answered. */
  quantile(p: number): number {
    const want = p * this.count;
    let seen = 0;
    for (let b = 0; b < BUCKETS; b++) {
      seen += this.hist[b]!;
      if (seen >= want) return 2 ** ((b + 1) / PER_OCTAVE) / 1000;
    }
    return this.maxMs;
  }
}

interface RequestKindReport {
  count: number;
  totalMs: number;
  maxMs: number;
  p50Ms: number;
  p99Ms: number;
}

export class RequestStats {
  private readonly kinds = new Map<string, KindStats>();
  /** Requests recorded so far, of every kind. */
  total = 0;

  record(kind: string, ms: number): void {
    this.total++;
    let k = this.kinds.get(kind);
    if (!k) this.kinds.set(kind, (k = new KindStats()));
    k.add(ms);
  }

  /** Every kind seen so far, most time first. */
  report(): Record<string, RequestKindReport> {
    const out: Record<string, RequestKindReport> = {};
    for (const [name, k] of [...this.kinds].sort((a, b) => b[1].totalMs - a[1].totalMs)) {
      out[name] = { count: k.count, totalMs: k.totalMs, maxMs: k.maxMs, p50Ms: k.quantile(0.5), p99Ms: k.quantile(0.99) };
    }
    return out;
  }
}
