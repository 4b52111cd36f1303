/** The kernel series whose behaviour the emulator reproduces (`--kernel`). */
export type Series = '7.2' | '6.12';

export const SERIES: readonly Series[] = ['7.2', '6.12'];
export const DEFAULT_SERIES: Series = '7.2';

export function isSeries(s: string): s is Series {
  return (SERIES as readonly string[]).includes(s);
}

/** True when `series` is at least `min` (e.g. atLeast(k.series, '7.2')). */
export function atLeast(series: Series, min: Series): boolean {
  const [a, b] = series.split('.').map(Number);
  const [c, d] = min.split('.').map(Number);
  return a > c || (a === c && b >= d);
}
