/**
 * The wakeup_rt tracer end to end: under `tracefs-emu exec`, a real-time
 * process (chrt) is woken, and the emulator's tracing_max_latency and trace
 * show that wake-up, as on a kernel built with CONFIG_SCHED_TRACER.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, execUnavailable, run as runProgram, tempDir } from '../helpers/e2e.js';

const skip = execUnavailable();

/** The CLI with `args`, in the test's state directory. */
function run(args: string[], env: NodeJS.ProcessEnv) {
  return runProgram(process.execPath, [CLI, ...args], { env, timeoutMs: 60_000 });
}

describe.skipIf(!!skip)(`latency tracers under exec${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let base: string;
  let mnt: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    base = tempDir('e2e-latency-');
    mnt = join(base, 'mnt');
    env = { ...process.env, TRACEFS_EMU_STATE_DIR: join(base, 'state') };
    const r = await run(['mount', mnt, '--daemon', '--features', 'latency-tracers'], env);
    expect(r.code, r.stderr).toBe(0);
  });

  afterAll(async () => {
    await run(['unmount', mnt], env);
    rmSync(base, { recursive: true, force: true });
  });

  // The real-time process then reads the mount: the emulator learns of it (and its policy) for sure, however late the
  // machine's process events come on a loaded machine; a bare `chrt -f 10 sleep 0.1` depends on seeing it in time.
  it('wakeup_rt: chrt -f 10 (sleep 0.1, then a read) gives a non-zero tracing_max_latency and the wake-up in trace', async () => {
    const r = await run(
      [
        'exec', '--mount', mnt, '--', 'sh', '-c',
        'cd /sys/kernel/tracing && echo wakeup_rt > current_tracer && echo 0 > tracing_max_latency && ' +
          'chrt -f 10 sh -c "sleep 0.1; cat tracing_on >/dev/null" && echo 0 > tracing_on && cat tracing_max_latency && cat trace',
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
    expect(text).toMatch(new RegExp(` {3}\\+ \\[\\d{3}\\] +${task![1]}: 89:R \\S+\\n`));
    expect(text).toMatch(new RegExp(`==> \\[\\d{3}\\] +${task![1]}: 89:R \\S+\\n`));
  });

  // The bare command: the process never touches the mount, and its sleep may end before the emulator looks at it (a
  // daemon busy tracing every function looks late). The watcher says how long it slept and at what priority.
  it.each(['1', '0'])('wakeup_rt (function-trace %s): a bare chrt -f 10 sleep 0.1 is woken, and its wake-up is the latency', async (ft) => {
    const r = await run(
      [
        'exec', '--mount', mnt, '--', 'sh', '-c',
        `cd /sys/kernel/tracing && echo 1 > tracing_on && echo ${ft} > options/function-trace && echo wakeup_rt > current_tracer && echo 0 > tracing_max_latency && ` +
          'chrt -f 10 sleep 0.1 && echo 0 > tracing_on && cat tracing_max_latency && cat trace; echo nop > current_tracer; echo 1 > tracing_on; echo 1 > options/function-trace',
      ],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    const [max, ...trace] = r.stdout.split('\n');
    const text = trace.join('\n');
    expect(Number(max), text).toBeGreaterThan(0);
    const task = /#    \| task: sleep-(\d+) \(uid:0 nice:0 policy:1 rt_prio:10\)\n/.exec(text);
    expect(task, text).not.toBeNull();
    expect(text).toMatch(new RegExp(` {3}\\+ \\[\\d{3}\\] +${task![1]}: 89:R sleep\\n`));
    expect(text).toMatch(new RegExp(`==> \\[\\d{3}\\] +${task![1]}: 89:R sleep\\n`));
  });
});
