/**
 * The CLI's mount life cycle, as separate processes: --daemon, status, the
 * control socket, unmount, signals, and stale mounts left by a killed run.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlRequest } from '../../src/daemon/control.js';
import { isAlive } from '../../src/daemon/state.js';
import { CLI, REPO, fuseUnavailable, mountedType, run, sh, startCli, tempDir, waitUntil } from '../helpers/e2e.js';

const skip = fuseUnavailable();

describe.skipIf(!!skip)(`tracefs-emu mount/unmount/status${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let base: string;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]) => run(process.execPath, [CLI, ...args], { env, timeoutMs: 30_000 });

  beforeAll(async () => {
    // The CLI runs from dist/: make sure it is built from these sources.
    const setup = await sh(`sh ${REPO}/scripts/setup.sh`, { timeoutMs: 300_000 });
    expect(setup.code, setup.stderr).toBe(0);
    base = tempDir('tfe-cli-');
    env = { ...process.env, TRACEFS_EMU_STATE_DIR: `${base}/state` };
  });

  afterAll(async () => {
    // Leave nothing mounted whatever happened.
    for (const d of readdirSync(base)) {
      if (await mountedType(`${base}/${d}`)) await sh(`fusermount -uz ${base}/${d} || umount -l ${base}/${d}`);
    }
  });

  it('has --help on every command', async () => {
    for (const c of ['mount', 'unmount', 'status', 'ctl']) {
      const r = await cli(c, '--help');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`tracefs-emu ${c}`);
    }
  });

  it('mounts as a daemon with tracefs options, reports status, remounts, unmounts', async () => {
    const M = `${base}/d1`;
    const r = await cli('mount', '--daemon', '--kernel', '6.12', '--cpus', '3', '-o', 'gid=100,mode=755', M);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`^mounted tracefs at ${M} \\(daemon pid (\\d+)`));
    const pid = Number(/daemon pid (\d+)/.exec(r.stdout)![1]);
    expect(await mountedType(M)).toBe('fuse.tracefs');
    expect((await sh(`stat -c '%a %u %g' ${M}`)).stdout).toBe('755 0 100\n');
    expect((await sh(`cat ${M}/tracing_on`)).stdout).toBe('1\n');

    const st = await cli('status');
    expect(st.stdout).toContain(`${M}  running  pid ${pid}  kernel 6.12  3 cpus  daemon  options gid=100,mode=755`);
    const js = JSON.parse((await cli('status', '--json')).stdout) as { mountpoint: string; pid: number }[];
    expect(js.find((s) => s.mountpoint === M)?.pid).toBe(pid);

    const sock = `${base}/state/${readdirSync(`${base}/state`).find((f) => f.endsWith('.sock'))}`;
    expect(await controlRequest(sock, 'status')).toMatchObject({ mountpoint: M, pid, series: '6.12', cpus: 3 });
    expect(await controlRequest(sock, 'remount', { options: 'rw,relatime,gid=7' })).toEqual({ options: 'gid=7,mode=755' });
    expect((await sh(`stat -c '%a %g' ${M} ${M}/instances`)).stdout).toBe('755 7\n750 7\n');
    await expect(controlRequest(sock, 'remount', { options: 'gid=x' })).rejects.toMatchObject({ errno: 'EINVAL' });
    await expect(controlRequest(sock, 'nope')).rejects.toThrow(/unknown command/);
    const ctl = await cli('ctl', 'commands', '--dir', M);
    expect(ctl.stdout).toContain('"remount"');

    const u = await cli('unmount', M);
    expect(u.stdout).toBe(`unmounted ${M} (stopped pid ${pid})\n`);
    expect(await mountedType(M)).toBeUndefined();
    expect(existsSync(sock)).toBe(false);
    expect((await cli('status')).stdout).not.toContain(M);
    const again = await cli('unmount', M);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not mounted');
  });

  it('refuses a second mount on a live one', async () => {
    const M = `${base}/d2`;
    expect((await cli('mount', '-d', M)).code).toBe(0);
    const r = await cli('mount', '-d', M);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/already mounted/);
    expect((await cli('unmount', M)).code).toBe(0);
  });

  it('unmounts cleanly on SIGTERM and SIGINT in the foreground, with a reader at work', async () => {
    for (const sig of ['SIGTERM', 'SIGINT'] as const) {
      const M = `${base}/fg-${sig}`;
      const fg = startCli(['mount', M], env, /mounted tracefs at/);
      await fg.started;
      expect(await mountedType(M)).toBe('fuse.tracefs');
      const reader = sh(`cat ${M}/tracing_on; sleep 0.2`);
      fg.child.kill(sig);
      expect(await fg.exited).toEqual({ code: 0, signal: null });
      await reader;
      expect(await mountedType(M)).toBeUndefined();
      expect(readdirSync(`${base}/state`).filter((f) => f.startsWith(`fg-${sig}`) && !f.endsWith('.log'))).toEqual([]);
    }
  });

  it('stops the daemon when something else unmounts its mount', async () => {
    const M = `${base}/external`;
    const r = await cli('mount', '-d', M);
    const pid = Number(/daemon pid (\d+)/.exec(r.stdout)![1]);
    expect((await sh(`umount ${M}; echo "rc=$?"`)).stdout).toBe('rc=0\n');
    expect(await waitUntil(() => !isAlive(pid), 5000)).toBe(true);
    expect((await cli('status')).stdout).not.toContain(M);
  });

  it('leaves no mount behind when the daemon is killed (auto_unmount)', async () => {
    const M = `${base}/killed`;
    const fg = startCli(['mount', M], env, /mounted tracefs at/);
    await fg.started;
    fg.child.kill('SIGKILL');
    await fg.exited;
    expect(await waitUntil(async () => (await mountedType(M)) === undefined, 5000)).toBe(true);
  });

  it('clears a stale mount left by a killed run (Transport endpoint is not connected)', async () => {
    const M = `${base}/stale`;
    const fg = startCli(['mount', '--no-auto-unmount', M], env, /mounted tracefs at/);
    await fg.started;
    fg.child.kill('SIGKILL');
    await fg.exited;
    const err = await stat(M).then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e.code,
    );
    expect(err).toBe('ENOTCONN');
    expect((await cli('status')).stdout).toContain(`${M}  stale`);
    const r = await cli('mount', '-d', M);
    expect(r.code).toBe(0);
    expect((await sh(`cat ${M}/tracing_on`)).stdout).toBe('1\n');
    expect((await cli('unmount', M)).code).toBe(0);
    // And `unmount` clears a stale mount too.
    const fg2 = startCli(['mount', '--no-auto-unmount', M], env, /mounted tracefs at/);
    await fg2.started;
    fg2.child.kill('SIGKILL');
    await fg2.exited;
    const u = await cli('unmount', M);
    expect(u.stdout).toBe(`cleared stale mount at ${M}\n`);
    expect(await mountedType(M)).toBeUndefined();
    // ... and the killed daemon's debugfs and /proc views with it.
    const left = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(`${base}/state/`));
    expect(left).toEqual([]);
  });

  it('ends a selftests run on SIGTERM: every process of its tests is killed, and the exit status says which signal', async () => {
    // A stand-in for the kernel's ftracetest that waits: the run is under way when the signal comes.
    const dir = `${base}/fake-selftests`;
    mkdirSync(`${dir}/test.d`, { recursive: true });
    writeFileSync(`${dir}/test.d/wait.tc`, '#!/bin/sh\n# description: waits\nsleep 60\n');
    writeFileSync(`${dir}/ftracetest`, '#!/bin/sh\necho "=== Ftrace unit tests ==="\nsleep 61.25\n');
    chmodSync(`${dir}/ftracetest`, 0o755);
    const t0 = Date.now();
    const run = startCli(['selftests', '--selftests', dir, '--results', `${base}/fake-results`, 'wait.tc'], env, /=== Ftrace unit tests ===/, 60_000);
    await run.started;
    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 143, signal: null });
    expect(Date.now() - t0).toBeLessThan(50_000);
    expect(run.output()).toContain('SIGTERM: stopped after 7.2');
    expect((await sh('ps -eo args= | grep -cx "sleep 61.25"')).stdout).toBe('0\n');
  }, 90_000);

  it("exits at once on a second signal, and takes the run's daemon and mount down with it", async () => {
    const dir = `${base}/fake-selftests-2`;
    mkdirSync(`${dir}/test.d`, { recursive: true });
    writeFileSync(`${dir}/test.d/wait.tc`, '#!/bin/sh\n# description: waits\nsleep 60\n');
    writeFileSync(`${dir}/ftracetest`, '#!/bin/sh\necho "=== Ftrace unit tests ==="\nsleep 62.25\n');
    chmodSync(`${dir}/ftracetest`, 0o755);
    const run = startCli(['selftests', '--selftests', dir, '--results', `${base}/fake-results-2`, 'wait.tc'], env, /=== Ftrace unit tests ===/, 60_000);
    await run.started;
    // The run's own mount, as it says.
    const mnt = / emulator at (\S+) /.exec(run.output())?.[1];
    expect(mnt).toMatch(/emu-selftests-/);
    expect(await mountedType(mnt!)).toBe('fuse.tracefs');
    run.child.kill('SIGTERM');
    // The second once the first is acted on (two sent at once are one pending signal), before the run's own unmount.
    expect(await waitUntil(async () => run.output().includes('SIGTERM: stopping ftracetest'), 5000, 5)).toBe(true);
    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 143, signal: null });
    expect(run.output()).not.toContain('SIGTERM: stopped after');
    expect(await waitUntil(async () => (await mountedType(mnt!)) === undefined, 5000)).toBe(true);
  }, 90_000);
});
