/**
 * What `tracefs-emu exec` costs a program: the same workloads timed (from
 * inside, so the namespace's set-up is not counted) run directly, under
 * exec with nothing armed (the watcher lets calls go), and under exec with
 * raw_syscalls enabled (every call stops twice and runs its path in the
 * emulated kernel): the ratio to the direct run, and the cost per system
 * call traced (extra time over the calls the trace counted).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { statePaths } from '../src/daemon/state.js';
import { loadOf } from '../selftests/bench.js';
import { fmt, table } from './table.js';

const CLI = fileURLToPath(new URL('../../bin/tracefs-emu.js', import.meta.url));

/** Workloads: shell lines that print their own elapsed microseconds last. */
const WORKLOADS: { name: string; script: string }[] = [
  { name: 'cat /etc/hostname x100', script: 'for i in $(seq 100); do cat /etc/hostname; done > /dev/null' },
  { name: 'ls -l /usr/bin', script: 'ls -l /usr/bin > /dev/null' },
  { name: "sh -c 'echo hi | wc -c' x50", script: "for i in $(seq 50); do sh -c 'echo hi | wc -c'; done > /dev/null" },
  // A process's life (fork, exec, exit) as the daemon follows it: the selftests start about 100,000.
  { name: '/bin/true x1000', script: 'i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done' },
];

const timed = (script: string): string => `s=$(date +%s%N); ${script}; e=$(date +%s%N); echo $(( (e - s) / 1000 ))`;

export interface ExecBenchRow {
  workload: string;
  directMs: number;
  execMs: number;
  tracedMs: number;
  syscalls: number;
  usPerCall: number;
  /** The daemon's CPU time for the run under exec with nothing armed (an empty command's taken off). */
  daemonMs: number;
}

export interface ExecBenchResult {
  results: ExecBenchRow[] | { skipped: string };
  text: string;
}

/** Runs a program to its end: its exit status and output. */
export function runProgram(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    execFile(file, args, { env, timeout: 600_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      ok({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** The microseconds a run printed last. */
function elapsedUs(out: string): number {
  const last = out.trim().split('\n').pop() ?? '';
  const us = Number(last);
  if (!Number.isFinite(us)) throw new Error(`no timing in: ${out.slice(-200)}`);
  return us;
}

function skipped(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (mount namespaces)';
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse';
  return undefined;
}

export async function runExecBench(rounds = 3): Promise<ExecBenchResult> {
  const why = skipped();
  if (why) return { results: { skipped: why }, text: `exec overhead: skipped (${why})` };
  const base = mkdtempSync(join(tmpdir(), 'bench-exec-'));
  const mnt = join(base, 'mnt');
  const env = { ...process.env, TRACEFS_EMU_STATE_DIR: join(base, 'state'), LC_ALL: 'C' };
  const rows: ExecBenchRow[] = [];
  try {
    const m = await runProgram(process.execPath, [CLI, 'mount', mnt, '--daemon'], env);
    if (m.code !== 0) throw new Error(`mount: ${m.stderr}`);
    const underExec = (script: string) => runProgram(process.execPath, [CLI, 'exec', '--mount', mnt, '--', 'sh', '-c', script], env);
    const { socket } = statePaths(mnt, env.TRACEFS_EMU_STATE_DIR);
    const cpuMs = async (): Promise<number> => {
      const { cpu } = await loadOf(socket);
      return cpu.userMs + cpu.systemMs;
    };
    /** The daemon's CPU time (ms) while `f` runs. */
    const daemonCpu = async (f: () => Promise<unknown>): Promise<number> => {
      const before = await cpuMs();
      await f();
      return (await cpuMs()) - before;
    };
    let emptyExecMs = Infinity;
    for (let i = 0; i < rounds; i++) emptyExecMs = Math.min(emptyExecMs, await daemonCpu(() => underExec('true')));
    const best = async (f: () => Promise<number>): Promise<number> => {
      let b = Infinity;
      for (let i = 0; i < rounds; i++) b = Math.min(b, await f());
      return b;
    };
    for (const w of WORKLOADS) {
      const directUs = await best(async () => elapsedUs((await runProgram('sh', ['-c', timed(w.script)], env)).stdout));
      let daemonMs = Infinity;
      const execUs = await best(async () => {
        let out = '';
        daemonMs = Math.min(daemonMs, (await daemonCpu(async () => (out = (await underExec(timed(w.script))).stdout))) - emptyExecMs);
        return elapsedUs(out);
      });
      let syscalls = 0;
      const tracedUs = await best(async () => {
        const script = [
          'cd /sys/kernel/tracing',
          'echo 0 > tracing_on; echo > trace; echo 1 > events/raw_syscalls/sys_enter/enable; echo 1 > tracing_on',
          `t=$(cd / && sh -c '${timed(w.script).replace(/'/g, `'\\''`)}')`,
          'echo 0 > tracing_on; echo 0 > events/raw_syscalls/sys_enter/enable',
          'grep -c "sys_enter:" trace',
          'echo $t',
        ].join('\n');
        const r = await underExec(script);
        const lines = r.stdout.trim().split('\n');
        syscalls = Number(lines[lines.length - 2]);
        return elapsedUs(r.stdout);
      });
      rows.push({
        workload: w.name,
        directMs: directUs / 1000,
        execMs: execUs / 1000,
        tracedMs: tracedUs / 1000,
        syscalls,
        usPerCall: syscalls > 0 ? (tracedUs - directUs) / syscalls : 0,
        daemonMs: Math.max(0, daemonMs),
      });
    }
  } finally {
    await runProgram(process.execPath, [CLI, 'unmount', mnt], env);
    rmSync(base, { recursive: true, force: true });
  }
  const text = [
    `exec overhead (best of ${rounds}; timed inside the workload): direct, under exec with nothing armed (and the daemon's CPU for it, an empty exec's taken off), under exec with raw_syscalls:sys_enter enabled`,
    table(
      ['workload', 'direct ms', 'exec ms', 'ratio', 'daemon ms', 'traced ms', 'ratio', 'calls traced', 'µs per call'],
      rows.map((r) => [r.workload, fmt(r.directMs, 1), fmt(r.execMs, 1), fmt(r.execMs / r.directMs, 2), fmt(r.daemonMs, 0), fmt(r.tracedMs, 1), fmt(r.tracedMs / r.directMs, 1), r.syscalls, fmt(r.usPerCall, 1)]),
    ),
  ].join('\n');
  return { results: rows, text };
}
