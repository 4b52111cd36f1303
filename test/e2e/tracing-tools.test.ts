/**
 * Real tracing tools, unmodified, through `tracefs-emu exec`: what they
 * look up of the machine (the mount table libtracefs reads) and what they
 * do with the emulator (a libtracefs program of our own, Debian's
 * libtracefs).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syscallWatcher } from '../../src/exec/namespace.js';
import { CLI, execUnavailable, REPO, run } from '../helpers/e2e.js';

const skip = execUnavailable() ?? (syscallWatcher() ? undefined : 'no C compiler for the syscall watcher (which shows the mount tables)');

/** Entry point of an ELF program as readelf prints it (where add_remove_uprobe.tc puts its uprobe). */
function entryPoint(path: string): Promise<string | undefined> {
  return run('readelf', ['-h', path]).then((r) => /Entry point address:\s+(0x[0-9a-f]+)/.exec(r.stdout)?.[1]);
}

describe.skipIf(!!skip)(`tracing tools under exec${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let base: string;
  let mnt: string;
  let env: NodeJS.ProcessEnv;
  const exec = (argv: string[], timeoutMs = 60_000) => run(process.execPath, [CLI, 'exec', '--mount', mnt, '--', ...argv], { env, timeoutMs });

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'e2e-tools-'));
    mnt = join(base, 'mnt');
    env = { ...process.env, TRACEFS_EMU_STATE_DIR: join(base, 'state') };
    const r = await run(process.execPath, [CLI, 'mount', mnt, '--daemon'], { env });
    expect(r.code, r.stderr).toBe(0);
  });

  afterAll(async () => {
    await run(process.execPath, [CLI, 'unmount', mnt], { env });
    rmSync(base, { recursive: true, force: true });
  });

  it('the mount tables show the emulator as a kernel shows tracefs and debugfs, and none of the namespace\'s own mounts', async () => {
    const r = await exec([
      'sh',
      '-c',
      'grep -w -e tracefs -e debugfs /proc/mounts; echo; grep -w -e tracefs -e debugfs /proc/self/mountinfo | cut -d" " -f3-; echo; ' +
        'cmp /proc/mounts /proc/$$/mounts && cmp /proc/self/mountinfo /proc/thread-self/mountinfo && echo same; ' +
        'grep -c -e emu- -e fuse /proc/self/mountinfo; findmnt -n -o FSTYPE,SOURCE /sys/kernel/tracing',
    ]);
    expect(r.stdout, r.stderr).toMatch(
      new RegExp(
        [
          'tracefs /sys/kernel/tracing tracefs rw,nosuid,nodev,noexec,relatime 0 0',
          'debugfs /sys/kernel/debug debugfs rw,nosuid,nodev,noexec,relatime 0 0',
          'tracefs /sys/kernel/debug/tracing tracefs rw,nosuid,nodev,noexec,relatime 0 0',
          '',
          '\\d+:\\d+ / /sys/kernel/tracing rw,nosuid,nodev,noexec,relatime - tracefs tracefs rw',
          '\\d+:\\d+ / /sys/kernel/debug rw,nosuid,nodev,noexec,relatime - debugfs debugfs rw',
          '\\d+:\\d+ / /sys/kernel/debug/tracing rw,nosuid,nodev,noexec,relatime - tracefs tracefs rw',
          '',
          'same',
          '0',
          'tracefs tracefs',
          '',
        ].join('\n').replace(/\n/g, '\\n') + '$',
      ),
    );
    // Mount points of the real table: a mountinfo line's parent is a mount the table shows.
    const info = await exec(['cat', '/proc/self/mountinfo']);
    const lines = info.stdout.trim().split('\n').map((l) => l.split(' '));
    const ids = new Set(lines.map((f) => f[0]));
    expect(lines.filter((f) => f[4] !== '/' && !ids.has(f[1]))).toEqual([]);
  });

  it('umount, mount and remount of tracefs and debugfs behave as on a kernel (debugfs\'s tracing automount included)', async () => {
    const mount2 = (what: string, call: string) =>
      `python3 -c "import ctypes; l = ctypes.CDLL(None, use_errno=True); r = l.${call}; print('${what}', r, ctypes.get_errno() if r else 0)"`;
    const r = await exec([
      'sh',
      '-c',
      [
        'cd /',
        'umount /sys/kernel/debug; echo "umount debugfs $?"',
        'ls /sys/kernel/debug | wc -l; grep -c -w debugfs /proc/mounts',
        'mount -t debugfs nodev /sys/kernel/debug; echo "mount debugfs $?"',
        'cat /sys/kernel/debug/tracing/tracing_on',
        'umount /sys/kernel/tracing; echo "umount tracefs $?"',
        'ls /sys/kernel/tracing | wc -l',
        'mount -t tracefs nodev /sys/kernel/tracing; echo "mount tracefs $?"',
        'cat /sys/kernel/tracing/tracing_on',
        'mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; echo "mount tracefs again $?"',
        mount2('mount(2) tracefs again', "mount(b'nodev', b'/sys/kernel/tracing', b'tracefs', 0, None)"),
        mount2('umount(2) debugfs', "umount(b'/sys/kernel/debug')"),
        mount2('mount(2) debugfs', "mount(b'nodev', b'/sys/kernel/debug', b'debugfs', 0, None)"),
        'cat /sys/kernel/debug/tracing/tracing_on',
        'mount -o remount,gid=0 /sys/kernel/tracing; echo "remount $?"',
        'grep -w -e debugfs -e tracefs /proc/mounts | cut -d" " -f1-3',
      ].join('; '),
    ]);
    expect(r.stdout, r.stderr).toBe(
      [
        'umount debugfs 0',
        '0',
        '0',
        'mount debugfs 0',
        '1',
        'umount tracefs 0',
        '0',
        'mount tracefs 0',
        '1',
        'mount tracefs again 32',
        'mount(2) tracefs again -1 16',
        'umount(2) debugfs 0 0',
        'mount(2) debugfs 0 0',
        '1',
        'remount 0',
        // the sources the mounts were given, as the kernel keeps them; the automount's is the filesystem's name
        'nodev /sys/kernel/tracing tracefs',
        'nodev /sys/kernel/debug debugfs',
        'tracefs /sys/kernel/debug/tracing tracefs',
        '',
      ].join('\n'),
    );
  });

  it('splice() from trace_pipe_raw moves whole pages (FUSE would end it at once)', async () => {
    const py = [
      'import os',
      'T = "/sys/kernel/tracing"',
      'open(T + "/events/sched/sched_switch/enable", "w").write("1")',
      'for _ in range(40): open(T + "/available_tracers").read()',
      'open(T + "/events/sched/sched_switch/enable", "w").write("0")',
      'moved = []',
      'for cpu in range(os.cpu_count() or 1):',
      '    try: fd = os.open(f"{T}/per_cpu/cpu{cpu}/trace_pipe_raw", os.O_RDONLY | os.O_NONBLOCK)',
      '    except FileNotFoundError: break',
      '    r, w = os.pipe()',
      '    while True:',
      '        try: n = os.splice(fd, w, 65536, flags=os.SPLICE_F_NONBLOCK)',
      '        except BlockingIOError: break',
      '        if n == 0: break',
      '        moved.append(n)',
      '        os.read(r, n)',
      'print(len(moved) > 0, all(n % 4096 == 0 for n in moved))',
    ].join('\n');
    const r = await exec(['python3', '-c', py]);
    expect(r.stdout, r.stderr).toBe('True True\n');
  });

  it.skipIf(!existsSync('/usr/bin/trace-cmd'))('trace-cmd stream shows events as they come, and ends on SIGINT', async () => {
    // It reads every event format first (through FUSE that takes a while), so the test waits for its banner.
    // At SIGINT its recorders flush what is left into pipes the parent stops reading as soon as they are
    // momentarily empty: they end only if reading the buffer does not keep filling it (each read a context
    // switch between two recorders made to share one CPU did, and the flush never ended).
    const out = join(base, 'stream.out');
    const script = [
      `stdbuf -oL trace-cmd stream -e sched_switch > ${out} 2>&1 &`,
      'P=$!',
      `i=0; until grep -q "Hit Ctrl" ${out} || [ $i -ge 240 ]; do sleep 0.5; i=$((i + 1)); done`,
      `i=0; until grep -q "sched_switch: " ${out} || [ $i -ge 60 ]; do sleep 0.5; i=$((i + 1)); done`,
      `grep -q "sched_switch: " ${out} && echo streamed`,
      'kill -INT $P',
      'i=0; while kill -0 $P 2>/dev/null && [ $i -lt 20 ]; do sleep 0.5; i=$((i + 1)); done',
      'if kill -0 $P 2>/dev/null; then echo still running; kill -KILL $P; pkill -KILL -P $P; else echo ended; fi',
      'wait',
    ].join('\n');
    const r = await exec(['sh', '-c', script], 180_000);
    expect(r.stdout, readFileSync(out, 'latin1').slice(0, 2000)).toBe('streamed\nended\n');
  }, 200_000);

  it.skipIf(!existsSync('/usr/bin/trace-cmd'))('trace-cmd stream -e raw_syscalls -- CMD ends when CMD does', async () => {
    // Its recorders poll trace_pipe_raw, which waits for buffer_percent: woken at every event, each poll's own
    // traced calls woke them again, their pipes filled, and after CMD the parent waited for them forever.
    // (The real 7.2 kernel prints CMD's output and no event: the parent stops reading before the recorders flush.)
    const r = await exec(['timeout', '-s', 'KILL', '90', 'trace-cmd', 'stream', '-e', 'raw_syscalls', '--', 'cat', '/etc/hostname'], 120_000);
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(readFileSync('/etc/hostname', 'latin1').trim());
  }, 150_000);

  const header = '/usr/include/tracefs/tracefs.h';
  it.skipIf(!existsSync(header))('a libtracefs program finds the tracing directory, and makes and removes an instance, a synthetic event, an eprobe and a uprobe', async () => {
    const bin = join(base, 'libtracefs-client');
    const flags = await run('pkg-config', ['--cflags', '--libs', 'libtracefs']);
    expect(flags.code, flags.stderr).toBe(0);
    const cc = await run(process.env.CC ?? 'cc', ['-O2', '-o', bin, join(REPO, 'test/e2e/programs/libtracefs-client.c'), ...flags.stdout.trim().split(/\s+/)]);
    expect(cc.code, cc.stderr).toBe(0);
    const entry = await entryPoint('/bin/sh');
    expect(entry).toBeDefined();
    const r = await exec([bin, '/bin/sh', entry!]);
    expect(r.stdout, r.stderr).toBe(
      [
        'tracing_dir /sys/kernel/tracing',
        ...['instance_create', 'instance_destroy', 'local_events', 'synth_alloc', 'synth_create', 'synth_destroy', 'eprobe_create', 'eprobe_destroy', 'uprobe_create', 'uprobe_destroy'].map((s) => `${s} ok`),
        '',
      ].join('\n'),
    );
    expect(r.code).toBe(0);
  });
});
