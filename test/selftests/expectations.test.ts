import { describe, expect, it } from 'vitest';
import {
  checkSubset,
  compareWithExpectations,
  expectationsVersion,
  formatExpectations,
  initialExpectations,
  parseExpectations,
  raiseExpectations,
  regressions,
  unexplained,
} from '../../selftests/expectations.js';
import type { ResultRow } from '../../selftests/results.js';

const FILE = [
  '# expectations for the 7.2 selftests',
  'test\texpected\tkernel\treason',
  'a.tc\tPASS\tPASS\t',
  'b.tc\tFAIL\tPASS\tnot built yet',
  'c.tc\tUNSUPPORTED\tUNSUPPORTED\t',
  'd.tc\tUNRESOLVED\tUNRESOLVED\t',
  'e.tc\tXFAIL\tXFAIL\t',
  'a.tc (instance)\tPASS\tPASS\t',
  '',
].join('\n');

const rows = (...r: [string, ResultRow['result']][]): ResultRow[] => r.map(([test, result]) => ({ test, result }));

describe('expectations file', () => {
  it('round-trips, keeping the header comments', () => {
    const f = parseExpectations(FILE);
    expect(f.header).toEqual(['# expectations for the 7.2 selftests']);
    expect(f.entries[1]).toEqual({ test: 'b.tc', expected: 'FAIL', kernel: 'PASS', reason: 'not built yet' });
    expect(formatExpectations(f)).toBe(FILE);
  });

  it('names the selftests version it was made with', () => {
    expect(expectationsVersion(parseExpectations('# Expected verdicts of the 6.12 ftrace selftests (linux-source-6.12 6.12.117-1~deb12u1) on the emulator.\n'))).toBe(
      '6.12.117-1~deb12u1',
    );
    expect(expectationsVersion(parseExpectations(FILE))).toBeUndefined();
  });

  it('names the subset CI runs in its `# check:` lines, else none (all)', () => {
    const f = parseExpectations('# a series\n# check: 00basic dynevent/btf_typecast_accepted.tc\n# check:  filter/event-filter-incomplete.tc\n' + FILE);
    expect(checkSubset(f)).toEqual(['00basic', 'dynevent/btf_typecast_accepted.tc', 'filter/event-filter-incomplete.tc']);
    expect(checkSubset(parseExpectations(FILE))).toBeUndefined();
    expect(checkSubset(undefined)).toBeUndefined();
  });

  it('rejects an unknown verdict', () => {
    expect(() => parseExpectations('test\texpected\tkernel\treason\nx.tc\tGREAT\tPASS\t\n')).toThrow(/line 2/);
  });

  it('lists differences from the kernel that give no reason', () => {
    const f = parseExpectations('x.tc\tFAIL\tPASS\t\ny.tc\tFAIL\tPASS\tbecause\n');
    expect(unexplained(f).map((e) => e.test)).toEqual(['x.tc']);
  });
});

