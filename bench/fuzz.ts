/**
 * `tracefs-emu fuzz`: writes grammar-based and random inputs to every
 * writable file of a real FUSE mount, from a few concurrent writer
 * processes (fuzz_writer.ts); counts the errno of each write per file and
 * the internal errors (a non-KernelError exception the adapter logged and
 * turned into EIO: there must be none), follows the server's RSS, and
 * prints the rate. The mount is served by this process (as the daemon
 * serves it), or with `--mount DIR` by the daemon already serving DIR.
 * Writes go in rounds; between rounds the state is reset the way a user
 * would (fuzz_reset.ts), and those writes are checked too.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, rmdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Argv, CommandModule } from 'yargs';
import { readState, statePaths } from '../src/daemon/state.js';
import { mountTracefs, type MountedTracefs } from '../src/fuse/mount.js';
import { mountAt } from '../src/fuse/mount_table.js';
import { HostDriver } from '../src/host/driver.js';
import { createEmulator } from '../src/index.js';
import { DEFAULT_SERIES, isSeries, type Series } from '../src/kernel/series.js';
import { type FileKind, kindOf, rng, type Rand } from './fuzz_inputs.js';
import { FuzzReset } from './fuzz_reset.js';
import type { RoundDone, WriterInit, WriterRound } from './fuzz_writer.js';
import { fmt, now, percentile, table } from './table.js';

interface FuzzOptions {
  writes: number;
  seed: number;
  writers: number;
  series: Series;
  /** Writes between resets of the state. */
  resetEvery: number;
  /** Event directories whose files are fuzzed (of thousands). */
  events: number;
  /** Fuzz the mount a daemon serves at this directory instead of serving one. */
  mount?: string;
}

interface FileStats {
  kind: FileKind;
  errnos: Map<string, number>;
}

export interface FuzzResult {
  writes: number;
  seconds: number;
  /**
   * Exceptions other than the kernel's errno: what the server logged with a
   * stack (served here, or in the daemon's log); else, with a daemon that
   * logs elsewhere, the writes answered EIO.
   */
  internalErrors: number;
  /** The first internal errors logged, and inputs answered EIO. */
  samples: string[];
  /** The server's RSS in MB after each round, by writes done. */
  rss: { writes: number; mb: number }[];
  /**
   * The server's RSS in MB about a hundred times in the run (at most every
   * ten rounds), once garbage is collected (served here; a daemon's is taken as it is): what it
   * holds, whatever the collector's timing.
   */
  held: { writes: number; mb: number }[];
  /** CPU time the server spent (user and system), in seconds. */
  serverCpu: number;
  byFile: Map<string, FileStats>;
  /** Writes of the resets: `file=result` → count. */
  resets: Map<string, number>;
  /** A round that did not end within ROUND_TIMEOUT_MS (a write that hangs). */
  hung?: string;
}

/** The instance made before fuzzing: its files are fuzzed too. */
const INSTANCE = 'instances/fz';

/** Files never written: they block, or only read. */
const SKIP = /(^|\/)(trace_pipe|trace_pipe_raw)$/;

/** How long a round of writes may take before the fuzzer calls it a hang. */
const ROUND_TIMEOUT_MS = 600_000;

/** Writable files under `dir` (mode has a write bit), with a sample of the event directories. */
async function writableFiles(dir: string, r: Rand, events: number): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(join(dir, rel));
    } catch {
      return;
    }
    // events/<system>/<event>/: keep a sample of the events (their files are alike)
    const isEventSystem = /(^|\/)events\/[^/]+$/.test(rel);
    for (const n of names) {
      if (isEventSystem && r() * 2000 > events) continue;
      const p = rel ? `${rel}/${n}` : n;
      let st;
      try {
        st = await stat(join(dir, p));
      } catch {
        continue;
      }
      if (st.isDirectory()) await walk(p);
      else if (st.mode & 0o222 && !SKIP.test(p)) out.push(p);
    }
  };
  await walk('');
  return out.sort();
}

/** The writer's script: next to this module once compiled; when this runs from source (the tests), the compiled one. */
function writerScript(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts') ? join(dirname(here), '..', 'dist', 'bench', 'fuzz_writer.js') : join(dirname(here), 'fuzz_writer.js');
}

