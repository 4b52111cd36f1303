/**
 * The committed expectations of a selftests series: per test, the verdict the
 * emulator must reach at least, the real kernel's verdict, and why they differ.
 * A run fails on any test doing worse than expected; tests doing better are
 * raised (expectations only ever move up).
 */
import { isVerdict, type ResultRow, type Verdict } from './results.js';

/**
 * How good a verdict is. PASS and XFAIL both mean "ran and behaved as the
 * test intends" (ftracetest counts both as success); UNSUPPORTED and
 * UNRESOLVED both mean "did not really run" (a feature or a prerequisite is
 * missing) and a test moves between them as the emulator grows; UNTESTED is
 * never produced by today's tests; FAIL and UNDEFINED are failures; a test
 * that produced no verdict at all (the run broke off) is worst.
 */
export const RANK: Record<Verdict | 'MISSING', number> = {
  PASS: 4,
  XFAIL: 4,
  UNSUPPORTED: 2,
  UNRESOLVED: 2,
  UNTESTED: 2,
  FAIL: 1,
  UNDEFINED: 1,
  MISSING: 0,
};

export interface Expectation {
  test: string;
  expected: Verdict;
  /** The real kernel's verdict (reference results of the series). */
  kernel?: Verdict;
  /** Why `expected` differs from `kernel` (required when it does). */
  reason: string;
}

export interface ExpectationsFile {
  /** Comment lines at the top (kept when the file is rewritten). */
  header: string[];
  entries: Expectation[];
}

export const EXPECTATIONS_HEADER = 'test\texpected\tkernel\treason';

export function parseExpectations(text: string): ExpectationsFile {
  const header: string[] = [];
  const entries: Expectation[] = [];
  let seenColumns = false;
  for (const [i, line] of text.split('\n').entries()) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      if (!seenColumns && entries.length === 0) header.push(line);
      continue;
    }
    if (line === EXPECTATIONS_HEADER) {
      seenColumns = true;
      continue;
    }
    const [test, expected, kernel = '', reason = ''] = line.split('\t');
    if (!test || !isVerdict(expected) || (kernel !== '' && !isVerdict(kernel))) {
      throw new Error(`expectations line ${i + 1}: bad row: ${JSON.stringify(line)}`);
    }
    entries.push({ test, expected, kernel: kernel === '' ? undefined : kernel, reason });
  }
  return { header, entries };
}

export function formatExpectations(f: ExpectationsFile): string {
  const rows = f.entries.map((e) => [e.test, e.expected, e.kernel ?? '', e.reason].join('\t'));
  return [...f.header, EXPECTATIONS_HEADER, ...rows].join('\n') + '\n';
}

export type Outcome = 'same' | 'better' | 'worse' | 'sideways' | 'unexpected' | 'missing';

export interface Comparison {
  test: string;
  expected?: Verdict;
  kernel?: Verdict;
  actual?: Verdict;
  outcome: Outcome;
}

export interface CompareOptions {
  /** The run covered every test: an expected test without a result is then a regression. */
  complete: boolean;
}

/** Compares a run with the expectations, test by test, in the run's order (then expected tests not run). */
export function compareWithExpectations(rows: ResultRow[], exp: ExpectationsFile, opts: CompareOptions): Comparison[] {
  const byTest = new Map(exp.entries.map((e) => [e.test, e]));
  const seen = new Set<string>();
  const out: Comparison[] = [];
  for (const r of rows) {
    seen.add(r.test);
    const e = byTest.get(r.test);
    if (!e) {
      out.push({ test: r.test, actual: r.result, outcome: 'unexpected' });
      continue;
    }
    const d = RANK[r.result] - RANK[e.expected];
    const outcome: Outcome = r.result === e.expected ? 'same' : d > 0 ? 'better' : d < 0 ? 'worse' : 'sideways';
    out.push({ test: r.test, expected: e.expected, kernel: e.kernel, actual: r.result, outcome });
  }
  if (opts.complete) {
    for (const e of exp.entries) {
      if (!seen.has(e.test)) out.push({ test: e.test, expected: e.expected, kernel: e.kernel, outcome: 'missing' });
    }
  }
  return out;
}

/** Failing outcomes: a test doing worse than expected, or an expected test that gave no verdict. */
export function regressions(cmp: Comparison[]): Comparison[] {
  return cmp.filter((c) => c.outcome === 'worse' || c.outcome === 'missing');
}

/**
 * The expectations raised to what a run reached: only upward moves (and
 * same-rank moves, which say where a test now stands), never down. Tests new
 * to the file are added at their verdict. The reason is dropped once a test
 * reaches the kernel's verdict.
 */
export function raiseExpectations(exp: ExpectationsFile, cmp: Comparison[]): { file: ExpectationsFile; raised: Comparison[] } {
  const entries = exp.entries.map((e) => ({ ...e }));
  const byTest = new Map(entries.map((e) => [e.test, e]));
  const raised: Comparison[] = [];
  for (const c of cmp) {
    if (!c.actual) continue;
    if (c.outcome === 'better' || c.outcome === 'sideways') {
      const e = byTest.get(c.test)!;
      e.expected = c.actual;
      if (e.kernel === c.actual) e.reason = '';
      else if (!e.reason) e.reason = 'differs from the kernel';
      raised.push(c);
    } else if (c.outcome === 'unexpected') {
      const e: Expectation = { test: c.test, expected: c.actual, reason: 'new test: no kernel verdict recorded' };
      entries.push(e);
      byTest.set(c.test, e);
      raised.push(c);
    }
  }
  return { file: { header: exp.header, entries }, raised };
}

/** Expectations whose verdict differs from the kernel's without saying why. */
export function unexplained(exp: ExpectationsFile): Expectation[] {
  return exp.entries.filter((e) => e.kernel !== undefined && e.expected !== e.kernel && !e.reason.trim());
}
