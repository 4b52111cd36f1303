/**
 * The tracefs benchmark, through a real FUSE mount served by this process
 * (the client side uses asynchronous file calls, so the event loop keeps
 * serving): the latency of adding and removing an fprobe event through
 * dynamic_events next to a no-op write (`1` to tracing_on, already 1) on
 * the same mount, p50/p99; and trace_pipe throughput to a reader (a buffer
 * filled with fprobe events, drained with O_NONBLOCK reads of 64 KiB, the
 * second of two rounds) next to reading the same number of bytes of a
 * static file of the mount. The no-op write is also made as a tool makes
 * it, by a process of its own against a real daemon (write_latency.ts).
 */
import { constants, existsSync } from 'node:fs';
import { appendFile, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountTracefs } from '../src/fuse/mount.js';
import { HostDriver } from '../src/host/driver.js';
import { createEmulator } from '../src/index.js';
import { SERIES, type Series } from '../src/kernel/series.js';
import { Task } from '../src/kernel/task.js';
import { runProgram } from './exec.js';
import { fmt, now, percentile, table } from './table.js';
import { processWriteLatency } from './write_latency.js';

export interface TracefsBenchOptions {
  ops: number;
  events: number;
}

export interface LatencyResult {
  series: Series;
  op: 'add fprobe event' | 'remove fprobe event' | 'no-op write' | "no-op write, a process on the daemon's CPU" | 'no-op write, a process on another CPU';
  p50ms: number;
  p99ms: number;
  n: number;
}

export interface ThroughputResult {
  series: Series;
  file: string;
  bytes: number;
  events?: number;
  ms: number;
  mbPerSec: number;
  eventsPerSec?: number;
}

export interface TracefsBenchResult {
  results: { latency: LatencyResult[]; throughput: ThroughputResult[] } | { skipped: string };
  text: string;
}

const CHUNK = 64 * 1024;

/** The reader process: O_NONBLOCK reads of CHUNK until EAGAIN, EOF or the limit; prints bytes, lines and ms of its loop. */
const READER = `
const fs = require('node:fs');
const [path, limit, chunk] = process.argv.slice(1).map((a, i) => (i ? Number(a) : a));
const fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
const buf = Buffer.alloc(chunk);
let bytes = 0, lines = 0;
const t = process.hrtime.bigint();
while (bytes < limit) {
  let n;
  try { n = fs.readSync(fd, buf, 0, Math.min(chunk, limit - bytes), null); } catch (e) { if (e.code === 'EAGAIN') break; throw e; }
  if (n === 0) break;
  bytes += n;
  for (let i = 0; i < n; i++) if (buf[i] === 10) lines++;
}
const ms = Number(process.hrtime.bigint() - t) / 1e6;
fs.closeSync(fd);
process.stdout.write(JSON.stringify({ bytes, lines, ms }));
`;