describe('comparison with the expectations', () => {
  const exp = parseExpectations(FILE);

  it('fails a test doing worse than expected, never one doing better', () => {
    const cmp = compareWithExpectations(
      rows(['a.tc', 'FAIL'], ['b.tc', 'PASS'], ['c.tc', 'FAIL'], ['d.tc', 'UNSUPPORTED'], ['e.tc', 'PASS'], ['a.tc (instance)', 'PASS']),
      exp,
      { complete: true },
    );
    expect(cmp.map((c) => `${c.test}:${c.outcome}`)).toEqual([
      'a.tc:worse', // PASS expected
      'b.tc:better', // FAIL expected
      'c.tc:worse', // UNSUPPORTED expected, now FAIL
      'd.tc:sideways', // UNRESOLVED and UNSUPPORTED rank the same
      'e.tc:sideways', // XFAIL and PASS rank the same
      'a.tc (instance):same',
    ]);
    expect(regressions(cmp).map((c) => c.test)).toEqual(['a.tc', 'c.tc']);
  });

  it('ranks PASS = XFAIL > UNSUPPORTED = UNRESOLVED > FAIL', () => {
    const one = (expected: string, actual: ResultRow['result']) =>
      compareWithExpectations(rows(['t.tc', actual]), parseExpectations(`t.tc\t${expected}\t\t\n`), { complete: false })[0].outcome;
    expect(one('UNRESOLVED', 'FAIL')).toBe('worse');
    expect(one('UNSUPPORTED', 'UNRESOLVED')).toBe('sideways');
    expect(one('FAIL', 'UNSUPPORTED')).toBe('better');
    expect(one('XFAIL', 'UNRESOLVED')).toBe('worse');
    expect(one('FAIL', 'UNDEFINED')).toBe('sideways');
    expect(one('PASS', 'XFAIL')).toBe('sideways');
  });

  it('counts an expected test without result as a regression only in a complete run', () => {
    const r = rows(['a.tc', 'PASS'], ['new.tc', 'PASS']);
    const partial = compareWithExpectations(r, exp, { complete: false });
    expect(partial.map((c) => c.outcome)).toEqual(['same', 'unexpected']);
    expect(regressions(partial)).toEqual([]);
    const full = compareWithExpectations(r, exp, { complete: true });
    expect(regressions(full).map((c) => c.test)).toEqual(['b.tc', 'c.tc', 'd.tc', 'e.tc', 'a.tc (instance)']);
  });

  it('raises expectations upward only, where the kernel verdict is reached or the test passes', () => {
    const exp2 = parseExpectations(
      FILE + 'f.tc\tFAIL\tPASS\tnot built yet\ng.tc\tFAIL\tUNSUPPORTED\tnot built yet\nh.tc\tFAIL\tXFAIL\tnot built yet\n',
    );
    const cmp = compareWithExpectations(
      rows(['a.tc', 'FAIL'], ['b.tc', 'PASS'], ['d.tc', 'UNSUPPORTED'], ['f.tc', 'UNSUPPORTED'], ['g.tc', 'UNSUPPORTED'], ['h.tc', 'PASS'], ['z.tc', 'FAIL']),
      exp2,
      { complete: false },
    );
    const { file, raised } = raiseExpectations(exp2, cmp);
    expect(raised.map((c) => c.test)).toEqual(['b.tc', 'g.tc', 'h.tc', 'z.tc']);
    const by = new Map(file.entries.map((e) => [e.test, e]));
    expect(by.get('a.tc')!.expected).toBe('PASS'); // never lowered
    expect(by.get('b.tc')).toMatchObject({ expected: 'PASS', reason: '' });
    expect(by.get('d.tc')).toMatchObject({ expected: 'UNRESOLVED' }); // sideways, away from the kernel: kept
    expect(by.get('f.tc')).toMatchObject({ expected: 'FAIL' }); // UNSUPPORTED where the kernel passes: no progress to lock in
    expect(by.get('g.tc')).toMatchObject({ expected: 'UNSUPPORTED', reason: '' });
    expect(by.get('h.tc')).toMatchObject({ expected: 'PASS', reason: 'PASS here, XFAIL on the kernel' });
    expect(by.get('z.tc')).toMatchObject({ expected: 'FAIL' });
    expect(by.get('z.tc')!.kernel).toBeUndefined();
    expect(exp2.entries[1].expected).toBe('FAIL'); // the input is left alone
  });
});

describe('first expectations of a series', () => {
  it('keeps what passes or matches the kernel, FAIL with a reason elsewhere', () => {
    const kernel = rows(['a.tc', 'PASS'], ['b.tc', 'PASS'], ['c.tc', 'UNSUPPORTED'], ['d.tc', 'UNRESOLVED'], ['e.tc', 'PASS']);
    const ours = rows(['a.tc', 'PASS'], ['b.tc', 'UNSUPPORTED'], ['c.tc', 'UNSUPPORTED'], ['d.tc', 'FAIL']);
    const f = initialExpectations(kernel, ours, ['# h']);
    expect(f.entries.map((e) => [e.test, e.expected, e.kernel])).toEqual([
      ['a.tc', 'PASS', 'PASS'],
      ['b.tc', 'FAIL', 'PASS'],
      ['c.tc', 'UNSUPPORTED', 'UNSUPPORTED'],
      ['d.tc', 'FAIL', 'UNRESOLVED'],
      ['e.tc', 'FAIL', 'PASS'],
    ]);
    expect(unexplained(f)).toEqual([]);
    expect(f.entries[4].reason).toBe('no result here yet');
  });
});
