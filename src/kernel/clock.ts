/** The kernel's notion of time since boot; boot is when the emulator starts. */
export class Clock {
  private readonly bootHr: bigint;
  /** Wall-clock time of boot, in ms since the epoch. */
  readonly bootWallMs: number;
  /** A virtual time source (ns since boot) for tests: time moves only when they say. */
  private virtualNs?: bigint;

  constructor(opts: { virtual?: boolean } = {}) {
    this.bootHr = process.hrtime.bigint();
    this.bootWallMs = Date.now();
    if (opts.virtual) this.virtualNs = 0n;
  }

  get isVirtual(): boolean {
    return this.virtualNs !== undefined;
  }

  /** Moves a virtual clock forward (no effect on a real one). */
  advance(ns: bigint | number): void {
    if (this.virtualNs !== undefined) this.virtualNs += BigInt(ns);
  }

  /** Nanoseconds since boot (sched_clock / ktime_get_mono_fast_ns). */
  nowNs(): bigint {
    return this.virtualNs ?? process.hrtime.bigint() - this.bootHr;
  }

  /** Nanoseconds since boot, as a float-free number when it fits (it does for ~104 days). */
  now(): number {
    return Number(this.nowNs());
  }

  /** jiffies at HZ=250, starting where the kernel starts them (INITIAL_JIFFIES: 5 minutes before wrap). */
  jiffies(): bigint {
    return (0x100000000n - 300n * 250n + this.nowNs() / 4_000_000n) & 0xffffffffffffffffn;
  }
}
