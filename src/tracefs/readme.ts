/** The README file: a mini-HOWTO whose feature lines tools and selftests grep for. */
import type { Series } from '../kernel/series.js';

export function readmeText(series: Series): string {
  void series;
  return 'tracing mini-HOWTO:\n';
}
