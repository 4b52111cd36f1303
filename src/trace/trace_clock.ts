/**
 * The trace clocks a trace array may stamp its events with (trace_clock).
 * Time clocks count nanoseconds; counter, uptime and x86-tsc have their own
 * units and print as plain integers.
 */
import type { Clock } from '../kernel/clock.js';

export interface TraceClock {
  readonly name: string;
  /** Timestamps are nanoseconds (printed as seconds.microseconds). */
  readonly inNs: boolean;
  now(): number;
}

/** TAI was 37 s ahead of UTC when these kernels were released. */
const TAI_OFFSET_NS = 37e9;
/** The emulated TSC runs at 2.5 GHz from boot. */
const TSC_PER_NS = 2.5;

/** The clocks of one kernel, in trace_clock order; `counter` is shared by every trace array. */
export function makeTraceClocks(clock: Clock): readonly TraceClock[] {
  let counter = 0;
  // performance.now() reads the same monotonic source as the kernel clock, at a third of the cost.
  const base = clock.now() - performance.now() * 1e6;
  const ns = () => Math.floor(performance.now() * 1e6 + base);
  const wallBootNs = clock.bootWallMs * 1e6;
  return [
    { name: 'local', inNs: true, now: ns },
    { name: 'global', inNs: true, now: ns },
    { name: 'counter', inNs: false, now: () => ++counter },
    // jiffies since boot, in USER_HZ (100 per second)
    { name: 'uptime', inNs: false, now: () => Math.floor(ns() / 1e7) },
    { name: 'perf', inNs: true, now: ns },
    { name: 'mono', inNs: true, now: ns },
    { name: 'mono_raw', inNs: true, now: ns },
    { name: 'boot', inNs: true, now: ns },
    { name: 'tai', inNs: true, now: () => wallBootNs + TAI_OFFSET_NS + ns() },
    { name: 'x86-tsc', inNs: false, now: () => Math.floor(ns() * TSC_PER_NS) },
  ];
}

/** trace_clock's content: every clock, the current one in brackets. */
export function showClocks(clocks: readonly TraceClock[], current: number): string {
  return clocks.map((c, i) => (i === current ? `[${c.name}]` : c.name)).join(' ') + '\n';
}
