/** The kernel's notion of time since boot; boot is when the emulator starts. */
export class Clock {
  private readonly bootHr: bigint;
  /** Wall-clock time of boot, in ms since the epoch. */
  readonly bootWallMs: number;

  constructor() {
    this.bootHr = process.hrtime.bigint();
    this.bootWallMs = Date.now();
  }

  /** Nanoseconds since boot (sched_clock / ktime_get_mono_fast_ns). */
  nowNs(): bigint {
    return process.hrtime.bigint() - this.bootHr;
  }

  /** Nanoseconds since boot, as a float-free number when it fits (it does for ~104 days). */
  now(): number {
    return Number(this.nowNs());
  }
}
