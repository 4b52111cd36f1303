/**
 * One run of the kernel's ftrace selftests against the emulator: a fresh
 * daemon mount, the unmodified `ftracetest` run as root through `exec` (the
 * emulator at the standard paths), a watchdog per test, then results.tsv,
 * ftracetest's logs and a comparison with the committed expectations.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runExec } from '../src/exec/exec.js';
import { controlRequest } from '../src/daemon/control.js';
import { isAlive, readState, statePaths } from '../src/daemon/state.js';
import { expectSystemError } from '../src/host/system_error.js';
import {
  compareWithExpectations,
  type Comparison,
  expectationsVersion,
  type ExpectationsFile,
  formatExpectations,
  initialExpectations,
  parseExpectations,
  raisable,
  raiseExpectations,
  regressions,
  unexplained,
} from './expectations.js';
import { fetchSelftests } from './fetch.js';
import {
  type CaseLine,
  caseFilesFromLogs,
  expectedCases,
  formatResultsTsv,
  FtracetestOutputParser,
  parseResultsTsv,
  isInstanceTestText,
  resultRows,
  type ResultRow,
} from './results.js';
import { benchReport, costBetween, type Load, loadOf, type TestCost } from './bench.js';
import { comparisonTable, directoryCounts, verdictCounts } from './summary.js';

/** The repository (dist/selftests/run.js → ../..). */
export const REPO = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(REPO, 'bin', 'tracefs-emu.js');

export function expectationsPath(series: string): string {
  return join(REPO, 'selftests', `expectations-${series}.tsv`);
}

export interface RunOptions {
  /** Selftests series (default 7.2). */
  series: string;
  /** Kernel series the emulator behaves as (default: the selftests'). */
  kernel?: string;
  /** Use this selftests directory instead of the fetched one. */
  selftests?: string;
  /** Pin the linux-source version of the fetched selftests (default: the expectations'). */
  selftestsVersion?: string;
  /** Choose the newest linux-source again. */
  refresh?: boolean;
  /** Tests or directories (relative to test.d, the selftests dir, or the cwd); none = all. */
  tests: string[];
  /** Where results.tsv and the logs go (default selftests/results/<series>). */
  results?: string;
  /** Run against this existing mount instead of a fresh daemon. */
  mount?: string;
  /** Seconds one test may take before its processes are killed (it then FAILs). */
  testTimeout: number;
  /** Print every test: ours next to the kernel's verdict. */
  compareKernel?: boolean;
  /** Raise the committed expectations to what this run reached (upward only). */
  raise?: boolean;
  /** Write the first expectations of the series from this run and the kernel's results.tsv (refuses to overwrite). */
  initExpectations?: string;
  log?: (msg: string) => void;
  /** ftracetest's console output, as it comes, and the run's summary (default: our stdout). */
  echo?: (chunk: string) => void;
  /** Take the daemon's load before and after each test (bench.ts): bench.tsv and a report in the results. */
  bench?: boolean;
  /** Aborted (a signal to the command): ftracetest and every process of its tests are killed, and the run ends. */
  abort?: AbortSignal;
  /**
   * The host CPU the run's emulator and tests keep to (taskset), none:
   * anywhere. A FUSE round trip between two CPUs of a virtual machine costs
   * many times one within a CPU, and a test is mostly round trips; the
   * tests are still shown (sched_getaffinity) every CPU.
   */
  cpu?: number;
}

export interface RunResult {
  series: string;
  rows: ResultRow[];
  comparisons?: Comparison[];
  regressions: Comparison[];
  timedOut: string[];
  /** The run broke off (ftracetest killed): tests after that have no result. */
  broken: boolean;
  /** Expectations that differ from the kernel's verdict without a reason. */
  unexplained: string[];
  seconds: number;
  resultsDir: string;
  /** With `bench`: where each test's time went, and the report. */
  bench?: { tests: TestCost[]; report: string };
}

/** Every *.tc under a directory, in ftracetest's order (`find | sort`, byte order as under LC_ALL=C). */
export function listTestFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.tc')) out.push(p);
    }
  };
  walk(dir);
  return out.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/** A test or directory named by the user, as an absolute path in the selftests. */
export function resolveTestArg(selftests: string, arg: string): string {
  const candidates = isAbsolute(arg) ? [arg] : [join(selftests, 'test.d', arg), join(selftests, arg), resolve(arg)];
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`selftests: no test or directory ${arg} (looked in ${candidates.join(', ')})`);
  return found;
}