/** As a tool reads: a process of its own (plain read(2) calls, no thread pool) while this one serves the mount. */
async function drainByProcess(path: string, limit = Number.MAX_SAFE_INTEGER): Promise<{ bytes: number; lines: number; ms: number }> {
  const r = await runProgram(process.execPath, ['-e', READER, path, String(limit), String(CHUNK)], process.env);
  if (r.code !== 0) throw new Error(`reader of ${path}: exit ${r.code}: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout) as { bytes: number; lines: number; ms: number };
}

/** Reads with O_NONBLOCK until EAGAIN (or EOF): bytes read. */
async function drain(path: string, limit = Infinity): Promise<{ bytes: number; text: string }> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const buf = Buffer.alloc(CHUNK);
  let bytes = 0;
  let lines = 0;
  let tail = '';
  try {
    while (bytes < limit) {
      let n: number;
      try {
        n = (await fh.read(buf, 0, Math.min(CHUNK, limit - bytes), null)).bytesRead;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') break;
        throw e;
      }
      if (n === 0) break;
      bytes += n;
      for (let i = 0; i < n; i++) if (buf[i] === 10) lines++;
      if (lines < 2) tail += buf.subarray(0, n).toString('latin1');
    }
  } finally {
    await fh.close();
  }
  return { bytes, text: `${lines}\n${tail.split('\n')[0]}` };
}

async function seriesBench(series: Series, o: TracefsBenchOptions): Promise<{ latency: LatencyResult[]; throughput: ThroughputResult[] }> {
  // Requests run in the mirrored tasks of the processes making them, as in the daemon.
  const emu = createEmulator({ series, cpus: 2, callPaths: true, callers: (kernel) => new HostDriver(kernel).taskOf });
  const base = await mkdtemp(join(tmpdir(), 'tfe-bench-'));
  const dir = join(base, 'mnt');
  const m = await mountTracefs(emu.fs, dir, { log: () => {} });
  const f = (name: string) => join(dir, name);
  try {
    // ---- latency
    const add: number[] = [];
    const remove: number[] = [];
    const noop: number[] = [];
    for (let i = -10; i < o.ops; i++) {
      let t = now();
      await appendFile(f('dynamic_events'), 'f:bench/fp vfs_read\n');
      const a = now() - t;
      t = now();
      await appendFile(f('dynamic_events'), '-:bench/fp\n');
      const r = now() - t;
      t = now();
      await writeFile(f('tracing_on'), '1\n');
      const w = now() - t;
      if (i < 0) continue;
      add.push(a);
      remove.push(r);
      noop.push(w);
    }
    const lat = (op: LatencyResult['op'], xs: number[]): LatencyResult => ({ series, op, p50ms: percentile(xs, 50), p99ms: percentile(xs, 99), n: xs.length });
    const latency = [lat('add fprobe event', add), lat('remove fprobe event', remove), lat('no-op write', noop)];

    // ---- throughput: fill one CPU's buffer with fprobe events, then drain trace_pipe
    await writeFile(f('buffer_size_kb'), '16384\n');
    await appendFile(f('dynamic_events'), 'f:bench/fp bpf_get_numa_node_id\n');
    await writeFile(f('events/bench/fp/enable'), '1\n');
    const kernel = emu.kernel;
    const task = kernel.tasks.add(new Task(31000, 31000, 'bench', 1));
    task.sp = 0xffffc90000800000n;
    const exec = kernel.exec;
    const leaf = kernel.symbols.byName('bpf_get_numa_node_id')[0];
    // One round to warm the output path up (as a long-running reader is), then the measured one.
    let pipe = { bytes: 0, text: '' };
    let pipeMs = 0;
    for (let round = 0; round < 2; round++) {
      await writeFile(f('tracing_on'), '1\n');
      for (let i = 0; i < o.events; i++) exec.call(task, leaf);
      await writeFile(f('tracing_on'), '0\n');
      const t0 = now();
      pipe = await drain(f('trace_pipe'));
      pipeMs = now() - t0;
    }
    let t = now();
    const events = Number(pipe.text.split('\n')[0]);
    t = now();
    let got = 0;
    while (got < pipe.bytes) {
      const r = await drain(f('available_filter_functions'), pipe.bytes - got);
      if (!r.bytes) break;
      got += r.bytes;
    }
    const staticMs = now() - t;
    // The same, read by a process of its own (as `cat trace_pipe` reads), the second of two rounds.
    let byProcess = { bytes: 0, lines: 0, ms: 0 };
    for (let round = 0; round < 2; round++) {
      await writeFile(f('tracing_on'), '1\n');
      for (let i = 0; i < o.events; i++) exec.call(task, leaf);
      await writeFile(f('tracing_on'), '0\n');
      byProcess = await drainByProcess(f('trace_pipe'));
    }
    let staticByProcess = { bytes: 0, lines: 0, ms: 0 };
    while (staticByProcess.bytes < byProcess.bytes) {
      const r = await drainByProcess(f('available_filter_functions'), byProcess.bytes - staticByProcess.bytes);
      if (!r.bytes) break;
      staticByProcess = { bytes: staticByProcess.bytes + r.bytes, lines: 0, ms: staticByProcess.ms + r.ms };
    }
    const row = (file: string, x: { bytes: number; ms: number }, n?: number): ThroughputResult => ({
      series,
      file,
      bytes: x.bytes,
      ms: x.ms,
      mbPerSec: x.bytes / 1e6 / (x.ms / 1000),
      ...(n === undefined ? {} : { events: n, eventsPerSec: n / (x.ms / 1000) }),
    });
    const throughput: ThroughputResult[] = [
      row('trace_pipe', { bytes: pipe.bytes, ms: pipeMs }, events),
      row('available_filter_functions', { bytes: got, ms: staticMs }),
      row('trace_pipe, a reader process', byProcess, byProcess.lines),
      row('available_filter_functions, a reader process', staticByProcess),
    ];
    await writeFile(f('events/bench/fp/enable'), '0\n');
    await appendFile(f('dynamic_events'), '-:bench/fp\n');
    return { latency, throughput };
  } finally {
    await m.unmount();
    await m.ended;
    await rm(base, { recursive: true, force: true });
  }
}

export async function runTracefsBench(o: TracefsBenchOptions): Promise<TracefsBenchResult> {
  if (!existsSync('/dev/fuse')) return { results: { skipped: 'no /dev/fuse' }, text: 'tracefs: skipped (no /dev/fuse)' };
  const latency: LatencyResult[] = [];
  const throughput: ThroughputResult[] = [];
  // The mount is served by this process's event loop, and some of the emulated kernel's waits
  // (a read that sleeps until a wake-up) sit on unref'd timers: keep the loop alive meanwhile.
  const keepAlive = setInterval(() => {}, 1000);
  try {
    for (const series of SERIES) {
      const r = await seriesBench(series, o);
      latency.push(...r.latency);
      throughput.push(...r.throughput);
      for (const w of (await processWriteLatency(series, o.ops * 5)) ?? []) {
        const op: LatencyResult['op'] = w.cpu === 'same' ? "no-op write, a process on the daemon's CPU" : 'no-op write, a process on another CPU';
        latency.push({ series, op, p50ms: w.p50ms, p99ms: w.p99ms, n: w.n });
      }
    }
  } finally {
    clearInterval(keepAlive);
  }
  const t1 = table(
    ['operation', 'series', 'p50 ms', 'p99 ms', 'n'],
    latency.map((l) => [l.op, l.series, fmt(l.p50ms, 3), fmt(l.p99ms, 3), l.n]),
  );
  const t2 = table(
    ['read', 'series', 'bytes', 'ms', 'MB/s', 'events/s'],
    throughput.map((x) => [x.file, x.series, x.bytes, fmt(x.ms, 0), fmt(x.mbPerSec, 1), x.eventsPerSec !== undefined ? fmt(x.eventsPerSec, 0) : '']),
  );
  return {
    results: { latency, throughput },
    text: [`tracefs (through a FUSE mount; ${o.ops} adds/removes per series)`, t1, '', `trace_pipe: ${o.events} fprobe events drained, next to as many bytes of a static file`, t2].join('\n'),
  };
}
