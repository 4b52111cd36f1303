/**
 * The no-op write (`1` to tracing_on, already 1) as a tool makes it: a
 * process of its own (synchronous open, write, close: no thread pool in
 * between) against a real daemon kept to one CPU, from that CPU and from
 * another. On a virtual machine a round trip between two vCPUs costs far
 * more than one within a vCPU (README, "What the selftests cost"); the
 * selftests keep each series to one CPU for that reason.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownCpuList, parseCpuList } from '../src/host/proc_source.js';
import type { Series } from '../src/kernel/series.js';
import { runProgram } from './exec.js';
import { percentile } from './table.js';

const CLI = fileURLToPath(new URL('../../bin/tracefs-emu.js', import.meta.url));

/** The writer: prints each write's milliseconds, after a warm-up. */
const WRITER = `
const fs = require('node:fs');
const [path, n, warm] = process.argv.slice(1).map((a, i) => (i ? Number(a) : a));
const out = [];
for (let i = -warm; i < n; i++) {
  const t = process.hrtime.bigint();
  const fd = fs.openSync(path, fs.constants.O_WRONLY | fs.constants.O_TRUNC);
  fs.writeSync(fd, '1\\n');
  fs.closeSync(fd);
  if (i >= 0) out.push(Number(process.hrtime.bigint() - t) / 1e6);
}
process.stdout.write(JSON.stringify(out));
`;

export interface ProcessWriteLatency {
  /** Where the writer ran: the daemon's CPU, or another. */
  cpu: 'same' | 'other';
  p50ms: number;
  p99ms: number;
  n: number;
}

async function run(cmd: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const r = await runProgram(cmd[0]!, cmd.slice(1), env);
  if (r.code !== 0) throw new Error(`${cmd.slice(0, 6).join(' ')}: exit ${r.code}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Undefined when it cannot run here (no taskset, no FUSE). */
export async function processWriteLatency(series: Series, ops: number): Promise<ProcessWriteLatency[] | undefined> {
  const cpus = parseCpuList(ownCpuList() ?? '');
  if (!existsSync('/dev/fuse') || cpus.length === 0 || !['/usr/bin/taskset', '/bin/taskset'].some((p) => existsSync(p))) return undefined;
  const base = mkdtempSync(join(tmpdir(), 'tfe-write-'));
  const dir = join(base, 'mnt');
  const env = { ...process.env, TRACEFS_EMU_STATE_DIR: join(base, 'state') };
  const daemonCpu = cpus[0]!;
  try {
    await run(['taskset', '-c', String(daemonCpu), process.execPath, CLI, 'mount', dir, '--daemon', '--kernel', series], env);
    const out: ProcessWriteLatency[] = [];
    const where: [ProcessWriteLatency['cpu'], number][] = [['same', daemonCpu]];
    if (cpus.length > 1) where.push(['other', cpus[1]!]);
    for (const [cpu, n] of where) {
      const ms = JSON.parse(await run(['taskset', '-c', String(n), process.execPath, '-e', WRITER, join(dir, 'tracing_on'), String(ops), String(Math.ceil(ops / 5))], env)) as number[];
      out.push({ cpu, p50ms: percentile(ms, 50), p99ms: percentile(ms, 99), n: ms.length });
    }
    return out;
  } finally {
    await runProgram(process.execPath, [CLI, 'unmount', dir], env);
    rmSync(base, { recursive: true, force: true });
  }
}
