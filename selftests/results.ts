/**
 * ftracetest's results: its console/log lines (`[N] description\t[PASS]`,
 * `[N] (instance)  description\t[PASS]` for the reruns on an instance), the
 * test file behind each case number, and the results TSV
 * (`test<TAB>result`, paths relative to test.d, reruns suffixed ` (instance)`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The verdicts ftracetest prints (eval_result). */
export const VERDICTS = ['PASS', 'FAIL', 'UNRESOLVED', 'UNTESTED', 'UNSUPPORTED', 'XFAIL', 'UNDEFINED'] as const;
export type Verdict = (typeof VERDICTS)[number];

export function isVerdict(s: string): s is Verdict {
  return (VERDICTS as readonly string[]).includes(s);
}

/** One case as ftracetest printed it. */
export interface CaseLine {
  caseNo: number;
  description: string;
  instance: boolean;
  verdict?: Verdict;
}

export interface ResultRow {
  /** Path relative to test.d, with ` (instance)` for a rerun on an instance. */
  test: string;
  result: Verdict;
}

// prlog's colours, as ftracetest's own strip_esc removes them.
// eslint-disable-next-line no-control-regex
const ESC = /\x1b\[([0-9]{1,2}(;[0-9]{1,2})?)?[mK]/g;

/**
 * Incremental parser of ftracetest's console output. A case is printed as
 * `[N] description` without newline when it starts, then `\t[VERDICT]` and a
 * newline when it ends; anything else is ignored.
 */
export class FtracetestOutputParser {
  readonly cases: CaseLine[] = [];
  private tail = '';

  constructor(
    private readonly events: {
      onStart?(c: CaseLine): void;
      onResult?(c: CaseLine): void;
    } = {},
  ) {}

  /** The case whose verdict has not been printed yet. */
  get running(): CaseLine | undefined {
    const last = this.cases[this.cases.length - 1];
    return last && !last.verdict ? last : undefined;
  }

  push(chunk: string): void {
    const lines = (this.tail + chunk.replace(ESC, '')).split('\n');
    this.tail = lines.pop() ?? '';
    for (const line of lines) this.line(line);
    // A case announces itself before its newline: report it started now.
    const m = /^\[(\d+)\]( \(instance\) )?(.*)$/.exec(this.tail);
    if (m) this.start(Number(m[1]), m[2] !== undefined, m[3]);
  }

  /** End of output: a case left without verdict stays without one. */
  end(): CaseLine[] {
    if (this.tail) this.line(this.tail);
    this.tail = '';
    return this.cases;
  }

  private line(line: string): void {
    const m = /^\[(\d+)\]( \(instance\) )?(.*?)(?:\t\[([A-Z]+)\])?\s*$/.exec(line);
    if (m) {
      const c = this.start(Number(m[1]), m[2] !== undefined, m[3]);
      if (m[4]) this.finish(c, m[4]);
      return;
    }
    // Output that slipped between a case's start and its verdict.
    const v = /\t\[([A-Z]+)\]\s*$/.exec(line);
    const running = this.running;
    if (v && running) this.finish(running, v[1]);
  }

  private start(caseNo: number, instance: boolean, description: string): CaseLine {
    const last = this.cases[this.cases.length - 1];
    if (last && last.caseNo === caseNo && last.instance === instance && !last.verdict) {
      last.description = description.trim();
      return last;
    }
    const c: CaseLine = { caseNo, instance, description: description.trim() };
    this.cases.push(c);
    this.events.onStart?.(c);
    return c;
  }

  private finish(c: CaseLine, verdict: string): void {
    if (c.verdict) return;
    c.verdict = isVerdict(verdict) ? verdict : 'UNDEFINED';
    this.events.onResult?.(c);
  }
}

/** Parses a whole ftracetest.log (or console output) into its cases. */
export function parseFtracetestOutput(text: string): CaseLine[] {
  const p = new FtracetestOutputParser();
  p.push(text);
  return p.end();
}

/**
 * Case number → test file, from the per-case logs ftracetest keeps with -k
 * (`N-name.tc-log.XXXXXX`, first line `execute: PATH` or
 * `execute (instance) : PATH`).
 */
export function caseFilesFromLogs(logDir: string): Map<number, { file: string; instance: boolean }> {
  const out = new Map<number, { file: string; instance: boolean }>();
  let names: string[] = [];
  try {
    names = readdirSync(logDir);
  } catch {
    return out;
  }
  for (const name of names) {
    const m = /^(\d+)-.*-log\.[^.]+$/.exec(name);
    if (!m) continue;
    let first = '';
    try {
      first = readFileSync(join(logDir, name), 'latin1').split('\n', 1)[0];
    } catch {
      continue;
    }
    const e = /^execute( \(instance\) )?: (.*\.tc)$/.exec(first);
    if (e) out.set(Number(m[1]), { file: e[2], instance: e[1] !== undefined });
  }
  return out;
}

/**
 * The cases ftracetest will run for a list of test files (in its order:
 * every file, then those flagged `instance` again), as it numbers them.
 */
export function expectedCases(files: string[], isInstanceTest: (file: string) => boolean): { file: string; instance: boolean }[] {
  return [...files.map((file) => ({ file, instance: false })), ...files.filter(isInstanceTest).map((file) => ({ file, instance: true }))];
}

/** `# flags: … instance …` in a test file's header (test_on_instance in ftracetest). */
export function isInstanceTestText(text: string): boolean {
  return /^#[ \t]*flags:.*instance/m.test(text);
}

/** The results rows for parsed cases, naming each by its file relative to test.d. */
export function resultRows(
  cases: CaseLine[],
  fileOf: (c: CaseLine) => { file: string; instance: boolean } | undefined,
  testDir: string,
): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const c of cases) {
    if (!c.verdict) continue;
    const f = fileOf(c);
    const name = f ? relative(testDir, f.file) : `case-${c.caseNo}`;
    rows.push({ test: c.instance ? `${name} (instance)` : name, result: c.verdict });
  }
  return rows;
}

export function formatResultsTsv(rows: ResultRow[]): string {
  return ['test\tresult', ...rows.map((r) => `${r.test}\t${r.result}`)].join('\n') + '\n';
}

export function parseResultsTsv(text: string): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#') || line === 'test\tresult') continue;
    const [test, result] = line.split('\t');
    if (test && result && isVerdict(result)) rows.push({ test, result });
  }
  return rows;
}
