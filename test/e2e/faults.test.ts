/**
 * The daemon under faults, as separate processes: SIGTERM while readers
 * block in trace_pipe and pollers wait (they are released at once), a
 * state directory that cannot be written (a file in the way, a full disk:
 * a clear error at mount time), and a mount by a user who is not root
 * (it works where that user may open /dev/fuse, else says why and how).
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, fuseUnavailable, mountedType, run, sh, startCli, tempDir, waitUntil } from '../helpers/e2e.js';

const skip = fuseUnavailable();

describe.skipIf(!!skip)(`daemon faults${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let base: string;
  let env: NodeJS.ProcessEnv;
  const cli = (e: NodeJS.ProcessEnv, ...args: string[]) => run(process.execPath, [CLI, ...args], { env: e, timeoutMs: 30_000 });

  beforeAll(() => {
    base = tempDir('tfe-faults-');
    chmodSync(base, 0o755);
    env = { ...process.env, TRACEFS_EMU_STATE_DIR: `${base}/state` };
  });

  afterAll(async () => {
    for (const d of ['sigterm', 'user', 'busy-auto', 'busy-stale']) if (await mountedType(`${base}/${d}`)) await sh(`fusermount -uz ${base}/${d} || umount -l ${base}/${d}`);
    await sh(`umount -l ${base}/full 2>/dev/null; true`);
  });

  it('releases blocked trace_pipe readers and pollers within a second of SIGTERM', async () => {
    const M = `${base}/sigterm`;
    const fg = startCli(['mount', M], env, /mounted tracefs at/);
    await fg.started;
    // Two readers blocked on an empty buffer, one in read(2), one in poll(2).
    const waiters = [
      spawn('cat', [`${M}/trace_pipe`], { stdio: 'ignore' }),
      spawn('python3', ['-c', `import select,os; f=os.open("${M}/trace_pipe", os.O_RDONLY|os.O_NONBLOCK); p=select.poll(); p.register(f, select.POLLIN); p.poll(60000)`], { stdio: 'ignore' }),
    ];
    const ended = waiters.map((w) => new Promise<number>((ok) => w.on('exit', () => ok(Date.now()))));
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    fg.child.kill('SIGTERM');
    expect(await fg.exited).toEqual({ code: 0, signal: null });
    for (const t of await Promise.all(ended)) expect(t - t0).toBeLessThan(1000);
    expect(await mountedType(M)).toBeUndefined();
  });

  it('SIGKILL in the middle of busy work: every caller returns, and the next mount clears what was left', async () => {
    for (const autoUnmount of [true, false]) {
      const M = `${base}/busy-${autoUnmount ? 'auto' : 'stale'}`;
      const r = await cli(env, 'mount', '-d', ...(autoUnmount ? [] : ['--no-auto-unmount']), M);
      expect(r.code, r.stderr).toBe(0);
      const pid = Number(/daemon pid (\d+)/.exec(r.stdout)![1]);
      // What a selftest does at once: probes added and removed, an event on, an instance made and removed, a reader blocked in trace_pipe.
      const loops = [
        sh(`n=0; while echo 'p:kp vfs_read' >> ${M}/dynamic_events && echo 1 > ${M}/events/kprobes/kp/enable && echo 0 > ${M}/events/kprobes/kp/enable && echo '-:kp' >> ${M}/dynamic_events; do n=$((n+1)); done 2>/dev/null; echo $n`, { timeoutMs: 20_000 }),
        sh(`while :; do mkdir ${M}/instances/i1 && cat ${M}/instances/i1/trace > /dev/null && rmdir ${M}/instances/i1 || exit 0; done`, { timeoutMs: 20_000 }),
        sh(`cat ${M}/trace_pipe > /dev/null; exit 0`, { timeoutMs: 20_000 }),
      ];
      await new Promise((ok) => setTimeout(ok, 1500));
      process.kill(pid, 'SIGKILL');
      // Nothing hangs on the dead daemon: each caller gets an error and its loop ends.
      const ended = await Promise.all(loops);
      for (const l of ended) expect(l.signal).toBeNull();
      expect(Number(ended[0]!.stdout)).toBeGreaterThan(0);
      if (autoUnmount) expect(await waitUntil(async () => (await mountedType(M)) === undefined, 5000)).toBe(true);
      // The next mount at the same place works from a fresh state.
      const again = await cli(env, 'mount', '-d', M);
      expect(again.code, again.stderr).toBe(0);
      expect((await sh(`cat ${M}/tracing_on ${M}/dynamic_events; ls ${M}/instances`)).stdout).toBe('1\n');
      expect((await cli(env, 'unmount', M)).code).toBe(0);
      expect(await mountedType(M)).toBeUndefined();
    }
  });

  it('says why at mount time when the state directory cannot be written', async () => {
    writeFileSync(`${base}/not-a-dir`, '');
    const r = await cli({ ...env, TRACEFS_EMU_STATE_DIR: `${base}/not-a-dir` }, 'mount', '-d', `${base}/m1`);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`state directory ${base}/not-a-dir: not a directory (set TRACEFS_EMU_STATE_DIR to a writable directory)`);
    // A full disk: a tmpfs of 8 KiB, filled.
    mkdirSync(`${base}/full`);
    expect((await sh(`mount -t tmpfs -o size=8k tfe-full ${base}/full && dd if=/dev/zero of=${base}/full/fill bs=1k count=64 2>/dev/null; mkdir -p ${base}/full/state; true`)).code).toBe(0);
    const f = await cli({ ...env, TRACEFS_EMU_STATE_DIR: `${base}/full/state` }, 'mount', '-d', `${base}/m2`);
    expect(f.code).toBe(1);
    expect(f.stderr).toMatch(new RegExp(`state directory ${base}/full/state: .*(ENOSPC|no space).*\\(set TRACEFS_EMU_STATE_DIR`, 'i'));
    expect(await mountedType(`${base}/m2`)).toBeUndefined();
  });

  it.skipIf(process.getuid?.() !== 0)('mounts for a user who is not root where /dev/fuse lets them, else says why and how', async () => {
    const M = `${base}/user`;
    const state = `${base}/user-state`;
    mkdirSync(state, { mode: 0o777 });
    chmodSync(state, 0o777);
    // The user's own mount point.
    mkdirSync(M);
    chownSync(M, 65534, 65534);
    const probe = await sh(`su nobody -s /bin/sh -c 'test -r /dev/fuse -a -w /dev/fuse' && echo open`);
    const r = await sh(`su nobody -s /bin/sh -c 'TRACEFS_EMU_STATE_DIR=${state} ${process.execPath} ${CLI} mount -d ${M}'`, { timeoutMs: 60_000 });
    if (probe.stdout.trim() !== 'open') {
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`/dev/fuse is not open to uid 65534 (fusermount opens it as the user): as root, chmod 666 /dev/fuse`);
      return;
    }
    expect(r.code, r.stderr).toBe(0);
    // Mounted by fusermount for that user, and for others only where /etc/fuse.conf says user_allow_other.
    const line = (await sh(`grep ' ${M} ' /proc/self/mountinfo`)).stdout;
    const others = (await sh(`grep -qx '[[:space:]]*user_allow_other[[:space:]]*' /etc/fuse.conf && echo yes`)).stdout.trim() === 'yes';
    expect(line).toContain('user_id=65534');
    expect(line.includes('allow_other')).toBe(others);
    // The user's tree: theirs to read and write.
    const use = await sh(`su nobody -s /bin/sh -c 'cat ${M}/tracing_on; echo function > ${M}/current_tracer; cat ${M}/current_tracer; echo nop > ${M}/current_tracer'`);
    expect(use.stdout).toBe('1\nfunction\n');
    await sh(`su nobody -s /bin/sh -c 'TRACEFS_EMU_STATE_DIR=${state} ${process.execPath} ${CLI} unmount ${M}'`);
  });
});
