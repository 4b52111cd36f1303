/** `tracefs-emu selftests`: run the kernel's ftrace selftests against a fresh emulator (also `npm run selftests -- …`). */
import { constants as osConstants } from 'node:os';
import type { Argv, CommandModule } from 'yargs';
import { DEFAULT_SERIES, SERIES } from '../src/kernel/series.js';
import { checkSubset } from './expectations.js';
import { fetchSelftests } from './fetch.js';
import { loadExpectations, type RunResult, runSelftests } from './run.js';

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
      .option('init-expectations', { type: 'string', hidden: true, describe: "write the series' first expectations from this run and the kernel's results.tsv" })
      .option('fetch-only', { type: 'boolean', default: false, describe: 'only fetch the selftests (prints their directory)' })
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
    const runs: RunResult[] = [];
    const stop = stopOnSignal();
    for (const series of a.check ? SERIES : [a.series]) {
      if (stop.signal) break;
      runs.push(
        await runSelftests({
          series,
          kernel: a.check ? series : a.kernel,
          selftests: a.check ? undefined : a.selftests,
          selftestsVersion: a['selftests-version'],
          refresh: a.refresh,
          tests: a.check ? (checkSubset(loadExpectations(series)) ?? []) : (a.tests ?? []).map(String),
          results: a.check ? undefined : a.results,
          mount: a.mount,
          testTimeout: a['test-timeout'],
          compareKernel: a['compare-kernel'],
          raise: a.raise,
          initExpectations: a['init-expectations'],
          bench: a.bench,
          abort: stop.abort,
        }),
      );
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
