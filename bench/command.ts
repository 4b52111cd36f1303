/**
 * `tracefs-emu bench` (npm run bench): the trigger, memory and tracefs
 * benchmarks; prints tables and writes the numbers as JSON to
 * bench/results/. Benchmarks print numbers; they are not timed tests.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Argv, CommandModule } from 'yargs';
import { DEFAULT_SERIES, profileOf, SERIES, type Series } from '../src/kernel/series.js';
import { runSelftests } from '../selftests/run.js';
import { MEMORY_DEFAULTS, runFootprint, runMisses, type FootprintResult, type MissResult, type ProbeKind } from './memory.js';
import { fmt, now, table } from './table.js';
import { runExecBench } from './exec.js';
import { runTracefsBench, type TracefsBenchResult } from './tracefs.js';
import { TRIGGER_VARIANTS, runTrigger, type TriggerResult, type TriggerVariant } from './trigger.js';

interface BenchArgs {
  only: string;
  series: string;
  tests?: string[];
  warmup: number;
  duration: number;
  rounds: number;
  glob: string;
  out: string;
  tracefsOps: number;
  tracefsEvents: number;
}

/** The trigger benchmark's comparison: the first series on each fprobe backend. */
const FGRAPH = SERIES.find((s) => profileOf(s).fprobeBackend === 'fgraph')!;
const RETHOOK = SERIES.find((s) => profileOf(s).fprobeBackend === 'rethook')!;
/** Published kretprobe-multi gains of fprobe on fgraph over rethook (fgraph-fprobe-facts.md §5). */
const PUBLISHED = { low: 18, high: 35 };

function trigger(a: BenchArgs): { results: TriggerResult[]; text: string } {
  const best = new Map<string, TriggerResult>();
  for (let r = 0; r < a.rounds; r++) {
    for (const variant of TRIGGER_VARIANTS) {
      for (const series of SERIES) {
        const res = runTrigger(series, variant, { warmupMs: a.warmup, durationMs: a.duration, allGlob: a.glob, batch: 100 });
        const k = `${series}/${variant}`;
        const prev = best.get(k);
        if (!prev || res.mhits > prev.mhits) best.set(k, res);
      }
    }
  }
  const get = (s: Series, v: TriggerVariant) => best.get(`${s}/${v}`)!;
  const rows = TRIGGER_VARIANTS.map((v) => {
    const row: (string | number)[] = [v];
    for (const s of SERIES) {
      const x = get(s, v);
      row.push(fmt(x.mhits, 3), `${fmt((x.mhits / get(s, 'base').mhits) * 100, 1)}%`);
    }
    row.push(`${fmt((get(FGRAPH, v).mhits / get(RETHOOK, v).mhits - 1) * 100, 1)}%`);
    return row;
  });
  const head = ['variant', ...SERIES.flatMap((s) => [`${s} M/s`, `${s} vs base`]), `${FGRAPH} vs ${RETHOOK}`];
  const km = (get(FGRAPH, 'kretprobe-multi').mhits / get(RETHOOK, 'kretprobe-multi').mhits - 1) * 100;
  const all = get(FGRAPH, 'kprobe-multi-all').allFunctions;
  const text = [
    `trigger: M hits per CPU-second (best of ${a.rounds}, ${a.warmup} ms warm-up, ${a.duration} ms measured, 100 calls per iteration; -all: '${a.glob}' = ${all} functions on ${FGRAPH})`,
    table(head, rows),
    `kretprobe-multi, fgraph (${FGRAPH}) vs rethook (${RETHOOK}): ${km >= 0 ? '+' : ''}${fmt(km, 1)}%; published on real kernels: +${PUBLISHED.low}…+${PUBLISHED.high}%`,
  ].join('\n');
  return { results: [...best.values()], text };
}

