/**
 * `tracefs-emu fuzz`: writes grammar-based and random inputs to every
 * writable file of a real FUSE mount served by this process (as the
 * tracefs bench does), from a few concurrent writers; counts the errno of
 * each write per file, the internal errors (a non-KernelError exception
 * the adapter logged and turned into EIO: there must be none), samples this
 * process's RSS, and prints the rate. Every so often the state is reset
 * the way a user would (`echo > dynamic_events`, nop tracer, events off),
 * and those writes are checked too.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { mountTracefs } from '../src/fuse/mount.js';
import { HostDriver } from '../src/host/driver.js';
import { createEmulator } from '../src/index.js';
import { DEFAULT_SERIES, isSeries, type Series } from '../src/kernel/series.js';
import type { Tracefs } from '../src/tracefs/tracefs.js';
import { inputFor, kindOf, rng, type FileKind, type Rand } from './fuzz_inputs.js';
import { fmt, now, table } from './table.js';

interface FuzzOptions {
  writes: number;
  seed: number;
  writers: number;
  series: Series;
  /** Writes between resets of the state. */
  resetEvery: number;
  /** Event directories whose files are fuzzed (of thousands). */
  events: number;
}

interface FileStats {
  kind: FileKind;
  errnos: Map<string, number>;
}

export interface FuzzResult {
  writes: number;
  seconds: number;
  internalErrors: number;
  /** The first internal errors logged (message and the input that caused it, if known). */
  samples: string[];
  /** RSS in MB, sampled every second. */
  rss: number[];
  byFile: Map<string, FileStats>;
  resets: Map<string, number>;
}

/** The instance made before fuzzing: its files are fuzzed too. */
const INSTANCE = 'instances/fz';

/** Files never written: they block, or only read. */
const SKIP = /(^|\/)(trace_pipe|trace_pipe_raw)$/;

/** Writable files of the tree (mode has a write bit), with a sample of the event directories. */
function writableFiles(fs: Tracefs, r: Rand, events: number): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    let names: string[];
    try {
      names = fs.readdir(dir);
    } catch {
      return;
    }
    // events/<system>/<event>/: keep a sample of the events (their files are alike)
    const isEventSystem = /(^|\/)events\/[^/]+$/.test(dir);
    for (const n of names) {
      if (n === '.' || n === '..') continue;
      if (isEventSystem && r() * 2000 > events) continue;
      const p = dir ? `${dir}/${n}` : n;
      let st;
      try {
        st = fs.stat(p);
      } catch {
        continue;
      }
      if ((st.mode & 0o170000) === 0o040000) walk(p);
      else if (st.mode & 0o222 && !SKIP.test(p)) out.push(p);
    }
  };
  walk('');
  return out.sort();
}

/** What a user does between experiments, in order: each write's result is counted. */
const RESETS: [string, string][] = [
  ['tracing_on', '0'],
  ['current_tracer', 'nop'],
  ['events/enable', '0'],
  ['set_ftrace_filter', ''],
  ['set_graph_function', ''],
  ['trace', ''],
  ['dynamic_events', ''],
];

export async function runFuzz(o: FuzzOptions, progress: (s: string) => void): Promise<FuzzResult> {
  if (!existsSync('/dev/fuse')) throw new Error('no /dev/fuse: the fuzzer needs a FUSE mount');
  const emu = createEmulator({ series: o.series, cpus: 2, callPaths: true, callers: (kernel) => new HostDriver(kernel).taskOf });
  const base = await mkdtemp(join(tmpdir(), 'tfe-fuzz-'));
  const dir = join(base, 'mnt');
  const samples: string[] = [];
  let internalErrors = 0;
  let lastInput = '';
  const m = await mountTracefs(emu.fs, dir, {
    log: (msg) => {
      // the adapter reports a bug with its stack; mount events have none
      if (!msg.includes('\n    at ')) return;
      internalErrors++;
      if (samples.length < 20) samples.push(`${msg.split('\n').slice(0, 6).join('\n')}\n  (last input: ${lastInput})`);
    },
  });
  const keepAlive = setInterval(() => {}, 1000);
  const rss: number[] = [];
  const sampler = setInterval(() => rss.push(process.memoryUsage().rss / 1e6), 1000);
  const byFile = new Map<string, FileStats>();
  const resets = new Map<string, number>();
  const count = (map: Map<string, number>, k: string): void => void map.set(k, (map.get(k) ?? 0) + 1);
  const t0 = now();
  let done = 0;
  try {
    emu.fs.mkdir(INSTANCE);
    const files = writableFiles(emu.fs, rng(o.seed), o.events);
    progress(`fuzz: ${files.length} writable files, ${o.writers} writers, seed ${o.seed}, ${o.series}`);
    for (const f of files) byFile.set(f, { kind: kindOf(f), errnos: new Map() });
    const byKind = new Map<FileKind, string[]>();
    for (const f of files) byKind.set(kindOf(f), [...(byKind.get(kindOf(f)) ?? []), f]);
    const kinds = [...byKind.keys()].sort();

    /** One write(2) of `data` to `file`: '0' or the errno's name. */
    const write = async (file: string, data: Buffer, append: boolean): Promise<string> => {
      let fh;
      try {
        fh = await open(join(dir, file), append ? 'a' : 'w');
        await fh.write(data, 0, data.length, null);
        return '0';
      } catch (e) {
        return (e as NodeJS.ErrnoException).code ?? String(e);
      } finally {
        await fh?.close().catch(() => {});
      }
    };
    let paused: Promise<void> | undefined;
    let inFlight = 0;
    let idle: (() => void) | undefined;
    const reset = async (): Promise<void> => {
      for (const [file, text] of RESETS) {
        const res = await write(file, Buffer.from(`${text}\n`), false);
        count(resets, `${file}=${res}`);
        if (res === 'EIO') samples.push(`reset: ${file} <- '${text}' gave EIO`);
      }
    };
    let nextReport = t0 + 10_000;
    const worker = async (id: number): Promise<void> => {
      const r = rng(o.seed * 1000 + id + 1);
      for (;;) {
        while (paused) await paused;
        if (done >= o.writes) return;
        const n = done++;
        if (n > 0 && n % o.resetEvery === 0) {
          // reset alone: wait for the others' writes in flight
          let release!: () => void;
          paused = new Promise((res) => (release = res));
          if (inFlight) await new Promise<void>((res) => (idle = res));
          await reset();
          paused = undefined;
          release();
        }
        // a kind of file, then one of its files: the few probe files get their share
        const same = byKind.get(kinds[Math.floor(r() * kinds.length)]!)!;
        const file = same[Math.floor(r() * same.length)]!;
        const st = byFile.get(file)!;
        const data = inputFor(r, file, st.kind);
        lastInput = `${file} <- ${JSON.stringify(data.toString('latin1').slice(0, 200))}`;
        inFlight++;
        const res = await write(file, data, r() < 0.7);
        if (--inFlight === 0 && idle) {
          idle();
          idle = undefined;
        }
        count(st.errnos, res);
        if (res === 'EIO' && samples.length < 40) samples.push(`EIO: ${lastInput}`);
        if (now() > nextReport) {
          nextReport += 10_000;
          progress(`fuzz: ${done} writes, ${fmt(done / ((now() - t0) / 1000), 0)}/s, ${internalErrors} internal errors, RSS ${fmt(process.memoryUsage().rss / 1e6, 0)} MB`);
        }
      }
    };
    await Promise.all(Array.from({ length: o.writers }, (_, i) => worker(i)));
    await reset();
  } finally {
    clearInterval(sampler);
    clearInterval(keepAlive);
    await m.unmount();
    await m.ended;
    await rm(base, { recursive: true, force: true });
  }
  rss.push(process.memoryUsage().rss / 1e6);
  return { writes: Math.min(done, o.writes), seconds: (now() - t0) / 1000, internalErrors, samples, rss, byFile, resets };
}