/** The test files ftracetest will run for its arguments (in its order). */
export function testFilesFor(selftests: string, args: string[]): string[] {
  if (args.length === 0) return listTestFiles(join(selftests, 'test.d'));
  return args.flatMap((a) => (statSync(a).isDirectory() ? listTestFiles(a) : [a]));
}

/** Every process below `pid` (from /proc), children before grandchildren. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length) {
    const p = queue.shift()!;
    out.push(p);
    queue.push(...(children.get(p) ?? []));
  }
  return out;
}

function runCli(args: string[], log: (m: string) => void, cpu?: number): Promise<string> {
  return new Promise((ok, ko) => {
    const argv = [process.execPath, CLI, ...args];
    const cmd = cpu === undefined ? argv : ['taskset', '-c', String(cpu), ...argv];
    const p = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', ko);
    p.on('close', (code) => {
      if (code === 0) ok(out);
      else {
        log(err.trim());
        ko(new Error(`tracefs-emu ${args.join(' ')}: exit ${code}: ${err.trim().split('\n').pop() ?? ''}`));
      }
    });
  });
}

/** Kernel features (KernelOptions.features) the selftests' emulator is built with. */
export const SELFTEST_FEATURES = ['function-profiler', 'graph-retval', 'hypervisor-tracing', 'latency-tracers'];

/**
 * Modules loaded before the run, as a tester does (modules-load.d):
 * remotes/*.tc require remotes/test before their own modprobe would load it.
 * A series without one (6.12 has no remote_test) goes without.
 */
export const SELFTEST_MODULES = ['remote_test'];

async function preloadModules(dir: string): Promise<void> {
  const st = readState(dir);
  if (!st) return;
  for (const name of SELFTEST_MODULES) {
    try {
      await controlRequest(st.socket, 'module', { op: 'load', name });
    } catch (e) {
      if ((e as { errno?: string }).errno !== 'ENOENT') throw e;
    }
  }
}

/** A fresh emulator daemon for the run (on host CPU `cpu`, if given), and how to stop it (its log then moves to `keepLog`). */
export async function startEmulator(kernel: string, log: (m: string) => void, keepLog?: string, cpu?: number): Promise<{ dir: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'emu-selftests-'));
  // The kernel options Debian builds without, on: ftrace/fgraph-profiler, func_profile_stat,
  // func_profiler, fgraph-retval and remotes/hypervisor/* then run (they are UNSUPPORTED on Debian's kernels).
  // Its processes are ftracetest's alone, as in the VM a real kernel runs it in: the machine's others (another
  // series' run beside it) fork and exit in no trace (trigger-multihist.tc reads one histogram twice).
  await runCli(['mount', dir, '--daemon', '--kernel', kernel, '--features', SELFTEST_FEATURES.join(','), '--processes', 'exec'], log, cpu);
  // A run that ends without stop() (a second signal exits at once) still takes its daemon and mount down with it.
  const daemon = readState(dir)?.pid;
  log(`a ${kernel} emulator at ${dir} (daemon pid ${daemon ?? '?'})`);
  const orphaned = () => {
    if (daemon === undefined || !isAlive(daemon)) return;
    try {
      process.kill(daemon, 'SIGTERM');
    } catch (e) {
      expectSystemError(e); // gone meanwhile
    }
  };
  process.on('exit', orphaned);
  await preloadModules(dir);
  return {
    dir,
    async stop() {
      process.off('exit', orphaned);
      try {
        await runCli(['unmount', dir], log);
      } finally {
        const daemonLog = statePaths(dir).log;
        if (keepLog && existsSync(daemonLog)) {
          copyFileSync(daemonLog, keepLog);
          rmSync(daemonLog, { force: true });
        }
        try {
          rmdirSync(dir); // only once unmounted
        } catch {
          log(`${dir} is still busy: left in place`);
        }
      }
    },
  };
}

/**
 * The selftests to run: the pinned version, else the one the expectations
 * were made for (so that a run compares like with like), else the newest.
 */
