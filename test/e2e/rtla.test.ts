/**
 * Debian's rtla, unmodified, through `tracefs-emu exec` on a kernel built
 * with the osnoise, timerlat and hwlat tracers (features: Debian's own
 * kernel has none of them, and rtla says "Tracer osnoise not found!" there
 * as here without them). rtla finds the tracing directory with libtracefs,
 * runs the tracers in an instance of its own and reads their records raw.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, execUnavailable, run } from '../helpers/e2e.js';

const RTLA = '/usr/bin/rtla';
const skip = execUnavailable() ?? (existsSync(RTLA) ? undefined : 'rtla is not installed (Debian package rtla; scripts/setup.sh installs it)');

/** rtla's table rows: a CPU number, then `#` and its count of periods (its colours stripped). */
function rows(out: string): string[] {
  return out.replace(/\x1b\[[0-9;]*m/g, '').split('\n').filter((l) => /^\s*\d+ #\d+/.test(l));
}

describe.skipIf(!!skip)(`rtla under exec${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let base: string;
  let mnt: string;
  let env: NodeJS.ProcessEnv;
  const exec = (argv: string[]) => run(process.execPath, [CLI, 'exec', '--mount', mnt, '--', ...argv], { env, timeoutMs: 60_000 });

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'e2e-rtla-'));
    mnt = join(base, 'mnt');
    env = { ...process.env, TRACEFS_EMU_STATE_DIR: join(base, 'state') };
    const r = await run(process.execPath, [CLI, 'mount', mnt, '--daemon', '--features', 'osnoise-tracer,timerlat-tracer,hwlat-tracer'], { env });
    expect(r.code, r.stderr).toBe(0);
  });

  afterAll(async () => {
    await run(process.execPath, [CLI, 'unmount', mnt], { env });
    rmSync(base, { recursive: true, force: true });
  });

  it('osnoise top: a row per CPU with a full period of runtime, its noise and 250 timer IRQs a second', async () => {
    const r = await exec([RTLA, 'osnoise', 'top', '-d', '3', '-q']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/not found/);
    const cpus = rows(r.stdout);
    expect(cpus.length, r.stdout).toBeGreaterThan(0);
    for (const l of cpus) {
      // CPU Period Runtime Noise %CPU-avail MaxNoise MaxSingle HW NMI IRQ Softirq Thread
      const f = l.trim().split(/\s+/);
      expect(f[1], l).toMatch(/^#[1-9]\d*$/);
      const periods = Number(f[1]!.slice(1));
      expect(Number(f[2]), l).toBe(periods * 1_000_000);
      expect(Number(f[4]), l).toBeGreaterThan(99);
      expect(Number(f[4]), l).toBeLessThan(100);
      expect(Number(f[9]), l).toBe(periods * 250);
    }
  });

  it('timerlat top: IRQ and thread latencies per CPU, the thread\'s above the IRQ\'s', async () => {
    const r = await exec([RTLA, 'timerlat', 'top', '-d', '3', '-q']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toMatch(/Timer Latency/);
    const cpus = rows(r.stdout);
    expect(cpus.length, r.stdout).toBeGreaterThan(0);
    for (const l of cpus) {
      // CPU COUNT | cur min avg max | cur min avg max
      const m = /^\s*\d+ #(\d+)\s+\|\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+) \|\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/.exec(l);
      expect(m, l).not.toBeNull();
      const [count, , , irqAvg, irqMax, , thMin, thAvg, thMax] = m!.slice(1).map(Number);
      expect(count, l).toBeGreaterThan(1000);
      expect(thAvg, l).toBeGreaterThan(irqAvg!);
      expect(thMax, l).toBeGreaterThanOrEqual(irqMax!);
      expect(thMin, l).toBeGreaterThanOrEqual(1);
    }
  });

  it('timerlat hist and osnoise hist: their histograms and summaries', async () => {
    const t = await exec([RTLA, 'timerlat', 'hist', '-d', '2']);
    expect(t.code, t.stderr + t.stdout).toBe(0);
    expect(t.stdout).toMatch(/^Index\s+IRQ-000\s+Thr-000/m);
    const count = /^count:\s+(\d+)\s+(\d+)/m.exec(t.stdout);
    expect(Number(count?.[1]), t.stdout).toBeGreaterThan(1000);
    expect(t.stdout).toMatch(/^max:\s+\d+/m);
    const o = await exec([RTLA, 'osnoise', 'hist', '-d', '2']);
    expect(o.code, o.stderr + o.stdout).toBe(0);
    expect(o.stdout).toMatch(/^# RTLA osnoise histogram/m);
    expect(o.stdout).toMatch(/^Index\s+CPU-000/m);
    expect(Number(/^count:\s+(\d+)/m.exec(o.stdout)?.[1]), o.stdout).toBeGreaterThan(100);
  });

  it.skipIf(!existsSync('/usr/bin/python3'))("timerlat_fd (the workload of rtla's -u, which Debian's rtla predates): a pinned thread reads a period at a time", async () => {
    // What rtla's timerlat_u.c does on each CPU: pin itself, open the CPU's timerlat_fd, read in a loop.
    const py = [
      'import os',
      'os.sched_setaffinity(0, {0})',
      'fd = os.open("/sys/kernel/tracing/osnoise/per_cpu/cpu0/timerlat_fd", os.O_RDONLY)',
      'for i in range(50): os.read(fd, 1024)',
      'os.close(fd)',
      'os.sched_setaffinity(0, set(range(os.cpu_count())))',
      'try: os.open("/sys/kernel/tracing/osnoise/per_cpu/cpu0/timerlat_fd", os.O_RDONLY)',
      'except OSError as e: print("unpinned:", e.strerror)',
    ].join('\n');
    const r = await exec([
      'sh',
      '-c',
      [
        'cd /sys/kernel/tracing',
        'echo NO_OSNOISE_WORKLOAD > osnoise/options',
        'echo timerlat > current_tracer',
        `python3 -c '${py}'`,
        'echo 0 > tracing_on',
        'grep -v "^#" trace',
        'echo nop > current_tracer; echo DEFAULTS > osnoise/options; echo 1 > tracing_on',
      ].join('; '),
    ]);
    expect(r.code, r.stderr).toBe(0);
    if (cpus().length > 1) expect(r.stdout).toMatch(/^unpinned: Operation not permitted$/m);
    const samples = r.stdout.split('\n').filter((l) => / context +(irq|thread|user-ret) timer_latency /.test(l));
    // each period: the timer's IRQ, the thread woken, then its return to user space at the next read
    expect(samples.filter((l) => /\[000\] .* context +irq /.test(l)).length, r.stdout).toBe(50);
    expect(samples.filter((l) => /^\s+python3-\d+ +\[000\] .* context thread /.test(l)).length, r.stdout).toBe(50);
    expect(samples.filter((l) => /^\s+python3-\d+ +\[000\] .* context user-ret /.test(l)).length, r.stdout).toBe(49);
  });
});
