/**
 * Debian's rtla, unmodified, through `tracefs-emu exec` on a kernel built
 * with the osnoise, timerlat and hwlat tracers (features: Debian's own
 * kernel has none of them, and rtla says "Tracer osnoise not found!" there
 * as here without them). rtla finds the tracing directory with libtracefs,
 * runs the tracers in an instance of its own and reads their records raw.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
});