/** The selftests directory a run of `o.series` uses: the expectations' linux-source version when apt has it, else the newest. */
export async function fetchForExpectations(o: Pick<RunOptions, 'series' | 'selftestsVersion' | 'refresh'>, log: (m: string) => void): Promise<string> {
  const wanted = o.selftestsVersion ?? expectationsVersion(loadExpectations(o.series));
  if (wanted && !o.selftestsVersion && !o.refresh) {
    try {
      return (await fetchSelftests({ series: o.series, version: wanted, log })).dir;
    } catch (e) {
      log(`the expectations were made with linux-source-${o.series} ${wanted}, which apt no longer has (${(e as Error).message}): using the newest`);
    }
  }
  const f = await fetchSelftests({ series: o.series, version: o.selftestsVersion, refresh: o.refresh, log });
  if (wanted && f.version !== wanted) log(`running linux-source-${o.series} ${f.version}; the expectations were made with ${wanted}`);
  return f.dir;
}

export function loadExpectations(series: string): ExpectationsFile | undefined {
  const p = expectationsPath(series);
  return existsSync(p) ? parseExpectations(readFileSync(p, 'utf8')) : undefined;
}

export async function runSelftests(o: RunOptions): Promise<RunResult> {
  const log = o.log ?? ((m: string) => process.stderr.write(`selftests: ${m}\n`));
  const echo = o.echo ?? ((c: string) => process.stdout.write(c));
  const kernel = o.kernel ?? o.series;
  const t0 = Date.now();

  const selftests = o.selftests ? resolve(o.selftests) : await fetchForExpectations(o, log);
  if (!existsSync(join(selftests, 'ftracetest'))) throw new Error(`selftests: no ftracetest in ${selftests}`);
  const testDir = join(selftests, 'test.d');
  const args = o.tests.map((t) => resolveTestArg(selftests, t));
  const files = testFilesFor(selftests, args);
  const planned = expectedCases(files, (f) => isInstanceTestText(readFileSync(f, 'latin1')));

  const resultsDir = resolve(o.results ?? join(REPO, 'selftests', 'results', kernel === o.series ? o.series : `${o.series}-on-${kernel}`));
  rmSync(resultsDir, { recursive: true, force: true });
  const logDir = join(resultsDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  log(`${planned.length} cases from ${selftests} against a ${kernel} emulator; results in ${resultsDir}`);

  const emu = o.mount ? { dir: resolve(o.mount), stop: async () => {} } : await startEmulator(kernel, log, join(resultsDir, 'daemon.log'), o.cpu);
  let benchDone: Promise<[Load | undefined, Load | undefined, (TestCost | undefined)[]]> | undefined;
  const transcript: string[] = [];
  const stderr: string[] = [];
  const timings: { c: CaseLine; ms: number }[] = [];
  const timedOut: string[] = [];
  let broken = false;
  let cases: CaseLine[];
  // With `bench`: the daemon's load at the start of the run, of each test, and after each verdict.
  const socket = o.bench ? readState(emu.dir)?.socket : undefined;
  const load = (): Promise<Load | undefined> => (socket ? loadOf(socket).catch(() => undefined) : Promise.resolve(undefined));
  const firstLoad = load();
  let testLoad = firstLoad;
  const costs: Promise<TestCost | undefined>[] = [];
  try {
    let child = 0;
    let startedAt = Date.now();
    let killedAt = 0;
    let lastOutput = Date.now();
    const nameOf = (c: CaseLine) => caseName(testDir, planned[c.caseNo - 1], c);
    const parser = new FtracetestOutputParser({
      onStart: () => {
        startedAt = Date.now();
        killedAt = 0;
        if (socket) testLoad = load();
      },
      onResult: (c) => {
        const ms = Date.now() - startedAt;
        timings.push({ c, ms });
        if (socket) {
          const before = testLoad;
          costs.push(Promise.all([before, load()]).then(([a, b]) => (a && b ? costBetween(nameOf(c), ms, a, b) : undefined)));
        }
      },
    });
    // The watchdog: a test running too long has its processes killed (ftracetest then
    // counts it FAIL and goes on); if even that does not end it, or the daemon no longer
    // answers (every later test would hang as well), the run is stopped.
    const stopRun = (why: string) => {
      if (broken) return;
      log(`${why}: stopping ftracetest`);
      broken = true;
      for (const p of [child, ...descendantsOf(child)]) signal(p, 'SIGKILL');
    };
    const watchdog = setInterval(() => {
      const running = parser.running;
      const now = Date.now();
      if (child && !running && !broken && now - lastOutput > (o.testTimeout + 60) * 1000) {
        stopRun(`no output from ftracetest for ${o.testTimeout + 60} s outside any test`);
      }
      if (!child || !running || broken) return;
      if (!killedAt && now - startedAt > o.testTimeout * 1000) {
        const name = nameOf(running);
        log(`case ${running.caseNo} (${name}) ran over ${o.testTimeout} s: killing it`);
        timedOut.push(name);
        killedAt = now;
        for (const p of descendantsOf(child)) signal(p, 'SIGKILL');
        void daemonAnswers(emu.dir).then((ok) => ok || stopRun('the emulator daemon does not answer'));
      } else if (killedAt && now - killedAt > 30_000) {
        stopRun(`case ${running.caseNo} did not end after being killed`);
      }
    }, 1000);
    const onAbort = () => stopRun(`${String(o.abort?.reason ?? 'aborted')}`);
    o.abort?.addEventListener('abort', onAbort, { once: true });
    try {
      const status = await runExec(
        { mount: emu.dir, command: [join(selftests, 'ftracetest'), '-k', '--logdir', logDir, ...args] },
        {
          cwd: selftests,
          stdio: 'pipe',
          env: { ...process.env, LC_ALL: 'C' },
          onSpawn: (pid) => (child = pid),
          cpu: o.mount ? undefined : o.cpu,
          onStdout: (d) => {
            const s = d.toString('latin1');
            lastOutput = Date.now();
            transcript.push(s);
            echo(s);
            parser.push(s);
          },
          onStderr: (d) => stderr.push(d.toString('latin1')),
        },
      );
      if (status !== 0 && status !== 1) log(`ftracetest exited with status ${status}`);
    } finally {
      clearInterval(watchdog);
      o.abort?.removeEventListener('abort', onAbort);
    }
    cases = parser.end();
  } finally {
    benchDone = socket ? Promise.all([firstLoad, load(), Promise.all(costs)]) : undefined;
    await benchDone?.catch(() => undefined);
    await emu.stop().catch((e: Error) => log(`stopping the emulator: ${e.message}`));
  }

  // Name each case by the log ftracetest kept for it, else by its place in the plan.
  const kept = caseFilesFromLogs(logDir);
  const rows = resultRows(cases, (c) => kept.get(c.caseNo) ?? planned[c.caseNo - 1], testDir);
  writeFileSync(join(resultsDir, 'results.tsv'), formatResultsTsv(rows));
  writeFileSync(join(resultsDir, 'console.log'), transcript.join(''));
  writeFileSync(join(resultsDir, 'stderr.log'), stderr.join(''));
  writeFileSync(
    join(resultsDir, 'timings.tsv'),
    ['test\tseconds', ...timings.map(({ c, ms }) => `${caseName(testDir, kept.get(c.caseNo) ?? planned[c.caseNo - 1], c)}\t${(ms / 1000).toFixed(2)}`)].join('\n') + '\n',
  );
  const seconds = (Date.now() - t0) / 1000;

  const result: RunResult = { series: o.series, rows, regressions: [], timedOut, broken, unexplained: [], seconds, resultsDir };
  const benched = await benchDone;
  if (benched) {
    const [first, last, each] = benched;
    const tests = each.filter((t): t is TestCost => t !== undefined);
    if (first && last) {
      const total = costBetween('all', seconds * 1000, first, last);
      const report = benchReport(total, first, last, tests);
      result.bench = { tests, report };
      writeFileSync(join(resultsDir, 'bench.txt'), report + '\n');
      writeFileSync(join(resultsDir, 'bench.json'), JSON.stringify({ total, tests, first, last }, null, 1) + '\n');
    }
  }
  if (o.initExpectations) {
    const path = expectationsPath(o.series);
    if (existsSync(path)) throw new Error(`selftests: ${path} exists; expectations only move up (--raise)`);
    const version = readFileSync(join(selftests, '..', 'version'), 'utf8').trim();
    const header = [
      `# Expected verdicts of the ${o.series} ftrace selftests (${version}) on the emulator (--kernel ${o.series}).`,
      '# expected: the least a run must reach (PASS = XFAIL > UNSUPPORTED = UNRESOLVED > FAIL); only ever raised.',
      "# kernel: the real kernel's verdict (Debian's kernel under QEMU); reason: why expected differs from it.",
    ];
    const file = initialExpectations(parseResultsTsv(readFileSync(o.initExpectations, 'utf8')), rows, header);
    writeFileSync(path, formatExpectations(file));
    log(`wrote ${path} (${file.entries.length} tests)`);
  }
  const exp = kernel === o.series ? loadExpectations(o.series) : undefined;
  if (!exp) {
    log(kernel === o.series ? `no ${expectationsPath(o.series)}: nothing to compare with` : `kernel ${kernel} ≠ selftests ${o.series}: no expectations apply`);
    const counts = verdictCounts(compareWithExpectations(rows, { header: [], entries: [] }, { complete: false }));
    echo(`\n${counts}\n${timedOut.length ? `timed out (killed after ${o.testTimeout} s): ${timedOut.join(', ')}\n` : ''}`);
    return result;
  }
  // A full run must give every expected test a verdict (a run that broke off fails).
  const cmp = compareWithExpectations(rows, exp, { complete: o.tests.length === 0 });
  result.comparisons = cmp;
  result.regressions = regressions(cmp);

  const out: string[] = [];
  out.push('', `== ${o.series} selftests on the emulator: ${rows.length} results in ${seconds.toFixed(0)} s ==`, verdictCounts(cmp), '', directoryCounts(cmp));
  if (o.compareKernel) out.push('', comparisonTable(cmp));
  if (result.regressions.length) {
    out.push('', `WORSE THAN EXPECTED (${result.regressions.length}):`, comparisonTable(result.regressions));
    // CI keeps only what is printed: the end of each such case's log says why.
    const worse = new Set(result.regressions.map((r) => r.test));
    for (const c of cases) {
      const name = caseName(testDir, kept.get(c.caseNo) ?? planned[c.caseNo - 1], c);
      if (worse.has(name)) out.push('', `--- the end of ${name}'s log:`, ...logTail(logDir, c.caseNo, LOG_TAIL_LINES));
    }
  }
  const { file: raisedFile, raised } = raiseExpectations(exp, cmp);
  if (raised.length) {
    const suggested = join(resultsDir, `expectations-${o.series}.tsv`);
    writeFileSync(suggested, formatExpectations(raisedFile));
    if (o.raise) {
      writeFileSync(expectationsPath(o.series), formatExpectations(raisedFile));
      out.push('', `raised ${raised.length} expectations in ${expectationsPath(o.series)}:`, comparisonTable(raised));
    } else {
      out.push(
        '',
        `${raised.length} tests reach more than expected: raise the expectations with`,
        `  npm run selftests -- --series ${o.series} --raise    (or copy ${suggested})`,
        comparisonTable(raised),
      );
    }
  }
  const notRaised = cmp.filter((c) => (c.outcome === 'better' || c.outcome === 'sideways') && !raisable(c)).length;
  if (notRaised) out.push('', `${notRaised} tests moved without reaching the kernel's verdict or passing (not raised; --compare-kernel lists them)`);
  const bad = unexplained(exp);
  result.unexplained = bad.map((e) => e.test);
  if (bad.length) out.push('', `expectations differing from the kernel without a reason: ${bad.map((e) => e.test).join(', ')}`);
  if (timedOut.length) out.push('', `timed out (killed after ${o.testTimeout} s): ${timedOut.join(', ')}`);
  const summary = out.join('\n') + '\n';
  writeFileSync(join(resultsDir, 'summary.txt'), summary);
  echo(summary);
  return result;
}

/** Whether the daemon of a mount still answers its control socket (a hung emulator does not). */
async function daemonAnswers(dir: string): Promise<boolean> {
  const st = readState(dir);
  if (!st) return true; // not ours to judge (e.g. --mount of a foreground mount)
  try {
    await controlRequest(st.socket, 'status', {}, 10_000);
    return true;
  } catch {
    return false;
  }
}

/** How much of a worse case's log a run prints. */
const LOG_TAIL_LINES = 40;

/** The last `n` lines of case `caseNo`'s log (`N-name.tc-log.XXXXXX`), or a line saying there is none. */
function logTail(logDir: string, caseNo: number, n: number): string[] {
  const name = readdirSync(logDir).find((f) => f.startsWith(`${caseNo}-`));
  if (!name) return ['(no log kept)'];
  const lines = readFileSync(join(logDir, name), 'latin1').replace(/\n$/, '').split('\n');
  return lines.slice(-n);
}

function caseName(testDir: string, f: { file: string; instance: boolean } | undefined, c: CaseLine): string {
  return f ? `${relative(testDir, f.file)}${f.instance ? ' (instance)' : ''}` : `case ${c.caseNo}`;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
  }
}
