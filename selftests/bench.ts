/**
 * Where a selftests run's time goes: the daemon's `load` (control command)
 * taken when ftracetest starts each test and when it prints its verdict, so
 * that each test has its wall time next to what the daemon spent on it —
 * CPU, FUSE requests by kind, processes, emulated function calls. A test
 * whose wall time the daemon's CPU does not explain spent it in its own
 * processes (or sleeping).
 */
import { controlRequest } from '../src/daemon/control.js';
import { fmt, table } from '../bench/table.js';

/** What the `load` control command answers (the parts the bench reads). */
export interface Load {
  cpu: { userMs: number; systemMs: number };
  memory: { rss: number; heapUsed: number };
  requests: Record<string, { count: number; totalMs: number; maxMs: number; p50Ms: number; p99Ms: number }>;
  /** Requests the native side answered from cached files (no JS), by kind. */
  cachedAnswers?: Record<string, number>;
  kernel: { calls: number; unseenSubtrees: number; forks: number; execs: number; exits: number; tasks: number };
  host?: { lines: number; syscalls: number; ackTimeouts?: number };
}

/** One test's share. */
export interface TestCost {
  test: string;
  wallMs: number;
  cpuMs: number;
  requests: number;
  requestMs: number;
  /** Request count and time by kind. */
  byKind: Record<string, { count: number; ms: number }>;
  forks: number;
  calls: number;
  reported: number;
}

export function loadOf(socket: string): Promise<Load> {
  return controlRequest(socket, 'load', {}, 30_000) as Promise<Load>;
}

const cpuOf = (l: Load) => l.cpu.userMs + l.cpu.systemMs;

/** What happened between two loads. */
export function costBetween(test: string, wallMs: number, a: Load, b: Load): TestCost {
  const byKind: TestCost['byKind'] = {};
  let requests = 0;
  let requestMs = 0;
  for (const [k, r] of Object.entries(b.requests)) {
    const before = a.requests[k];
    const count = r.count - (before?.count ?? 0);
    const ms = r.totalMs - (before?.totalMs ?? 0);
    if (count <= 0) continue;
    byKind[k] = { count, ms };
    requests += count;
    requestMs += ms;
  }
  return {
    test,
    wallMs,
    cpuMs: cpuOf(b) - cpuOf(a),
    requests,
    requestMs,
    byKind,
    forks: b.kernel.forks - a.kernel.forks,
    calls: b.kernel.calls - a.kernel.calls,
    reported: (b.host?.syscalls ?? 0) - (a.host?.syscalls ?? 0),
  };
}

/** The run's table: its totals, the requests by kind, and the slowest tests with where their time went. */
export function benchReport(total: TestCost, first: Load, last: Load, tests: TestCost[], slowest = 10): string {
  const s = (ms: number) => fmt(ms / 1000, 1);
  const kinds = Object.entries(last.requests)
    .map(([k, r]) => {
      const before = first.requests[k];
      const count = r.count - (before?.count ?? 0);
      return [k, count, s(r.totalMs - (before?.totalMs ?? 0)), fmt(count ? ((r.totalMs - (before?.totalMs ?? 0)) / count) * 1000 : 0, 0), fmt(r.p50Ms * 1000, 0), fmt(r.p99Ms * 1000, 0), fmt(r.maxMs, 1)] as (string | number)[];
    })
    .filter((r) => (r[1] as number) > 0)
    .sort((a, b) => Number(b[2]) - Number(a[2]));
  let cached = 0;
  for (const [k, n] of Object.entries(last.cachedAnswers ?? {})) {
    const count = n - (first.cachedAnswers?.[k] ?? 0);
    if (count <= 0) continue;
    // Opens among the cached ones whose reads the kernel made by itself (FUSE passthrough): no request of their own.
    if (k === 'passthrough') {
      kinds.push(['open (passthrough)', count, '-', '-', '-', '-', '-']);
      continue;
    }
    cached += count;
    kinds.push([`${k} (cached)`, count, '-', '-', '-', '-', '-']);
  }
  const median = [...tests].map((t) => t.wallMs).sort((a, b) => a - b)[Math.floor(tests.length / 2)] ?? 0;
  const unacked = (last.host?.ackTimeouts ?? 0) - (first.host?.ackTimeouts ?? 0);
  const lines = [
    `selftests bench: ${tests.length} tests in ${s(total.wallMs)} s wall (median ${s(median)} s); daemon CPU ${s(total.cpuMs)} s; ${total.requests} FUSE requests (${s(total.requestMs)} s answering) and ${cached} answered natively from cached files; ${total.forks} processes forked; ${total.calls} emulated calls; ${total.reported} watched calls replayed${unacked ? ` (${unacked} answers sent before the watchers acknowledged)` : ''}; daemon RSS ${fmt(last.memory.rss / 2 ** 20, 0)} MiB`,
    '',
    table(['request', 'count', 'total s', 'mean µs', 'p50 µs', 'p99 µs', 'max ms'], kinds),
    '',
    `the ${slowest} slowest tests`,
    table(
      ['test', 'wall s', 'daemon CPU s', 'requests', 'answering s', 'top requests', 'forks', 'calls'],
      [...tests]
        .sort((a, b) => b.wallMs - a.wallMs)
        .slice(0, slowest)
        .map((t) => [
          t.test,
          s(t.wallMs),
          s(t.cpuMs),
          t.requests,
          s(t.requestMs),
          Object.entries(t.byKind)
            .sort((a, b) => b[1].ms - a[1].ms)
            .slice(0, 3)
            .map(([k, v]) => `${k} ${v.count}/${s(v.ms)}s`)
            .join(' '),
          t.forks,
          t.calls,
        ]),
    ),
  ];
  return lines.join('\n');
}
