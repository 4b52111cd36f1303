/**
 * The wakeup_rt tracer end to end: under `tracefs-emu exec`, a real-time
 * `sleep` (chrt) is woken, and the emulator's tracing_max_latency and trace
 * show that wake-up, as on a kernel built with CONFIG_SCHED_TRACER.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, execUnavailable } from '../helpers/e2e.js';

const skip = execUnavailable();

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      ok({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

describe.skipIf(!!skip)(`latency tracers under exec${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let base: string;
  let mnt: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'e2e-latency-'));
    mnt = join(base, 'mnt');
    env = { ...process.env, TRACEFS_EMU_STATE_DIR: join(base, 'state') };
    const r = await run(['mount', mnt, '--daemon', '--features', 'latency-tracers'], env);
    expect(r.code, r.stderr).toBe(0);
  });

  afterAll(async () => {
    await run(['unmount', mnt], env);
    rmSync(base, { recursive: true, force: true });
  });

  it('wakeup_rt: chrt -f 10 sleep 0.1 gives a non-zero tracing_max_latency and the wake-up in trace', async () => {
    const r = await run(
      [
        'exec', '--mount', mnt, '--', 'sh', '-c',
        'cd /sys/kernel/tracing && echo wakeup_rt > current_tracer && echo 0 > tracing_max_latency && ' +
          'chrt -f 10 sleep 0.1 && echo 0 > tracing_on && cat tracing_max_latency && cat trace',
      ],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    const [max, ...trace] = r.stdout.split('\n');
    expect(Number(max)).toBeGreaterThan(0);
    const text = trace.join('\n');
    expect(text).toMatch(/^# tracer: wakeup_rt\n#\n# wakeup_rt latency trace v1\.1\.5 on /);
    expect(text).toContain(`# latency: ${max} us, #`);
    // The task is chrt's process, real-time from its first sighting: FIFO (policy 1) at priority 10, task->prio 89.
    const task = /#    \| task: \S+-(\d+) \(uid:0 nice:0 policy:1 rt_prio:10\)\n/.exec(text);
    expect(task, text).not.toBeNull();
    expect(text).toMatch(new RegExp(` {3}\\+ \\[\\d{3}\\] +${task![1]}: 89:R sleep\\n`));
    expect(text).toMatch(new RegExp(`==> \\[\\d{3}\\] +${task![1]}: 89:R sleep\\n`));
  });
});