async function memory(): Promise<{ footprint: FootprintResult[]; misses: MissResult[]; text: string }> {
  const o = MEMORY_DEFAULTS;
  const kinds: ProbeKind[] = ['fprobe-exit', 'kretprobe'];
  const footprint: FootprintResult[] = [];
  for (const kind of kinds) for (const s of SERIES) footprint.push(runFootprint(s, kind, o));
  const misses: MissResult[] = [];
  for (const scenario of ['recursion', 'concurrent'] as const) for (const kind of kinds) for (const s of SERIES) misses.push(await runMisses(s, kind, scenario, o));
  const mb = (n: number) => fmt(n / 1e6, 2);
  const t1 = table(
    ['probes', 'series', 'backend', 'shadow stacks MB', 'rethook pools MB', 'rethook nodes', 'register ms'],
    footprint.map((f) => [`${o.probes} x ${f.kind}`, f.series, f.backend, mb(f.shadowStackBytes), mb(f.rethookBytes), f.rethookNodes, fmt(f.registerMs, 0)]),
  );
  const t2 = table(
    ['scenario', 'probe', 'series', 'backend', 'calls', 'handled', 'missed', 'overrun'],
    misses.map((m) => [m.scenario === 'recursion' ? `recursion depth ${o.depth}` : `${o.concurrent} tasks at once`, m.kind, m.series, m.backend, m.calls, m.handled, m.missed, m.overrun]),
  );
  const text = [`memory (${o.tasks} tasks, ${o.cpus} CPUs)`, t1, '', `misses (one probe, ${o.cpus} CPUs, default maxactive)`, t2].join('\n');
  return { footprint, misses, text };
}

export const benchCommand: CommandModule<object, BenchArgs> = {
  command: 'bench',
  describe: 'benchmarks: probe trigger rates (fgraph vs rethook), memory and misses, tracefs latency and throughput, where the selftests spend their time',
  builder: (y: Argv) =>
    y
      .option('only', { type: 'string', default: 'trigger,memory,tracefs', describe: 'which benchmarks (comma-separated; also: exec, selftests)' })
      .option('series', { type: 'string', default: DEFAULT_SERIES, describe: 'selftests: which series' })
      .option('tests', { type: 'string', array: true, describe: 'selftests: tests or directories (default all)' })
      .option('warmup', { type: 'number', default: 200, describe: 'trigger: warm-up per run (ms)' })
      .option('duration', { type: 'number', default: 1000, describe: 'trigger: measured window per run (ms)' })
      .option('rounds', { type: 'number', default: 3, describe: 'trigger: runs per variant (the best is kept)' })
      .option('glob', { type: 'string', default: '*', describe: 'trigger: the -all variants\' glob' })
      .option('tracefs-ops', { type: 'number', default: 200, describe: 'tracefs: adds/removes measured per series' })
      .option('tracefs-events', { type: 'number', default: 100000, describe: 'tracefs: events drained through trace_pipe (a warm-up round, then a measured one)' })
      .option('out', { type: 'string', default: fileURLToPath(new URL('../../bench/results/', import.meta.url)), describe: 'where the JSON goes' }) as unknown as Argv<BenchArgs>,
  handler: async (a) => {
    const want = new Set(a.only.split(',').map((s) => s.trim()));
    const t0 = now();
    const json: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, args: { warmup: a.warmup, duration: a.duration, rounds: a.rounds, glob: a.glob } };
    if (want.has('trigger')) {
      const t = trigger(a);
      console.log(t.text + '\n');
      json.trigger = t.results;
    }
    if (want.has('memory')) {
      const m = await memory();
      console.log(m.text + '\n');
      json.memory = { footprint: m.footprint, misses: m.misses };
    }
    if (want.has('tracefs')) {
      const r: TracefsBenchResult = await runTracefsBench({ ops: a.tracefsOps, events: a.tracefsEvents });
      console.log(r.text + '\n');
      json.tracefs = r.results;
    }
    if (want.has('exec')) {
      const r = await runExecBench();
      console.log(r.text + '\n');
      json.exec = r.results;
    }
    if (want.has('selftests')) {
      const r = await runSelftests({ series: a.series, tests: (a.tests ?? []).map(String), testTimeout: 300, bench: true });
      if (r.bench) console.log(`${a.series} selftests: ${r.bench.report}\n`);
      json.selftests = { series: a.series, seconds: r.seconds, tests: r.bench?.tests };
    }
    const secs = (now() - t0) / 1000;
    json.seconds = secs;
    mkdirSync(a.out, { recursive: true });
    const file = `${a.out.replace(/\/$/, '')}/bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
    writeFileSync(file, JSON.stringify(json, null, 2) + '\n');
    writeFileSync(`${a.out.replace(/\/$/, '')}/latest.json`, JSON.stringify(json, null, 2) + '\n');
    console.log(`${fmt(secs, 1)} s; results in ${file}`);
  },
};
