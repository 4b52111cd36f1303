/**
 * The FUSE layer through a real mount, driven by real shell commands:
 * callers, direct_io, O_TRUNC, interrupts, poll, errors.
 */
import { chmodSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MountedTracefs, mountTracefs } from '../../src/fuse/mount.js';
import { isAlive } from '../../src/daemon/state.js';
import { buildFixture, type Fixture } from '../helpers/mount-fixture.js';
import { fuseUnavailable, mountedType, sh, tempDir, waitUntil } from '../helpers/e2e.js';

const skip = fuseUnavailable();
if (skip) console.warn(`e2e-mount: skipped: ${skip}`);

describe.skipIf(!!skip)(`FUSE mount of a Tracefs${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let fx: Fixture;
  let m: MountedTracefs;
  let M: string;
  const logs: string[] = [];

  beforeAll(async () => {
    fx = buildFixture();
    const parent = tempDir('tfe-mount-');
    chmodSync(parent, 0o755); // other users' permission checks need to reach the mount
    M = `${parent}/mnt`;
    m = await mountTracefs(fx.fs, M, { log: (s) => logs.push(s) });
  });

  afterAll(async () => {
    await m?.unmount();
    if (M) expect(await mountedType(M)).toBeUndefined();
  });

  it('shows in /proc/mounts as tracefs (fsname and subtype)', async () => {
    const r = await sh(`grep tracefs /proc/mounts | cut -f2 -d' ' | grep -x '${M}'`);
    expect(r.stdout.trim()).toBe(M);
    const line = (await sh(`grep ' ${M} ' /proc/mounts`)).stdout;
    expect(line).toMatch(new RegExp(`^tracefs ${M} fuse\\.tracefs `));
  });

  it('lists directories with . and .., and stats files as the tree says', async () => {
    const r = await sh(`ls -a ${M}; stat -c '%a %s %h %n' ${M}/log ${M}/sub ${M}/sub/inner`);
    expect(r.stdout.split('\n').slice(0, 4)).toEqual(['.', '..', 'block', 'buggy']);
    expect(r.stdout).toContain(`644 0 1 ${M}/log`);
    expect(r.stdout).toContain(`750 0 2 ${M}/sub`);
    expect(r.stdout).toContain(`440 0 1 ${M}/sub/inner`);
  });

  it('reports the calling process: the shell that opens for its redirection', async () => {
    const r = await sh(`echo $$; echo hi > ${M}/whoami`);
    const pid = Number(r.stdout.trim());
    const rec = fx.opens.filter((o) => o.file === 'whoami').at(-1);
    expect(rec?.caller).toEqual({ pid, uid: process.getuid?.(), gid: process.getgid?.() });
    const r2 = await sh(`exec cat ${M}/whoami & echo $!; wait`);
    const [catPid, seen] = r2.stdout.trim().split('\n');
    expect(seen).toBe(`${catPid} ${process.getuid?.()} ${process.getgid?.()}`);
  });

  it('uses direct_io: size 0, content generated on each read, never cached', async () => {
    const r = await sh(`stat -c %s ${M}/counter; cat ${M}/counter; cat ${M}/counter`);
    const [size, a, b] = r.stdout.trim().split('\n');
    expect(size).toBe('0');
    expect(a).toMatch(/^count \d+$/);
    expect(b).not.toBe(a);
    // Two reads at offset 0 of one open file both reach the file.
    const py = await sh(`python3 -c "import os; fd=os.open('${M}/counter', os.O_RDONLY); print(os.pread(fd, 64, 0)); print(os.pread(fd, 64, 0))"`);
    const lines = py.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).not.toBe(lines[1]);
  });

  it('passes O_TRUNC to open: echo > truncates, echo >> appends, : > truncates without a write', async () => {
    fx.opens.length = 0;
    fx.writes.length = 0;
    await sh(`echo one > ${M}/log; echo two >> ${M}/log`);
    expect((await sh(`cat ${M}/log`)).stdout).toBe('one\ntwo\n');
    const flags = fx.opens.filter((o) => o.file === 'log').map((o) => o.flags);
    expect(flags[0]! & 0o1000).toBe(0o1000); // O_TRUNC
    expect(flags[1]! & 0o1000).toBe(0);
    expect(flags[1]! & 0o2000).toBe(0o2000); // O_APPEND
    await sh(`: > ${M}/log`);
    expect((await sh(`cat ${M}/log`)).stdout).toBe('');
    expect(fx.writes.map((w) => w.data)).toEqual(['one\n', 'two\n']);
  });

  it('delivers a 32 KiB echo as one write', async () => {
    fx.writes.length = 0;
    await sh(`echo "$(head -c 32768 /dev/zero | tr '\\0' x)" > ${M}/log`);
    expect(fx.writes.map((w) => w.len)).toEqual([32769]);
  });

  it('ends a blocked read promptly when its reader is interrupted, and stays healthy', async () => {
    const before = fx.blocked.interrupted;
    const r = await sh(`timeout 2 cat ${M}/block; echo "rc=$?"`);
    expect(r.stdout.trim()).toBe('rc=124');
    expect(r.ms).toBeLessThan(3000);
    expect(fx.blocked.interrupted).toBe(before + 1);
    const k = await sh(`timeout -s KILL 1 cat ${M}/block; echo "rc=$?"`);
    expect(k.stdout.trim()).toBe('rc=137');
    expect(k.ms).toBeLessThan(3000);
    const i = await sh(`timeout -s INT 1 cat ${M}/block; echo "rc=$?"`);
    expect(i.stdout.trim()).toBe('rc=124');
    expect(await waitUntil(() => fx.blocked.n === 0, 2000)).toBe(true);
    expect((await sh(`cat ${M}/counter`)).stdout).toMatch(/^count \d+\n$/);
  });

  it('makes poll/select ready when data arrives on a blocking file', async () => {
    const prog = `
import os, select, sys, time
fd = os.open('${M}/pipe', os.O_RDONLY)
p = select.poll(); p.register(fd, select.POLLIN)
print('idle', p.poll(300), flush=True)
t = time.time(); r = p.poll(10000)
print('ready', r != [] and bool(r[0][1] & select.POLLIN), round(time.time() - t, 1), flush=True)
print('data', os.read(fd, 100).decode().strip(), flush=True)
rl, _, _ = select.select([fd], [], [], 0.3)
print('select-empty', rl == [], flush=True)
`;
    const child = sh(`python3 -c "${prog.replace(/"/g, '\\"')}"`);
    await new Promise((r) => setTimeout(r, 1500));
    fx.pipe.push('hello\n');
    const r = await child;
    const out = r.stdout.trim().split('\n');
    expect(out[0]).toBe('idle []');
    expect(out[1]).toMatch(/^ready True \d/);
    expect(Number(out[1]!.split(' ')[2])).toBeGreaterThanOrEqual(0.5);
    expect(out[2]).toBe('data hello');
    expect(out[3]).toBe('select-empty True');
  });

  it('sees O_NONBLOCK set by fcntl after open (perf ftrace reads trace_pipe so)', async () => {
    const prog = `
import fcntl, os, time
fd = os.open('${M}/pipe', os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK)
try:
    os.read(fd, 100); print('read', flush=True)
except BlockingIOError:
    print('EAGAIN', flush=True)
fcntl.fcntl(fd, fcntl.F_SETFL, 0)
t = time.time(); d = os.read(fd, 100)
print('blocked', round(time.time() - t, 1) >= 0.5, d.decode().strip(), flush=True)
`;
    const child = sh(`python3 -c "${prog.replace(/"/g, '\\"')}"`);
    await new Promise((r) => setTimeout(r, 1500));
    fx.pipe.push('late\n');
    const r = await child;
    expect(r.stdout, r.stderr).toBe('EAGAIN\nblocked True late\n');
  });

  it('wakes a blocked stream reader when data arrives', async () => {
    const child = sh(`head -n 1 ${M}/pipe`);
    await new Promise((r) => setTimeout(r, 300));
    fx.pipe.push('line\n');
    expect((await child).stdout).toBe('line\n');
  });

  it('answers a bug with EIO and keeps serving', async () => {
    const r = await sh(`cat ${M}/buggy; echo "rc=$?"`);
    expect(r.stderr).toMatch(/Input\/output error/);
    expect(logs.some((l) => l.includes('a bug'))).toBe(true);
    expect((await sh(`cat ${M}/sub/inner`)).stdout).toBe('inner\n');
  });

  it('gives the VFS errnos for what tracefs does not support', async () => {
    const r = await sh(
      `touch ${M}/new 2>&1; rm ${M}/log 2>&1; mv ${M}/log ${M}/log2 2>&1; mkdir ${M}/d 2>&1; ln -s x ${M}/l 2>&1; cat ${M}/nope 2>&1; true`,
    );
    expect(r.stdout).toMatch(/touch: cannot touch .*new': Permission denied/);
    expect(r.stdout).toMatch(/rm: cannot remove .*log': Operation not permitted/);
    expect(r.stdout).toMatch(/mv: cannot move .*: Operation not permitted/);
    expect(r.stdout).toMatch(/mkdir: cannot create directory .*d.: Operation not permitted/);
    expect(r.stdout).toMatch(/ln: failed to create symbolic link .*: Operation not permitted/);
    expect(r.stdout).toMatch(/No such file or directory/);
  });

  it('truncate(2) succeeds and changes nothing, as on tracefs', async () => {
    await sh(`echo keep > ${M}/log`);
    const r = await sh(`truncate -s 0 ${M}/log; echo "rc=$?"; cat ${M}/log`);
    expect(r.stdout).toBe('rc=0\nkeep\n');
  });

  it('checks permissions for other users', async () => {
    if (process.getuid?.() !== 0) return;
    const r = await sh(`setpriv --reuid=65534 --regid=65534 --clear-groups cat ${M}/sub/inner 2>&1; setpriv --reuid=65534 --regid=65534 --clear-groups cat ${M}/counter`);
    expect(r.stdout).toMatch(/Permission denied/);
    expect(r.stdout).toMatch(/count \d+/);
  });

  it('closes every file the mount had open when unmounted', async () => {
    expect(m.openFiles).toBe(0);
  });
});