function report(res: FuzzResult, o: FuzzOptions): string {
  const rows: (string | number)[][] = [];
  const byKind = new Map<FileKind, Map<string, number>>();
  for (const [, st] of res.byFile) {
    const k = byKind.get(st.kind) ?? new Map<string, number>();
    for (const [e, n] of st.errnos) k.set(e, (k.get(e) ?? 0) + n);
    byKind.set(st.kind, k);
  }
  for (const [kind, errs] of [...byKind].sort()) {
    const total = [...errs.values()].reduce((a, b) => a + b, 0);
    const top = [...errs].sort((a, b) => b[1] - a[1]).map(([e, n]) => `${e === '0' ? 'ok' : e} ${n}`).join(', ');
    rows.push([kind, [...res.byFile.values()].filter((s) => s.kind === kind).length, total, top]);
  }
  const eio = [...res.byFile].filter(([, s]) => s.errnos.get('EIO')).map(([f, s]) => `${f}: ${s.errnos.get('EIO')}`);
  const r = res.rss;
  const at = (frac: number): string => fmt(r[Math.min(r.length - 1, Math.floor(r.length * frac))] ?? 0, 0);
  return [
    `fuzz (${o.series}, seed ${o.seed}, ${o.writers} writers): ${res.writes} writes in ${fmt(res.seconds, 1)} s = ${fmt(res.writes / res.seconds, 0)} writes/s`,
    table(['kind', 'files', 'writes', 'results'], rows),
    `resets: ${[...res.resets].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    `internal errors: ${res.internalErrors}${eio.length ? `; EIO from ${eio.join(', ')}` : ''}`,
    ...res.samples,
    `RSS MB: start ${at(0)}, 10% ${at(0.1)}, 50% ${at(0.5)}, end ${at(1)}, max ${fmt(Math.max(...r), 0)}`,
  ].join('\n');
}

interface FuzzArgs {
  writes: number;
  seed: number;
  writers: number;
  series: string;
  resetEvery: number;
  events: number;
}

export const fuzzCommand: CommandModule<object, FuzzArgs> = {
  command: 'fuzz',
  describe: 'fuzz every writable file through a FUSE mount: errnos per file, internal errors (must be 0), RSS, writes/s',
  builder: (y: Argv) =>
    y
      .option('writes', { type: 'number', default: 100000, describe: 'how many writes' })
      .option('seed', { type: 'number', default: 1, describe: 'seed of the inputs (each writer has its own stream)' })
      .option('writers', { type: 'number', default: 4, describe: 'concurrent writers' })
      .option('series', { type: 'string', default: DEFAULT_SERIES, describe: 'kernel series' })
      .option('reset-every', { type: 'number', default: 500, describe: 'writes between resets of the state' })
      .option('events', { type: 'number', default: 40, describe: 'about how many event directories to fuzz' }) as unknown as Argv<FuzzArgs>,
  handler: async (a) => {
    if (!isSeries(a.series)) throw new Error(`unknown series ${a.series}`);
    const o: FuzzOptions = { writes: a.writes, seed: a.seed, writers: a.writers, series: a.series, resetEvery: a.resetEvery, events: a.events };
    const res = await runFuzz(o, (s) => console.error(s));
    console.log(report(res, o));
    if (res.internalErrors) process.exitCode = 1;
  },
};
