/** Text reports of a selftests run: counts per verdict and per directory, and test-by-test tables. */
import { dirname } from 'node:path';
import { type Comparison, RANK } from './expectations.js';
import { VERDICTS, type Verdict } from './results.js';

function pad(s: string | number, n: number, right = false): string {
  const t = String(s);
  return right ? t.padStart(n) : t.padEnd(n);
}

function directoryOf(test: string): string {
  return dirname(test.replace(/ \(instance\)$/, ''));
}

const ok = (v?: Verdict) => v !== undefined && RANK[v] === RANK.PASS;

/** Counts per verdict, ours next to the real kernel's, over the tests of the run. */
export function verdictCounts(cmp: Comparison[]): string {
  const lines = [`${pad('verdict', 12)}${pad('ours', 6, true)}${pad('kernel', 8, true)}`];
  for (const v of VERDICTS) {
    const ours = cmp.filter((c) => c.actual === v).length;
    const kern = cmp.filter((c) => c.actual && c.kernel === v).length;
    if (ours || kern) lines.push(`${pad(v, 12)}${pad(ours, 6, true)}${pad(kern, 8, true)}`);
  }
  const missing = cmp.filter((c) => !c.actual).length;
  if (missing) lines.push(`${pad('(no result)', 12)}${pad(missing, 6, true)}`);
  return lines.join('\n');
}

/** Per directory: how many cases ran, how many succeeded here and on the real kernel. */
export function directoryCounts(cmp: Comparison[]): string {
  const dirs = new Map<string, { n: number; ours: number; kern: number; worse: number }>();
  for (const c of cmp) {
    const d = directoryOf(c.test);
    const s = dirs.get(d) ?? { n: 0, ours: 0, kern: 0, worse: 0 };
    s.n++;
    if (ok(c.actual)) s.ours++;
    if (ok(c.kernel)) s.kern++;
    if (c.outcome === 'worse' || c.outcome === 'missing') s.worse++;
    dirs.set(d, s);
  }
  const w = Math.max(10, ...[...dirs.keys()].map((d) => d.length + 2));
  const lines = [`${pad('directory', w)}${pad('cases', 6, true)}${pad('ok', 6, true)}${pad('kernel', 8, true)}${pad('worse', 7, true)}`];
  for (const [d, s] of [...dirs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    lines.push(`${pad(d, w)}${pad(s.n, 6, true)}${pad(s.ours, 6, true)}${pad(s.kern, 8, true)}${pad(s.worse || '', 7, true)}`);
  }
  return lines.join('\n');
}

/** Test by test: ours, expected and the kernel's verdict (`only` filters the rows). */
export function comparisonTable(cmp: Comparison[], only?: (c: Comparison) => boolean): string {
  const rows = only ? cmp.filter(only) : cmp;
  const w = Math.max(10, ...rows.map((c) => c.test.length + 2));
  const lines = [`${pad('test', w)}${pad('ours', 12)}${pad('expected', 12)}${pad('kernel', 12)}outcome`];
  for (const c of rows) {
    lines.push(`${pad(c.test, w)}${pad(c.actual ?? '-', 12)}${pad(c.expected ?? '-', 12)}${pad(c.kernel ?? '-', 12)}${c.outcome}`);
  }
  return lines.join('\n');
}
