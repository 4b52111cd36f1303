/** `tracefs-emu selftests`: run the kernel's ftrace selftests against a fresh emulator (also `npm run selftests -- …`). */
import { availableParallelism, constants as osConstants } from 'node:os';
import type { Argv, CommandModule } from 'yargs';
import { DEFAULT_SERIES, SERIES } from '../src/kernel/series.js';
import { which } from '../src/exec/namespace.js';
import { ownCpuList, parseCpuList } from '../src/host/proc_source.js';
import { checkSubset } from './expectations.js';
import { fetchSelftests } from './fetch.js';
import { fetchForExpectations, loadExpectations, type RunOptions, type RunResult, runSelftests } from './run.js';

interface SelftestsArgs {
  series: string;
  kernel?: string;
  selftests?: string;
  'selftests-version'?: string;
  tests?: string[];
  check: boolean;
  results?: string;
  mount?: string;
  'test-timeout': number;
  'compare-kernel': boolean;
  raise: boolean;
  'fetch-only': boolean;
  refresh: boolean;
  'init-expectations'?: string;
  bench: boolean;
  jobs?: number;
}

export const selftestsCommand: CommandModule<object, SelftestsArgs> = {
  command: 'selftests [tests..]',
  describe: "run the kernel's ftrace selftests (ftracetest, unmodified) against a fresh emulator and compare with the expectations",
  builder: (y: Argv) =>
    y
      .positional('tests', { type: 'string', array: true, describe: 'tests or directories (relative to test.d); default all' })
      .option('series', { type: 'string', default: DEFAULT_SERIES, describe: 'selftests series (Debian linux-source-X.Y)' })
      .option('kernel', { type: 'string', choices: [...SERIES], describe: 'kernel series the emulator behaves as (default: --series)' })
      .option('selftests', { type: 'string', describe: 'use this ftrace selftests directory instead of fetching one' })
      .option('selftests-version', { type: 'string', describe: "pin the linux-source version (default: the expectations', else the recorded choice, else the newest)" })
      .option('refresh', { type: 'boolean', default: false, describe: 'fetch the newest linux-source of the series instead of the recorded or expected one' })
      .option('check', { type: 'boolean', default: false, describe: `CI: every series (${SERIES.join(', ')}) against its own kernel profile and expectations (the tests its expectations' "# check:" lines name, else all)` })
      .option('results', { type: 'string', describe: 'results directory (default selftests/results/<series>)' })
      .option('mount', { type: 'string', describe: 'run against this existing tracefs-emu mount instead of a fresh daemon' })
      .option('test-timeout', { type: 'number', default: 300, describe: 'seconds one test may run before it is killed (and FAILs)' })
      .option('compare-kernel', { type: 'boolean', default: false, describe: "print each test's verdict next to the real kernel's" })
      .option('raise', { type: 'boolean', default: false, describe: 'raise the committed expectations to what the run reached (never lowers)' })
      .option('jobs', { type: 'number', describe: 'series run at once with --check, each on its own emulator (default: 2 with two CPUs or more, else 1)' })
      .option('init-expectations', { type: 'string', hidden: true, describe: "write the series' first expectations from this run and the kernel's results.tsv" })
      .option('fetch-only', { type: 'boolean', default: false, describe: 'only fetch the selftests (prints their directory)' })
      .option('pin', { type: 'boolean', default: true, describe: 'keep each series\' emulator and its tests to one host CPU (FUSE round trips within a CPU are the cheapest); --no-pin lets them run anywhere' })
      .option('bench', { type: 'boolean', default: false, describe: "where the time goes: the daemon's CPU, FUSE requests, processes and calls per test (bench.txt in the results)" })
      .example('$0 selftests', 'all 7.2 selftests on a 7.2 emulator')
      .example('$0 selftests 00basic', 'one directory')
      .example('$0 selftests --series 6.12 dynevent/add_remove_kprobe.tc', 'one 6.12 test on a 6.12 emulator')
      .example('$0 selftests --check', 'what CI runs') as unknown as Argv<SelftestsArgs>,
  handler: async (a) => {
    if (a['fetch-only']) {
      for (const series of a.check ? SERIES : [a.series]) {
        const t0 = Date.now();
        const f = await fetchSelftests({ series, version: a['selftests-version'], refresh: a.refresh });
        console.log(`${f.dir}\t(${f.version}, from ${f.from}, ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      }
      return;
    }
    const stop = stopOnSignal();
    const series = a.check ? [...SERIES] : [a.series];
    // Series run at once each get a CPU of their own (none with a single CPU, or against a mount: its daemon runs where it does).
    const cpus = a.pin && !a.mount && which('taskset') !== undefined ? parseCpuList(ownCpuList() ?? '') : [];
    const cpuOf = (slot: number) => (cpus.length > 1 ? cpus[slot % cpus.length] : undefined);
    const options = (s: string, slot = 0): RunOptions => ({
      series: s,
      kernel: a.check ? s : a.kernel,
      selftests: a.check ? undefined : a.selftests,
      selftestsVersion: a['selftests-version'],
      refresh: a.refresh,
      tests: a.check ? (checkSubset(loadExpectations(s)) ?? []) : (a.tests ?? []).map(String),
      results: a.check ? undefined : a.results,
      mount: a.mount,
      testTimeout: a['test-timeout'],
      compareKernel: a['compare-kernel'],
      raise: a.raise,
      initExpectations: a['init-expectations'],
      bench: a.bench,
      abort: stop.abort,
      cpu: cpuOf(slot),
    });
    // (One mount serves one series at a time.)
    const jobs = a.mount ? 1 : Math.max(1, Math.min(series.length, a.jobs ?? (a.check ? Math.min(2, availableParallelism()) : 1)));
    const runs = jobs > 1 ? await runAtOnce(series, options, jobs, stop) : [];
    if (jobs === 1) {
      for (const s of series) {
        if (stop.signal) break;
        runs.push(await runSelftests(options(s)));
      }
    }
    for (const r of runs) if (r.bench) console.log(`\n${r.series}: ${r.bench.report}\n`);
    // CI also insists that every expectation below the kernel's verdict says why.
    const failed = runs.filter((r) => r.regressions.length > 0 || r.broken || (a.check && r.unexplained.length > 0));
    for (const r of runs) {
      const extra = [r.broken ? 'run broke off' : '', r.unexplained.length ? `${r.unexplained.length} expectations without a reason` : ''].filter(Boolean);
      console.log(`${r.series}: ${r.rows.length} results, ${r.regressions.length} worse than expected, ${r.seconds.toFixed(0)} s${extra.length ? ` (${extra.join(', ')})` : ''} — ${r.resultsDir}`);
    }
    if (failed.length) process.exitCode = 1;
    stop.dispose();
    if (stop.signal) {
      console.log(`${stop.signal}: stopped after ${runs.map((r) => r.series).join(', ') || 'no series'}`);
      process.exitCode = 128 + (osConstants.signals[stop.signal] ?? 0);
    }
  },
};

/**
 * Several series at once, each on its own emulator, `jobs` at a time; each
 * worker keeps what it runs to its own CPU (RunOptions.cpu), so that the
 * series neither share a CPU nor pay for round trips between CPUs. Each
 * run's console output is printed whole when it ends; its log lines as
 * they come, with its series. The selftests are fetched first, one series
 * after the other (apt runs one at a time).
 */
async function runAtOnce(series: string[], options: (s: string, slot: number) => RunOptions, jobs: number, stop: { readonly signal?: NodeJS.Signals }): Promise<RunResult[]> {
  const logFor = (s: string) => (m: string) => void process.stderr.write(`selftests [${s}]: ${m}\n`);
  const dirs = new Map<string, string>();
  for (const s of series) {
    const o = options(s, 0);
    if (!o.selftests) dirs.set(s, await fetchForExpectations(o, logFor(s)));
  }
  const results = new Map<string, RunResult>();
  const queue = [...series];
  // Each worker has its slot: what runs in it keeps to that slot's CPU.
  const worker = async (slot: number): Promise<void> => {
    for (let s = queue.shift(); s !== undefined && !stop.signal; s = queue.shift()) {
      const out: string[] = [];
      const o = options(s, slot);
      try {
        results.set(s, await runSelftests({ ...o, selftests: o.selftests ?? dirs.get(s), echo: (c) => out.push(c), log: logFor(s) }));
      } finally {
        process.stdout.write(out.join(''));
      }
    }
  };
  await Promise.all(Array.from({ length: jobs }, (_, slot) => worker(slot)));
  return series.flatMap((s) => results.get(s) ?? []);
}

/**
 * SIGINT, SIGTERM or SIGHUP ends the series under way (its tests' processes
 * are killed) and starts no other; a second one exits at once.
 */
function stopOnSignal(): { readonly signal?: NodeJS.Signals; readonly abort: AbortSignal; dispose(): void } {
  const ctl = new AbortController();
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((sig) => {
    const h = () => (ctl.signal.aborted ? process.exit(128 + (osConstants.signals[sig] ?? 0)) : ctl.abort(sig));
    process.on(sig, h);
    return [sig, h] as const;
  });
  return {
    get signal() {
      return ctl.signal.reason as NodeJS.Signals | undefined;
    },
    abort: ctl.signal,
    dispose: () => {
      for (const [sig, h] of handlers) process.off(sig, h);
    },
  };
}
