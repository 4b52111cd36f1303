import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  caseFilesFromLogs,
  expectedCases,
  formatResultsTsv,
  FtracetestOutputParser,
  isInstanceTestText,
  parseFtracetestOutput,
  parseResultsTsv,
  resultRows,
} from '../../selftests/results.js';

// As ftracetest prints it (prlog: "[N]$INSTANCE$CASENAME" then "\t[VERDICT]").
const LOG = [
  'Fri Nov 21 05:53:00 UTC 2025',
  '=== Ftrace unit tests ===',
  '[1] Basic trace file check\t[PASS]',
  '[2] Test tracefs GID mount option\t[FAIL]',
  '[3] Test ftrace direct functions against tracers\t[UNRESOLVED]',
  '[4] (instance)  Basic trace file check\t[PASS]',
  '[5] (instance)  event trigger - test multiple actions on hist trigger\t[XFAIL]',
  '',
  '# of passed:  2',
  '# of failed:  1',
].join('\n');

describe('ftracetest output', () => {
  it('parses cases, verdicts and instance reruns', () => {
    const cases = parseFtracetestOutput(LOG);
    expect(cases.map((c) => [c.caseNo, c.instance, c.description, c.verdict])).toEqual([
      [1, false, 'Basic trace file check', 'PASS'],
      [2, false, 'Test tracefs GID mount option', 'FAIL'],
      [3, false, 'Test ftrace direct functions against tracers', 'UNRESOLVED'],
      [4, true, 'Basic trace file check', 'PASS'],
      [5, true, 'event trigger - test multiple actions on hist trigger', 'XFAIL'],
    ]);
  });

  it('reports a case as running before its verdict arrives, across chunks', () => {
    const started: number[] = [];
    const done: string[] = [];
    const p = new FtracetestOutputParser({ onStart: (c) => started.push(c.caseNo), onResult: (c) => done.push(`${c.caseNo}:${c.verdict}`) });
    p.push('=== Ftrace unit tests ===\n[1] Basic t');
    expect(started).toEqual([1]);
    expect(p.running?.caseNo).toBe(1);
    p.push('race file check');
    p.push('\t[PA');
    expect(done).toEqual([]);
    p.push('SS]\n[2] (instance)  Second');
    expect(done).toEqual(['1:PASS']);
    expect(p.running).toMatchObject({ caseNo: 2, instance: true });
    p.push('\t[\x1b[31mFAIL\x1b[0m]\n');
    expect(done).toEqual(['1:PASS', '2:FAIL']);
    expect(p.end().map((c) => c.description)).toEqual(['Basic trace file check', 'Second']);
  });

  it('takes a verdict after output that slipped in before it', () => {
    const cases = parseFtracetestOutput('[7] Sneaky\nsomething from a background job\n\t[PASS]\n');
    expect(cases).toEqual([{ caseNo: 7, instance: false, description: 'Sneaky', verdict: 'PASS' }]);
  });

  it('leaves a case cut short without verdict', () => {
    const cases = parseFtracetestOutput('[1] A\t[PASS]\n[2] B');
    expect(cases[1]).toEqual({ caseNo: 2, instance: false, description: 'B' });
  });
});

describe('case numbers to test files', () => {
  it('reads the execute line of each kept log', () => {
    const d = mkdtempSync(join(tmpdir(), 'logs-'));
    writeFileSync(join(d, '1-basic1.tc-log.AbC123'), 'execute: /s/test.d/00basic/basic1.tc\n+ echo\n');
    writeFileSync(join(d, '4-basic1.tc-log.xYz789'), 'execute (instance) : /s/test.d/00basic/basic1.tc\n');
    writeFileSync(join(d, 'ftracetest.log'), LOG);
    const m = caseFilesFromLogs(d);
    expect(m.get(1)).toEqual({ file: '/s/test.d/00basic/basic1.tc', instance: false });
    expect(m.get(4)).toEqual({ file: '/s/test.d/00basic/basic1.tc', instance: true });
    expect(m.size).toBe(2);
  });

  it('recomputes the case order: every test, then the instance reruns', () => {
    const files = ['/t/a.tc', '/t/b.tc', '/t/c.tc'];
    expect(expectedCases(files, (f) => f !== '/t/b.tc')).toEqual([
      { file: '/t/a.tc', instance: false },
      { file: '/t/b.tc', instance: false },
      { file: '/t/c.tc', instance: false },
      { file: '/t/a.tc', instance: true },
      { file: '/t/c.tc', instance: true },
    ]);
    expect(isInstanceTestText('#!/bin/sh\n# description: x\n# flags: instance\n')).toBe(true);
    expect(isInstanceTestText('#!/bin/sh\n# description: x\n')).toBe(false);
  });
});

describe('results TSV', () => {
  it('names rows relative to test.d, reruns suffixed, in run order', () => {
    const cases = parseFtracetestOutput(LOG).slice(0, 4);
    const files = ['00basic/basic1.tc', '00basic/mount_options.tc', 'direct/ftrace-direct.tc', '00basic/basic1.tc'];
    const rows = resultRows(cases, (c) => ({ file: `/s/test.d/${files[c.caseNo - 1]}`, instance: c.instance }), '/s/test.d');
    const tsv = formatResultsTsv(rows);
    expect(tsv).toBe(
      'test\tresult\n00basic/basic1.tc\tPASS\n00basic/mount_options.tc\tFAIL\ndirect/ftrace-direct.tc\tUNRESOLVED\n00basic/basic1.tc (instance)\tPASS\n',
    );
    expect(parseResultsTsv(tsv)).toEqual(rows);
  });
});
