import { describe, expect, it } from 'vitest';
import { MatchType, ftraceMatch, parseFilterRegex } from '../../src/ftrace/glob.js';
import { globMatch } from '../../src/kernel/glob_match.js';

describe('filter_parse_regex() classification', () => {
  it.each([
    ['schedule', MatchType.Full, 'schedule', false],
    ['sched*', MatchType.FrontOnly, 'sched', false],
    ['*sched', MatchType.EndOnly, 'sched', false],
    ['*sched*', MatchType.MiddleOnly, 'sched', false],
    ['*', MatchType.EndOnly, '', false],
    ['**', MatchType.MiddleOnly, '', false],
    ['sch*ule', MatchType.Glob, 'sch*ule', false],
    ['*pin*lock', MatchType.Glob, '*pin*lock', false],
    ['[Ss]y[Ss]_*', MatchType.Glob, '[Ss]y[Ss]_*', false],
    ['sch?dule', MatchType.Glob, 'sch?dule', false],
    ['a\\*b', MatchType.Glob, 'a\\*b', false],
    ['!vfs_*', MatchType.FrontOnly, 'vfs_', true],
    ['12', MatchType.Index, '12', false],
    ['!3', MatchType.Index, '3', true],
  ] as const)('%s', (word, type, search, not) => {
    expect(parseFilterRegex(word)).toEqual({ type, search, not });
  });
});

describe('lib/glob.c semantics', () => {
  it.each([
    ['sch*ule', 'schedule', true],
    ['sch*ule', 'schedulex', false],
    ['*pin*lock', '_raw_spin_lock', true],
    ['*pin*lock', '_raw_spin_unlock_irq', false],
    ['[Ss]y[Ss]_*', 'SyS_read', true],
    ['[Ss]y[Ss]_*', 'sys_read', true],
    ['[Ss]y[Ss]_*', 'xsys_read', false],
    ['[!a-c]x', 'dx', true],
    ['[!a-c]x', 'bx', false],
    ['[a-]x', '-x', true],
    ['[]]x', ']x', true],
    ['[x', '[x', true],
    ['?', '', false],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'axb', false],
    ['*', '', true],
    ['a*b*c', 'abxbc', true],
    ['a*b*c', 'abxbx', false],
  ] as const)('%s ~ %s = %s', (pat, str, want) => {
    expect(globMatch(pat, str)).toBe(want);
  });

  it('the cheap match types', () => {
    expect(ftraceMatch('vfs_read', parseFilterRegex('vfs_*'))).toBe(true);
    expect(ftraceMatch('do_vfs_read', parseFilterRegex('*_read'))).toBe(true);
    expect(ftraceMatch('x_read_y', parseFilterRegex('*read*'))).toBe(true);
    expect(ftraceMatch('anything', parseFilterRegex('*'))).toBe(true);
    expect(ftraceMatch('vfs_read', parseFilterRegex('vfs_rea'))).toBe(false);
  });
});