/** A writer process: rounds in, results out. */
class Writer {
  private readonly child: ChildProcess;
  private pending?: { ok: (d: RoundDone) => void; fail: (e: Error) => void };

  constructor(init: WriterInit) {
    this.child = fork(writerScript(), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: RoundDone) => {
      const p = this.pending;
      this.pending = undefined;
      p?.ok(m);
    });
    this.child.on('exit', (code, sig) => this.pending?.fail(new Error(`writer ${init.id} exited (${sig ?? `status ${code}`})`)));
    this.child.send(init);
  }

  round(n: number): Promise<RoundDone> {
    return new Promise((ok, fail) => {
      this.pending = { ok, fail };
      this.child.send({ type: 'round', n } satisfies WriterRound);
    });
  }

  stop(): void {
    if (this.child.connected) this.child.disconnect();
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** Where the fuzzed mount is, who serves it, and what it tells of its health. */
interface Server {
  dir: string;
  /** The server's RSS in MB now. */
  rssMb(): number;
  /** Its RSS in MB once it collected its garbage (when it can be asked to). */
  heldMb(): number;
  /** CPU time the server used so far (user and system), in seconds. */
  cpuSeconds(): number;
  /** Bugs the server logged so far (messages with a stack). */
  bugs(): string[];
  close(): Promise<void>;
}

/** A full collection of this process's garbage (the collector made callable for the measurement). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** A mount served by this process, as the daemon serves it. */
async function serveHere(series: Series): Promise<Server> {
  if (!existsSync('/dev/fuse')) throw new Error('no /dev/fuse: the fuzzer needs a FUSE mount');
  const emu = createEmulator({ series, cpus: 2, callPaths: true, callers: (kernel) => new HostDriver(kernel).taskOf });
  const base = await mkdtemp(join(tmpdir(), 'tfe-fuzz-'));
  const dir = join(base, 'mnt');
  const bugs: string[] = [];
  let m: MountedTracefs;
  try {
    m = await mountTracefs(emu.fs, dir, {
      // the adapter reports a bug with its stack; mount events have none
      log: (msg) => void (msg.includes('\n    at ') && bugs.push(msg)),
    });
  } catch (e) {
    await rm(base, { recursive: true, force: true });
    throw e;
  }
  const keepAlive = setInterval(() => {}, 1000);
  return {
    dir,
    rssMb: () => process.memoryUsage().rss / 1e6,
    heldMb: () => {
      collectGarbage();
      return process.memoryUsage().rss / 1e6;
    },
    cpuSeconds: () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1e6;
    },
    bugs: () => bugs,
    close: async () => {
      clearInterval(keepAlive);
      await m.unmount();
      await m.ended;
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** The mount a daemon serves at `mount`: its RSS from /proc, its bugs from its log (when it keeps one). */
function daemonAt(mount: string): Server {
  const dir = resolve(mount);
  if (mountAt(dir)?.fstype !== 'fuse.tracefs') throw new Error(`${dir}: no tracefs-emu mount there`);
  const st = readState(dir);
  if (!st) throw new Error(`${dir}: no daemon state for this mount (mounted by this user?)`);
  const log = st.log ?? statePaths(dir).log;
  const logText = (): string => {
    try {
      return readFileSync(log, 'utf8');
    } catch {
      return '';
    }
  };
  const logStart = logText().length;
  const rssMb = (): number => {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${st.pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1e3 : NaN;
  };
  return {
    dir,
    rssMb,
    heldMb: rssMb,
    cpuSeconds: () => {
      // utime and stime, in clock ticks (USER_HZ, 100 on Linux), after the command's closing parenthesis
      const f = readFileSync(`/proc/${st.pid}/stat`, 'utf8');
      const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
      return (Number(rest[11]) + Number(rest[12])) / 100;
    },
    bugs: () => logText().slice(logStart).split(/\n(?=tracefs-emu\[)/).filter((m) => m.includes('\n    at ')),
    close: async () => {},
  };
}

/** `n` split in `k` shares as even as can be. */
function shares(n: number, k: number): number[] {
  return Array.from({ length: k }, (_, i) => Math.floor(n / k) + (i < n % k ? 1 : 0));
}

export async function runFuzz(o: FuzzOptions, progress: (s: string) => void): Promise<FuzzResult> {
  const server = o.mount ? daemonAt(o.mount) : await serveHere(o.series);
  const { dir } = server;
  const samples: string[] = [];
  const rss: { writes: number; mb: number }[] = [];
  const held: { writes: number; mb: number }[] = [];
  const byFile = new Map<string, FileStats>();
  let eioAnswers = 0;
  let hung: string | undefined;
  const writers: Writer[] = [];
  let t0 = now();
  let cpu0 = server.cpuSeconds();
  let measureMs = 0;
  let measureCpu = 0;
  let seconds = 0;
  let serverCpu = 0;
  let done = 0;
  let reset: FuzzReset | undefined;
  try {
    await mkdir(join(dir, INSTANCE)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    const files = await writableFiles(dir, rng(o.seed), o.events);
    progress(`fuzz: ${files.length} writable files, ${o.writers} writers, seed ${o.seed}, ${o.mount ? `the daemon at ${dir}` : o.series}`);
    const kinds = new Map(files.map((f) => [f, kindOf(f)]));
    for (const [f, kind] of kinds) byFile.set(f, { kind, errnos: new Map() });
    reset = new FuzzReset(dir, kinds, ['', `${INSTANCE}/`]);
    await reset.snapshot();
    for (let id = 0; id < o.writers; id++) writers.push(new Writer({ type: 'init', dir, files: [...kinds], seed: o.seed, id }));
    rss.push({ writes: 0, mb: server.rssMb() });
    held.push({ writes: 0, mb: server.heldMb() });
    /** What measuring what the server holds costs (its collections): not the fuzzing's. */
    const measureHeld = (): void => {
      const [w, c] = [now(), server.cpuSeconds()];
      held.push({ writes: done, mb: server.heldMb() });
      measureMs += now() - w;
      measureCpu += server.cpuSeconds() - c;
    };
    // about a hundred samples, at least ten rounds apart (a collection slows what follows it a while)
    const heldEvery = Math.max(10, Math.round(o.writes / o.resetEvery / 100));
    let round = 0;
    // the rate counts from the first write on
    t0 = now();
    cpu0 = server.cpuSeconds();
    let nextReport = t0 + 10_000;
    while (done < o.writes) {
      const n = Math.min(o.resetEvery, o.writes - done);
      const written = new Set<string>();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error('hang')), ROUND_TIMEOUT_MS)));
      let results: RoundDone[];
      try {
        results = await Promise.race([Promise.all(writers.map((w, i) => w.round(shares(n, o.writers)[i]!))), timeout]);
      } catch (e) {
        hung = `writes ${done}..${done + n}: ${(e as Error).message === 'hang' ? `a round did not end in ${ROUND_TIMEOUT_MS / 1000} s` : (e as Error).message}`;
        break;
      } finally {
        clearTimeout(timer);
      }
      for (const d of results) {
        for (const [f, counts] of d.results) {
          const st = byFile.get(f)!;
          for (const [res, k] of counts) {
            st.errnos.set(res, (st.errnos.get(res) ?? 0) + k);
            if (res === '0') written.add(f);
            if (res === 'EIO') eioAnswers += k;
          }
        }
        for (const e of d.eio) if (samples.length < 40) samples.push(`EIO: ${e}`);
      }
      done += n;
      await reset.reset(written);
      rss.push({ writes: done, mb: server.rssMb() });
      if (++round % heldEvery === 0 || done === o.writes) measureHeld();
      if (now() > nextReport) {
        nextReport = now() + 10_000;
        progress(`fuzz: ${done} writes, ${fmt(done / ((now() - t0) / 1000), 0)}/s, ${server.bugs().length} internal errors, RSS ${fmt(server.rssMb(), 0)} MB`);
      }
    }
  } finally {
    seconds = (now() - t0 - measureMs) / 1000;
    serverCpu = server.cpuSeconds() - cpu0 - measureCpu;
    for (const w of writers) w.stop();
    if (o.mount) await rmdir(join(dir, INSTANCE)).catch(() => {});
    await server.close();
  }
  const bugs = server.bugs();
  const logged = o.mount && !existsSync(statePaths(dir).log) ? undefined : bugs.length;
  samples.unshift(...bugs.slice(0, 20).map((b) => b.split('\n').slice(0, 6).join('\n')), ...(reset?.eio ?? []));
  return {
    writes: done,
    seconds,
    serverCpu,
    internalErrors: logged ?? eioAnswers,
    samples,
    rss,
    held,
    byFile,
    resets: reset?.results ?? new Map(),
    hung,
  };
}

/** RSS in each tenth of the writes: the median of what the server held then (one sample is at the collector's and the allocator's mercy). */
function rssLine(res: FuzzResult, o: FuzzOptions): string {
  const tenth = (i: number): number => {
    const xs = res.held.filter((s) => s.writes > (i * res.writes) / 10 && s.writes <= ((i + 1) * res.writes) / 10).map((s) => s.mb);
    // a short run may take no sample in a tenth
    return xs.length ? percentile(xs, 50) : NaN;
  };
  const tenths = Array.from({ length: 10 }, (_, i) => tenth(i));
  const [first, end] = [tenths[0]!, tenths[9]!];
  return [
    `RSS MB${o.mount ? '' : ' after a full collection'}, median of each tenth of the writes: start ${fmt(res.held[0]?.mb ?? NaN, 0)}, ${tenths.map((mb, i) => `${Math.round(((i + 1) * res.writes) / 10)} ${fmt(mb, 0)}`).join(', ')}`,
    `RSS in the last tenth ${fmt(end, 0)} MB = ${end >= first ? '+' : ''}${fmt((100 * (end - first)) / first, 1)} % from the first; samples ${fmt(Math.min(...res.held.slice(1).map((s) => s.mb)), 0)}..${fmt(Math.max(...res.held.map((s) => s.mb)), 0)} MB; RSS between rounds at most ${fmt(Math.max(...res.rss.map((s) => s.mb)), 0)} MB`,
  ].join('\n');
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
  return [
    `fuzz (${o.mount ? `daemon at ${o.mount}` : o.series}, seed ${o.seed}, ${o.writers} writers): ${res.writes} writes in ${fmt(res.seconds, 1)} s = ${fmt(res.writes / res.seconds, 0)} writes/s; the server's CPU ${fmt((1000 * res.serverCpu) / res.writes, 3)} ms a write`,
    table(['kind', 'files', 'writes', 'results'], rows),
    `resets: ${[...res.resets].sort().map(([k, n]) => `${k} ${n}`).join(', ')}`,
    `internal errors: ${res.internalErrors}${eio.length ? `; EIO from ${eio.join(', ')}` : ''}`,
    ...(res.hung ? [`HANG: ${res.hung}`] : []),
    ...res.samples,
    rssLine(res, o),
  ].join('\n');
}

interface FuzzArgs {
  writes: number;
  seed: number;
  writers: number;
  series: string;
  resetEvery: number;
  events: number;
  mount?: string;
}

export const fuzzCommand: CommandModule<object, FuzzArgs> = {
  command: 'fuzz',
  describe: 'fuzz every writable file through a FUSE mount: errnos per file, internal errors (must be 0), RSS, writes/s',
  builder: (y: Argv) =>
    y
      .option('writes', { type: 'number', default: 100000, describe: 'how many writes' })
      .option('seed', { type: 'number', default: 1, describe: 'seed of the inputs (each writer has its own stream)' })
      .option('writers', { type: 'number', default: 2, describe: 'concurrent writer processes (one thread serves the mount: more only queue)' })
      .option('series', { type: 'string', default: DEFAULT_SERIES, describe: 'kernel series (of the mount served here)' })
      .option('reset-every', { type: 'number', default: 500, describe: 'writes between resets of the state' })
      .option('events', { type: 'number', default: 40, describe: 'about how many event directories to fuzz' })
      .option('mount', { type: 'string', describe: 'fuzz the mount a daemon serves at this directory (its RSS, its log)' }) as unknown as Argv<FuzzArgs>,
  handler: async (a) => {
    if (!isSeries(a.series)) throw new Error(`unknown series ${a.series}`);
    const o: FuzzOptions = { writes: a.writes, seed: a.seed, writers: a.writers, series: a.series, resetEvery: a.resetEvery, events: a.events, mount: a.mount };
    const res = await runFuzz(o, (s) => console.error(s));
    console.log(report(res, o));
    if (res.internalErrors || res.hung) process.exitCode = 1;
  },
};
