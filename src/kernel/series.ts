/**
 * The kernel series the emulator reproduces (`--kernel`), each described by
 * its profile (profiles/): the list, its default, and a series' profile.
 */
import { LINUX_6_12 } from './profiles/linux_6_12.js';
import { LINUX_7_2 } from './profiles/linux_7_2.js';
import { LINUX_7_3 } from './profiles/linux_7_3.js';
import type { KernelProfile } from './profiles/profile.js';

/** Every profile, the default first. */
const PROFILES = [LINUX_7_2, LINUX_7_3, LINUX_6_12] as const;

export type Series = (typeof PROFILES)[number]['series'];

export const SERIES: readonly Series[] = PROFILES.map((p) => p.series);
export const DEFAULT_SERIES: Series = PROFILES[0].series;

export function isSeries(s: string): s is Series {
  return (SERIES as readonly string[]).includes(s);
}

/** The profile of a series. */
export function profileOf(series: Series): KernelProfile {
  return PROFILES.find((p) => p.series === series)!;
}
