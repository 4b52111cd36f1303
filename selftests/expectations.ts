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
 * Whether a run's verdict should become the expectation: it reaches the
 * kernel's verdict, or passes where less was expected, or the test is new.
 * Moving from FAIL to UNSUPPORTED where the kernel passes is no progress to
 * lock in (the test would then fail the run once its feature is built).
 */
export function raisable(c: Comparison): boolean {
  if (!c.actual) return false;
  if (c.outcome === 'unexpected') return true;
  if (c.outcome !== 'better' && c.outcome !== 'sideways') return false;
  if (c.kernel === undefined || c.actual === c.kernel) return true;
  return c.outcome === 'better' && RANK[c.actual] === RANK.PASS;
}

/**
 * The expectations raised to what a run reached, where `raisable`: never
 * down. Tests new to the file are added at their verdict. The reason is
 * dropped once a test reaches the kernel's verdict.
 */
export function raiseExpectations(exp: ExpectationsFile, cmp: Comparison[]): { file: ExpectationsFile; raised: Comparison[] } {
  const entries = exp.entries.map((e) => ({ ...e }));
  const byTest = new Map(entries.map((e) => [e.test, e]));
  const raised: Comparison[] = [];
  for (const c of cmp) {
    if (!raisable(c) || !c.actual) continue;
    if (c.outcome === 'unexpected') {
      const e: Expectation = { test: c.test, expected: c.actual, reason: 'new test: no kernel verdict recorded' };
      entries.push(e);
      byTest.set(c.test, e);
    } else {
      const e = byTest.get(c.test)!;
      e.expected = c.actual;
      if (e.kernel === c.actual) e.reason = '';
      else e.reason = `${c.actual} here, ${e.kernel} on the kernel`;
    }
    raised.push(c);
  }
  return { file: { header: exp.header, entries }, raised };
}

/** Expectations whose verdict differs from the kernel's without saying why. */
export function unexplained(exp: ExpectationsFile): Expectation[] {
  return exp.entries.filter((e) => e.kernel !== undefined && e.expected !== e.kernel && !e.reason.trim());
}

const NOT_YET: Record<Verdict | 'MISSING', string> = {
  PASS: '',
  XFAIL: '',
  UNSUPPORTED: 'UNSUPPORTED here so far: the emulator lacks what the test requires',
  UNRESOLVED: 'UNRESOLVED here so far',
  UNTESTED: 'UNTESTED here so far',
  FAIL: 'FAILs here so far',
  UNDEFINED: 'UNDEFINED here so far',
  MISSING: 'no result here yet',
};

/**
 * The first expectations of a series, from the real kernel's results and a
 * run of the emulator: a test keeps its verdict here where it passes or
 * matches the kernel's; everything else is expected to FAIL (the floor),
 * with the reason, until a run raises it.
 */
export function initialExpectations(kernel: ResultRow[], ours: ResultRow[], header: string[]): ExpectationsFile {
  const here = new Map(ours.map((r) => [r.test, r.result]));
  const entries: Expectation[] = kernel.map(({ test, result: k }) => {
    const o = here.get(test);
    if (o !== undefined && (o === k || RANK[o] === RANK.PASS)) {
      return { test, expected: o, kernel: k, reason: o === k ? '' : `${o} here, ${k} on the kernel` };
    }
    return { test, expected: 'FAIL', kernel: k, reason: NOT_YET[o ?? 'MISSING'] };
  });
  const known = new Set(kernel.map((r) => r.test));
  for (const r of ours) {
    if (!known.has(r.test)) entries.push({ test: r.test, expected: r.result, reason: 'not in the kernel results' });
  }
  return { header, entries };
}

/**
 * What `--check` (CI) runs of a series: the tests and directories (relative
 * to test.d) its header's `# check:` lines name, or every test when there
 * are none. A series whose full run CI cannot afford names a representative
 * subset there.
 */
export function checkSubset(exp: ExpectationsFile | undefined): string[] | undefined {
  const words = (exp?.header ?? []).flatMap((h) => /^# check:(.*)$/.exec(h)?.[1].split(/\s+/).filter(Boolean) ?? []);
  return words.length ? words : undefined;
}

/** The linux-source version an expectations file was made for (its header names it). */
export function expectationsVersion(exp: ExpectationsFile | undefined): string | undefined {
  for (const h of exp?.header ?? []) {
    const m = /\(linux-source-\S+ (\S+)\)/.exec(h);
    if (m) return m[1];
  }
  return undefined;
}
