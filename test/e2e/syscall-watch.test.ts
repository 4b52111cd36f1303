/**
 * native/seccomp/syscall_watch.c for real: the lines it writes for a shell's
 * calls (what they will return, the file, the resolved path), what it leaves
 * out, that it changes nothing for the command; and, through a real daemon
 * and `tracefs-emu exec`, the selftests' checks that need calls outside the
 * mount (kprobe_args_user, add_remove_eprobe, event-filter-function).
 */
import { execFile, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlRequest } from '../../src/daemon/control.js';
import { parseHostSyscall, type HostSyscall } from '../../src/host/syscalls.js';
import { syscallWatcher } from '../../src/exec/namespace.js';

const REPO = resolve(import.meta.dirname, '../..');
const CLI = join(REPO, 'bin', 'tracefs-emu.js');

function why(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  if (!syscallWatcher()) return 'no C compiler for the watcher';
  return undefined;
}
const skip = why();

/**
 * Runs argv under the watcher with a FIFO of its own; resolves to its status,
 * output, and the lines it reported. `observe`: what the daemon's switch file
 * says (observe_switch.ts); without it, every watched call is reported.
 */
async function watched(argv: string[], served: string[] = [], observe?: string, how: { cpu?: number; options?: string[] } = {}): Promise<{ code: number; stdout: string; calls: HostSyscall[]; lines: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'sw-'));
  const fifo = join(dir, 'fifo');
  await new Promise((ok) => execFile('mkfifo', [fifo], ok));
  const rfd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const wfd = openSync(fifo, constants.O_WRONLY);
  try {
    if (observe !== undefined) writeFileSync(join(dir, 'observe'), observe);
    const args = [fifo, ...served.flatMap((s) => ['--served', s]), ...(observe !== undefined ? ['--observe', join(dir, 'observe')] : []), ...(how.options ?? []), '--', ...argv];
    const cmd = how.cpu === undefined ? [syscallWatcher()!, ...args] : ['taskset', '-c', String(how.cpu), syscallWatcher()!, ...args];
    const r = await new Promise<{ code: number; stdout: string }>((ok) => {
      const c = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      c.stdout.on('data', (d: Buffer) => (out += d.toString()));
      // 'close': stdout reached its end, which a watcher holding the pipe would prevent
      c.on('close', (code) => ok({ code: code ?? -1, stdout: out }));
    });
    const buf = Buffer.alloc(1 << 20);
    let text = '';
    for (;;) {
      let n = 0;
      try {
        n = readSync(rfd, buf, 0, buf.length, null);
      } catch {
        break;
      }
      if (n <= 0) break;
      text += buf.toString('latin1', 0, n);
    }
    const lines = text.split('\n').filter(Boolean);
    const calls = lines.map((l) => parseHostSyscall(l)).filter((c) => c !== undefined);
    return { ...r, calls, lines };
  } finally {
    closeSync(rfd);
    closeSync(wfd);
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!!skip)(`syscall_watch${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('reports opens, chdirs and symlinks before they run, with their results, and leaves the command as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sw-cmd-'));
    try {
      const script = `cd ${dir}; echo > /dev/null; : > new; ln -s foo link; ln -s foo link 2>/dev/null; cat missing 2>/dev/null; cd /nonexistent 2>/dev/null; echo out; exit 7`;
      const { code, stdout, calls } = await watched(['/bin/sh', '-c', script]);
      expect(code).toBe(7);
      expect(stdout).toBe('out\n');
      const mine = calls.filter((c) => !/^\/(etc|lib|usr)\//.test(c.abs));
      const brief = mine.map((c) => `${c.nr} ${c.ret} ${c.abs}${c.path2 ? ` <- ${c.path}` : ''}`);
      expect(brief).toContain(`80 0 ${dir}`);
      expect(brief).toContain('257 3 /dev/null');
      expect(brief).toContain(`257 3 ${dir}/new`);
      expect(brief.filter((b) => b === `266 0 ${dir}/link <- foo`)).toHaveLength(1);
      expect(brief).toContain(`266 -17 ${dir}/link <- foo`);
      expect(brief).toContain(`257 -2 ${dir}/missing`);
      expect(brief).toContain('80 -2 /nonexistent');
      const dn = mine.find((c) => c.abs === '/dev/null')!;
      expect(dn.path).toBe('/dev/null');
      expect(dn.file?.mode).toBe(0o20666);
      expect(Number(dn.args[2]) & 0o1101).toBe(0o1101);
      // the caller's parent, read while it waited: the shell under the watcher
      expect(dn.ppid).toBeGreaterThan(1);
      // the new file did not exist yet when its open was reported
      expect(mine.find((c) => c.abs === `${dir}/new`)!.file).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves out opens and symlinks on what the emulator serves, but not a chdir there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sw-served-'));
    try {
      const { calls } = await watched(['/bin/sh', '-c', `cd ${dir}; cat x 2>/dev/null; cd sub 2>/dev/null; cat ../y 2>/dev/null; cat /dev/null`], [dir]);
      const brief = calls.map((c) => `${c.nr} ${c.abs}`);
      expect(brief).toContain(`80 ${dir}`);
      expect(brief).toContain(`80 ${dir}/sub`);
      expect(brief.filter((b) => b.startsWith('257 ') && b.includes(dir))).toEqual([]);
      expect(brief).toContain('257 /dev/null');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports no open or symlink while the kernel sees nothing, but every chdir and exec; opens again once it sees processes run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sw-level-'));
    try {
      const script = `cd ${dir}; cat /etc/hostname > /dev/null; ln -s foo link; /bin/true`;
      const nothing = await watched(['/bin/sh', '-c', script], [], '0\n');
      const brief = (calls: HostSyscall[]): string[] => calls.map((c) => `${c.nr} ${c.abs}`);
      expect(nothing.lines[0]).toMatch(/^W \d+$/);
      expect(brief(nothing.calls)).toContain(`80 ${dir}`);
      expect(brief(nothing.calls)).toContain('59 /bin/true');
      expect(nothing.calls.filter((c) => [2, 257, 437, 88, 266].includes(c.nr))).toEqual([]);
      // Processes seen: the opens (the loader's too) and the symlink come back, and no call is stepped through.
      const processes = await watched(['/bin/sh', '-c', `rm -f ${dir}/link; ${script}`], [], '1 0000000001 0000000000\n');
      expect(brief(processes.calls)).toContain('257 /etc/hostname');
      expect(brief(processes.calls)).toContain('257 /dev/null');
      expect(brief(processes.calls)).toContain(`266 ${dir}/link`);
      expect(processes.lines.filter((l) => l.startsWith('T '))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(availableParallelism() < 2)('shows a pinned command the CPUs it had (sched_getaffinity), and a thread that chose its own mask that mask', async () => {
    // Pinned to CPU 0, shown 0-1: nproc counts what sched_getaffinity says.
    const script = 'nproc; taskset -c 1 nproc; taskset -c 0 nproc; taskset -c 0 sh -c nproc; sh -c nproc; grep Cpus_allowed_list /proc/self/status';
    const { code, stdout } = await watched(['/bin/sh', '-c', script], [], undefined, { cpu: 0, options: ['--cpus-shown', '0-1'] });
    expect(code).toBe(0);
    expect(stdout).toBe('2\n1\n1\n1\n2\nCpus_allowed_list:\t0\n');
    // Shown what it has: the call is the kernel's own.
    expect((await watched(['/bin/sh', '-c', 'nproc; taskset -c 1 nproc'], [], undefined, { cpu: 0, options: ['--cpus-shown', '0'] })).stdout).toBe('1\n1\n');
  });

  it('runs the command unwatched when nobody reads the FIFO', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sw-none-'));
    try {
      await new Promise((ok) => execFile('mkfifo', [join(dir, 'fifo')], ok));
      const r = await new Promise<{ code: number; stdout: string; stderr: string }>((ok) =>
        execFile(syscallWatcher()!, [join(dir, 'fifo'), '--', '/bin/sh', '-c', 'cat /dev/null; echo done'], (err, stdout, stderr) =>
          ok({ code: err ? Number((err as { code?: number }).code) : 0, stdout, stderr }),
        ),
      );
      expect(r).toMatchObject({ code: 0, stdout: 'done\n' });
      expect(r.stderr).toMatch(/not reported/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      ok({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

const skipMount = skip ?? (!existsSync('/dev/fuse') ? 'no /dev/fuse' : !existsSync(join(REPO, 'dist', 'src', 'cli', 'index.js')) ? 'not built' : undefined);

describe.skipIf(!!skipMount)(`calls outside the mount through exec${skipMount ? ` (skipped: ${skipMount})` : ''}`, () => {
  let base: string;
  let mnt: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'e2e-sw-'));
    mnt = join(base, 'mnt');
    env = { ...process.env, TRACEFS_EMU_STATE_DIR: join(base, 'state') };
    const r = await run(['mount', mnt, '--daemon'], env);
    expect(r.code, r.stderr).toBe(0);
  });

  afterAll(async () => {
    await run(['unmount', mnt], env);
    rmSync(base, { recursive: true, force: true });
  });

  const sh = (script: string, extra: string[] = []) => run(['exec', '--mount', mnt, ...extra, '--', 'sh', '-c', `cd /sys/kernel/tracing; ${script}`], env);

  it('kprobes on do_sys_openat2 and vfs_symlink see `echo > /dev/null` and `ln -s` (kprobe_args_user)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'e2e-sw-ln-'));
    try {
      const r2 = await run(
        ['exec', '--mount', mnt, '--', 'env', `TMPDIR=${dir}`, 'sh', '-c', [
          'cd /sys/kernel/tracing',
          "echo 'p:myevent2 do_sys_openat2 path=+0($arg2):ustring path2=+u0($arg2):string' > kprobe_events",
          "echo 'p:myevent vfs_symlink path=+0($arg3):ustring path2=+u0($arg3):string' >> kprobe_events",
          'echo 1 > events/kprobes/enable',
          'echo > /dev/null',
          'ln -s foo $TMPDIR/bar',
          'echo 0 > events/kprobes/enable',
          'grep -c \'myevent2: .* path="/dev/null" path2="/dev/null"$\' trace',
          'grep -c "myevent: .* path=(fault) path2=(fault)$" trace',
          'echo > kprobe_events',
        ].join('; ')],
        env,
      );
      expect(r2.stdout, r2.stderr).toBe('1\n1\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a hist trigger counts the programs a shell runs (sched_process_exec keyed by filename)', async () => {
    const T = 'events/sched/sched_process_exec/trigger';
    const r = await sh(
      [
        `echo 'hist:keys=filename:vals=hitcount' > ${T}`,
        '/bin/true; /bin/true; /bin/true',
        'sleep 0.3',
        `cat ${T}`,
        "grep 'true ' events/sched/sched_process_exec/hist",
        `echo '!hist:keys=filename:vals=hitcount' >> ${T}`,
        `head -1 ${T}`,
      ].join('; '),
    );
    const [line, entry, after] = r.stdout.split('\n');
    expect(line, r.stderr).toBe('hist:keys=filename:vals=hitcount:sort=hitcount:size=2048 [active]');
    // the path as execve() was given it (the watcher saw it), however soon the program was gone
    expect(entry).toBe(`{ filename: ${'/bin/true'.padEnd(50)} } hitcount:          3`);
    expect(after).toBe('# Available triggers:');
  });

  it('while only the scheduler watches (a hist on sched_switch), a process running on its CPU reads cached files natively', async () => {
    const state = join(base, 'state');
    const sock = join(state, readdirSync(state).find((f) => f.endsWith('.sock'))!);
    const nativeOpens = async () => ((await controlRequest(sock, 'load')) as { cachedAnswers: { open?: number } }).cachedAnswers.open ?? 0;
    const T = 'events/sched/sched_switch/trigger';
    // Looked up once (the files are cached from their lookup).
    await sh('cat events/*/*/trigger > /dev/null');
    const before = await nativeOpens();
    const r = await sh(
      [
        `echo 'hist:keys=next_comm' > ${T}`,
        "cat events/*/*/trigger | grep -c '^# Available triggers:'",
        'ls events/*/*/trigger | wc -l',
        "grep -o 'Hits: [0-9]*' events/sched/sched_switch/hist | cut -d' ' -f2",
        `echo '!hist:keys=next_comm' > ${T}`,
      ].join('; '),
    );
    const [defaults, files, hits] = r.stdout.split('\n').map(Number);
    // Every file but sched_switch's shows its default, and the hist counted the switches meanwhile.
    expect(defaults, r.stderr).toBe(files! - 1);
    expect(hits).toBeGreaterThan(0);
    expect((await nativeOpens()) - before).toBeGreaterThan(files! / 2);
  });

  it('a command blocked outside the mount is woken as on a real kernel: cat reading a pipe wakes for each line', async () => {
    const r = await sh(
      [
        `echo 'comm=="cat"' > events/sched/sched_wakeup/filter`,
        'echo 1 > events/sched/sched_wakeup/enable',
        '(sleep 0.3; echo a; sleep 0.3; echo b) | cat > /dev/null',
        'echo 0 > events/sched/sched_wakeup/enable',
        'echo 0 > events/sched/sched_wakeup/filter',
        'grep -c "sched_wakeup: comm=cat" trace',
      ].join('; '),
    );
    // the real kernel shows 3 (each line, then the end of the pipe); once for its exit alone without the sampling
    expect(Number(r.stdout), r.stderr).toBeGreaterThanOrEqual(2);
  });

  it('an eprobe on sys_enter_chdir sees a `cd` into the directory the shell is in (add_remove_eprobe)', async () => {
    const r = await sh(
      [
        "echo 'e:eprobe_chdir syscalls/sys_enter_chdir file=+0($filename):ustring' >> dynamic_events",
        'echo 1 > events/eprobes/eprobe_chdir/enable',
        'cd /sys/kernel/tracing',
        'echo 0 > events/eprobes/eprobe_chdir/enable',
        'grep -o \'eprobe_chdir: .*\' trace',
        "echo '-:eprobe_chdir' >> dynamic_events",
      ].join('; '),
    );
    expect(r.stdout, r.stderr).toBe('eprobe_chdir: (syscalls.sys_enter_chdir) file="/sys/kernel/tracing"\n');
  });

  it('a mount(2) of tracefs or debugfs (libtracefs makes one) binds the emulator\'s, never the host kernel\'s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'e2e-sw-mnt-'));
    try {
      const py = (target: string, type: string) =>
        `python3 -c "import ctypes; l = ctypes.CDLL(None, use_errno=True); r = l.mount(b'nodev', b'${target}', b'${type}', 0, None); print(r, ctypes.get_errno() if r else 0)"`;
      const r = await run(
        ['exec', '--mount', mnt, '--', 'sh', '-c', [
          py('/sys/kernel/tracing', 'tracefs'),
          py(`${dir}`, 'tracefs'),
          py(`${dir}/missing`, 'debugfs'),
          `grep -c '^nodev ${dir} tracefs ' /proc/mounts`,
          `grep -c -E ' (${dir}|/sys/kernel/tracing) fuse' /proc/mounts`,
          `cmp -s ${dir}/available_events /sys/kernel/tracing/available_events && echo same`,
        ].join('; ')],
        env,
      );
      // (on the mount point that has it already: EBUSY, as the kernel refuses the same filesystem there again)
      expect(r.stdout, r.stderr).toBe('-1 16\n0 0\n-1 2\n1\n0\nsame\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!existsSync('/usr/bin/trace-cmd'))('trace-cmd records and reports events of the commands it runs', async () => {
    // (trace-cmd starts its workload without waiting for its per-CPU readers: a workload
    // that ends before they run is lost, here as on a kernel — a slower start gives them time)
    const dir = mkdtempSync(join(tmpdir(), 'e2e-sw-tc-'));
    try {
      const r = await run(
        ['exec', '--mount', mnt, '--', 'sh', '-c', `cd ${dir} && trace-cmd record -e syscalls:sys_enter_openat -e sched:sched_process_exec sh -c 'sleep 0.5; cat /etc/hostname' > /dev/null 2>&1 && trace-cmd report 2>/dev/null`],
        env,
      );
      const lines = r.stdout.split('\n');
      expect(lines.some((l) => /^\s+cat-\d+ +\[\d+\] +[\d.]+: sched_process_exec: +filename=\S*cat pid=\d+ old_pid=\d+$/.test(l)), r.stdout).toBe(true);
      expect(lines.some((l) => /^\s+cat-\d+ .* sys_enter_openat: .*"\/etc\/hostname", flags: O_RDONLY/.test(l)), r.stdout).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!existsSync('/usr/bin/perf'))('perf ftrace (TRACEFS_PATH) traces the functions its workload runs, and ends with it', async () => {
    const r = await run(['exec', '--mount', mnt, '--', 'env', 'TRACEFS_PATH=/sys/kernel/tracing', 'perf', 'ftrace', '-T', 'do_sys_openat2', '--', 'cat', '/etc/hostname'], env);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n').filter((l) => l.includes('do_sys_openat2'));
    expect(lines.length, r.stdout).toBeGreaterThan(0);
    expect(lines.every((l) => /^\s+cat-\d+ +\[\d+\] +[\d.]+: do_sys_openat2 <-__x64_sys_openat$/.test(l)), r.stdout).toBe(true);
  });

  it.skipIf(!existsSync('/usr/sbin/kprobe-perf'))('perf-tools\' kprobe sees the opens of a command run meanwhile', async () => {
    // (perf ftrace leaves tracing off when it ends, as on a real kernel)
    const r = await run(
      ['exec', '--mount', mnt, '--', 'sh', '-c', "echo 1 > /sys/kernel/tracing/tracing_on; (sleep 1; cat /etc/hostname > /dev/null) & kprobe-perf -d 2 'p:do_sys_openat2 file=+0(%si):ustring'"],
      env,
    );
    expect(r.stdout, r.stderr).toMatch(/^\s+cat-\d+ +\[\d+\] +(\S{5} +)?[\d.]+: do_sys_openat2: \(do_sys_openat2\+0x[0-9a-f]+\/0x[0-9a-f]+\) file="\/etc\/hostname"$/m);
  });

  it('--no-watch leaves the calls outside the mount unseen', async () => {
    const r = await sh(
      ['echo > trace', 'echo 1 > events/syscalls/sys_enter_chdir/enable', 'cd /sys/kernel/tracing', 'echo 0 > events/syscalls/sys_enter_chdir/enable', 'grep -c sys_chdir trace'].join('; '),
      ['--no-watch'],
    );
    expect(r.stdout.trim()).toBe('0');
  });
});

describe.skipIf(!!skipMount)(`the lives of processes under exec${skipMount ? ` (skipped: ${skipMount})` : ''}`, () => {
  let base: string;
  let env: NodeJS.ProcessEnv;
  const mnts: string[] = [];

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'e2e-lives-'));
    env = { ...process.env, TRACEFS_EMU_STATE_DIR: join(base, 'state') };
  });

  afterAll(async () => {
    for (const m of mnts) await run(['unmount', m], env);
    rmSync(base, { recursive: true, force: true });
  });

  /** `lines` run by sh under exec on `mnt`, in the tracing directory. */
  const shIn = (mnt: string, lines: string[]) => run(['exec', '--mount', mnt, '--', 'sh', '-c', ['cd /sys/kernel/tracing', ...lines].join('; ')], env);

  const mount = async (name: string, options: string[]): Promise<string> => {
    const mnt = join(base, name);
    const r = await run(['mount', mnt, '--daemon', ...options], env);
    expect(r.code, r.stderr).toBe(0);
    mnts.push(mnt);
    return mnt;
  };

  it("a child's exit is in the trace before its parent's wait returns, without the proc connector's word for it", async () => {
    // Without the proc connector, only the watcher can say it in time (the exit check runs once a second).
    const mnt = await mount('no-connector', ['--no-proc-events']);
    const T = 'events/sched/sched_process_exit/trigger';
    const r = await shIn(mnt, [
      `echo 'hist:keys=pid' > ${T}`,
      'bad=0; i=0',
      'while [ $i -lt 20 ]; do ( exit 3 ) & p=$!; wait $p; grep -q "{ pid: *$p }" events/sched/sched_process_exit/hist || bad=$((bad+1)); i=$((i+1)); done',
      'echo $bad',
      `echo '!hist:keys=pid' > ${T}`,
    ]);
    expect(r.stdout, r.stderr).toBe('0\n');
  });

  it("with --processes exec, the machine's other processes fork in no trace; those under exec do", async () => {
    const mnt = await mount('exec-only', ['--processes', 'exec']);
    const outsider = join(base, 'outsider');
    await new Promise((ok) => execFile('cp', ['/bin/sh', outsider], ok));
    const r = await shIn(mnt, [
      'echo 1 > events/sched/sched_process_fork/enable',
      `${outsider} -c '/bin/true; /bin/true; /bin/true' & wait $!`,
      '/bin/true; /bin/true',
      'echo 0 > events/sched/sched_process_fork/enable',
      'grep -c "sched_process_fork: comm=outsider" trace',
      'grep -c "sched_process_fork: comm=sh pid=$$ " trace',
    ]);
    // (The outsider is run from under exec here, so it is watched: its forks are there.)
    expect(r.stdout, r.stderr).toBe('3\n3\n');
    // Started outside exec, its forks are not.
    expect((await shIn(mnt, ['echo 1 > events/sched/sched_process_fork/enable'])).code).toBe(0);
    await new Promise((ok) => execFile(outsider, ['-c', '/bin/true; /bin/true; /bin/true'], ok));
    const after = await shIn(mnt, ['echo 0 > events/sched/sched_process_fork/enable', 'grep -c "sched_process_fork: comm=outsider" trace']);
    expect(after.stdout, after.stderr).toBe('3\n');
  });
});