describe.skipIf(!!skip)(`unmounting a busy mount${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('ends a reader blocked in it and closes its files', async () => {
    const fx = buildFixture();
    const m = await mountTracefs(fx.fs, `${tempDir('tfe-busy-')}/mnt`);
    const reader = sh(`cat ${m.mountpoint}/block; echo "rc=$?"`);
    expect(await waitUntil(() => fx.blocked.n === 1, 5000)).toBe(true);
    expect(m.openFiles).toBe(1);
    const t0 = Date.now();
    await m.unmount();
    expect(Date.now() - t0).toBeLessThan(2000);
    const r = await reader;
    expect(r.stdout).toBe('rc=1\n');
    expect(r.stderr).toMatch(/Transport endpoint is not connected/);
    expect(m.openFiles).toBe(0);
    expect(await mountedType(m.mountpoint)).toBeUndefined();
    // fusermount's auto_unmount watcher is stopped too: it would unmount a later mount at this path.
    expect(m.autoUnmountPid).toBeGreaterThan(0);
    expect(await waitUntil(() => !isAlive(m.autoUnmountPid!), 2000)).toBe(true);
  });

  it('notices when something else unmounts it', async () => {
    const m = await mountTracefs(buildFixture().fs, `${tempDir('tfe-ext-')}/mnt`);
    expect((await sh(`umount ${m.mountpoint}; echo "rc=$?"`)).stdout).toBe('rc=0\n');
    await m.ended;
    await m.unmount();
    expect(await mountedType(m.mountpoint)).toBeUndefined();
  });
});
