/**
 * `tracefs-emu exec` against a real daemon mount: inside, the emulator is
 * the only tracefs, at the standard paths, with its debugfs and helpers.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO, execUnavailable } from '../helpers/e2e.js';

const skip = execUnavailable();

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      ok({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

describe.skipIf(!!skip)(`tracefs-emu exec${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let base: string;
  let mnt: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'e2e-exec-'));
    mnt = join(base, 'mnt');
    env = { ...process.env, TRACEFS_EMU_STATE_DIR: join(base, 'state') };
    const r = await run(['mount', mnt, '--daemon'], env);
    expect(r.code, r.stderr).toBe(0);
  });

  afterAll(async () => {
    await run(['unmount', mnt], env);
    rmSync(base, { recursive: true, force: true });
  });

  it('shows the emulator as the first tracefs, at /sys/kernel/tracing, and its kallsyms', async () => {
    const r = await run(
      ['exec', '--mount', mnt, '--', 'sh', '-c', 'grep tracefs /proc/mounts | cut -f2 -d" " | head -1; cat /sys/kernel/tracing/tracing_on; head -1 /proc/kallsyms'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    const [first, tracingOn, kallsyms] = r.stdout.split('\n');
    expect(first).toBe('/sys/kernel/tracing');
    expect(tracingOn).toBe('1');
    // The daemon's symbol view when it has one; else (no kernel symbols yet) the namespace says so.
    const info = await run(['ctl', '--dir', mnt, 'namespace'], env);
    const view = /"\/proc\/kallsyms":\s*"([^"]+)"/.exec(info.stdout)?.[1];
    if (view) expect(kallsyms).toBe(readFileSync(view, 'latin1').split('\n', 1)[0]);
    else expect(r.stderr).toMatch(/no symbol view/);
  });

  it('shows a given symbol view at /proc/kallsyms', async () => {
    const f = join(base, 'kallsyms');
    writeFileSync(f, 'ffffffff9c000000 T _stext\nffffffff9c000010 T emu_fn\n');
    const r = await run(['exec', '--mount', mnt, '--kallsyms', f, '--', 'sh', '-c', 'head -1 /proc/kallsyms; grep -c . /proc/kallsyms'], env);
    expect(r.stdout).toBe('ffffffff9c000000 T _stext\n2\n');
  });

  it('serves the debugfs at /sys/kernel/debug and the tracefs again at /sys/kernel/debug/tracing', async () => {
    const r = await run(
      ['exec', '--mount', mnt, '--', 'sh', '-c', 'stat -c "%a %n" /sys/kernel/debug /sys/kernel/debug/kprobes/list /sys/kernel/debug/kprobes/enabled; cat /sys/kernel/debug/kprobes/enabled; cat /sys/kernel/debug/tracing/tracing_on; grep -c tracefs /proc/mounts'],
      env,
    );
    expect(r.stdout).toBe('700 /sys/kernel/debug\n400 /sys/kernel/debug/kprobes/list\n600 /sys/kernel/debug/kprobes/enabled\n1\n1\n2\n');
  });

  it('carries mount -o remount,gid=N to the daemon, and keeps the host kernel out of reach', async () => {
    const host = readFileSync('/proc/sys/kernel/sched_rt_runtime_us', 'utf8');
    const r = await run(
      [
        'exec', '--mount', mnt, '--', 'sh', '-c',
        'mount -o remount,gid=61 /sys/kernel/tracing && stat -c %g /sys/kernel/tracing; ' +
          'grep " /sys/kernel/tracing " /proc/mounts; grep " /sys/kernel/tracing " /proc/self/mountinfo | sed "s/.* - //"; ' +
          'mount -t tracefs -o remount,gid=0 nodev /sys/kernel/tracing && stat -c %g /sys/kernel/tracing; ' +
          'grep " /sys/kernel/tracing " /proc/mounts; ' +
          'echo -1 > /proc/sys/kernel/sched_rt_runtime_us; cat /proc/sys/kernel/sched_rt_runtime_us; ' +
          'modprobe no-such-module; echo modprobe=$?; awk "BEGIN { print strtonum(\\"0x10\\") }"',
      ],
      env,
    );
    // The mount tables show the tracefs's own options after a remount, as tracefs_show_options prints them.
    expect(r.stdout).toBe(
      '61\ntracefs /sys/kernel/tracing tracefs rw,nosuid,nodev,noexec,relatime,gid=61 0 0\ntracefs tracefs rw,gid=61\n' +
        '0\ntracefs /sys/kernel/tracing tracefs rw,nosuid,nodev,noexec,relatime 0 0\n-1\nmodprobe=1\n16\n',
    );
    expect(r.stderr).toMatch(/modprobe: FATAL: Module no-such-module not found in directory \/lib\/modules\//);
    expect(readFileSync('/proc/sys/kernel/sched_rt_runtime_us', 'utf8')).toBe(host);
  });

  it('loads and unloads the sample modules into the emulated kernel', async () => {
    const r = await run(
      [
        'exec', '--mount', mnt, '--', 'sh', '-c',
        'modprobe trace-events-sample && lsmod && grep -c "foo_bar_reg\t\\[trace_events_sample\\]" /proc/kallsyms && ' +
          'head -2 /sys/kernel/tracing/events/sample-trace/foo_bar/format && rmmod trace_events_sample && ' +
          'test ! -e /sys/kernel/tracing/events/sample-trace && rmmod trace_events_sample; echo rmmod=$?',
      ],
      env,
    );
    expect(r.stdout).toMatch(/^Module {18}Size {2}Used by\ntrace_events_sample +\d+ {2}0\n1\nname: foo_bar\nID: \d+\nrmmod=1\n$/);
    expect(r.stderr).toMatch(/rmmod: ERROR: Module trace_events_sample is not currently loaded/);
  });

  it('gives remote_test its trace remote: write_event records on the writer CPU, trace_pipe consumes, the module stays', async () => {
    const cpu = availableParallelism() - 1;
    const r = await run(
      [
        'exec', '--mount', mnt, '--', 'sh', '-c',
        'modprobe remote_test && cd /sys/kernel/tracing/remotes/test && cat buffer_size_kb && echo 1 > events/test/selftest/enable && ' +
          `echo 1 > tracing_on && taskset -c ${cpu} echo 42 > write_event && cat buffer_size_kb && cat per_cpu/cpu${cpu}/trace && ` +
          'timeout 1 cat trace_pipe; echo 0 > tracing_on; cat buffer_size_kb; /bin/echo 1 > write_event; echo write=$?; rmmod remote_test; echo rmmod=$?',
      ],
      env,
    );
    const at = String(cpu).padStart(3, '0');
    expect(r.stdout).toMatch(new RegExp(`^7 \\(unloaded\\)\n7 \\(loaded\\)\n\\[${at}\\]\t +\\d+\\.\\d{6}: selftest id=42\n\\[${at}\\]\t +\\d+\\.\\d{6}: selftest id=42\n7 \\(unloaded\\)\nwrite=1\nrmmod=1\n$`));
    expect(r.stderr).toMatch(/echo: write error: No such device/);
    expect(r.stderr).toMatch(/rmmod: ERROR: Module remote_test is in use/);
  });

  it('records a write in the task that makes it: a child writing to the marker its shell opened', async () => {
    const r = await run(
      ['exec', '--mount', mnt, '--', 'sh', '-c', 'cd /sys/kernel/tracing; echo > trace; exec 3>trace_marker; /bin/echo from-child >&3; echo from-shell >&3; echo "sh=$$"; grep -v "^#" trace'],
      env,
    );
    const sh = /sh=(\d+)/.exec(r.stdout)?.[1];
    expect(r.stdout).toMatch(/^\s+echo-(\d+)\s+\[\d+\] \S+\s+[\d.]+: tracing_mark_write: from-child$/m);
    expect(r.stdout).toMatch(new RegExp(`^\\s+sh-${sh}\\s+\\[\\d+\\] \\S+\\s+[\\d.]+: tracing_mark_write: from-shell$`, 'm'));
  });

  it("names the command's process after its starter until it execs, never after the watcher", async () => {
    const on = await run(['exec', '--mount', mnt, '--', 'sh', '-c', 'cd /sys/kernel/tracing; echo > trace; echo 1 > events/raw_syscalls/sys_enter/enable; echo 1 > events/sched/enable'], env);
    expect(on.code, on.stderr).toBe(0);
    // Traced from its first call: the process before its execve, the watcher's fork, the exec.
    const r = await run(['exec', '--mount', mnt, '--', 'sh', '-c', 'cd /sys/kernel/tracing; echo 0 > tracing_on; echo "pid=$$"; grep -v "^#" trace; echo 0 > events/enable'], env);
    expect(r.code, r.stderr).toBe(0);
    // (the machine's other processes, other tests' watchers among them, are in the trace too: only this command's are checked)
    const pid = /^pid=(\d+)$/m.exec(r.stdout)![1];
    const mine = r.stdout.split('\n').filter((l) => new RegExp(`^\\s*\\S+-${pid}\\s`).test(l));
    expect(mine.some((l) => new RegExp(`sched_process_exec: filename=\\S*/sh pid=${pid} `).test(l)), r.stdout.slice(0, 3000)).toBe(true);
    expect(mine.filter((l) => /syscall_watch/.test(l))).toEqual([]);
  });

  it("a failed write to dynamic_events fails with the kernel's errno; dash's echo says `I/O error` for any, as on the kernel", async () => {
    // The script the real 7.2 kernel ran (test/fixtures/kernel-7.2/samples/sh.dynamic_events-write-errors.txt).
    const script = join(base, 'dynerr.sh');
    writeFileSync(
      script,
      [
        'echo "p:kp vfs_read" >> dynamic_events; echo 1 > events/kprobes/kp/enable',
        'echo > dynamic_events; echo rc=$?',
        'echo "-:nonexist" >> dynamic_events; echo rc=$?',
        'echo "-:kp" >> dynamic_events; echo rc=$?',
        'echo 0 > events/kprobes/kp/enable',
        'echo > dynamic_events; echo rc=$?',
        'cat dynamic_events; echo end',
        '',
      ].join('\n'),
    );
    const kernel = readFileSync(join(REPO, 'test/fixtures/kernel-7.2/samples/sh.dynamic_events-write-errors.txt'), 'utf8');
    const r = await run(['exec', '--mount', mnt, '--', 'sh', '-c', `cd /sys/kernel/tracing && sh ${script} 2>&1`], env);
    expect(r.stdout.replaceAll(script, '/oracle/cmd.sh')).toBe(kernel);
    // What dash's `I/O error` hid: the errnos themselves.
    const errnos = join(base, 'dynerr.py');
    writeFileSync(
      errnos,
      [
        'import os',
        'def w(s):',
        '    fd = os.open("/sys/kernel/tracing/dynamic_events", os.O_WRONLY | os.O_APPEND)',
        '    try: os.write(fd, s); print("ok")',
        '    except OSError as e: print(os.strerror(e.errno))',
        '    finally: os.close(fd)',
        'def enable(v): open("/sys/kernel/tracing/events/kprobes/kp/enable", "w").write(v)',
        'w(b"p:kp vfs_read\\n"); enable("1")',
        'w(b"-:nonexist\\n"); w(b"-:kp\\n")',
        'enable("0"); w(b"-:kp\\n")',
        '',
      ].join('\n'),
    );
    const py = await run(['exec', '--mount', mnt, '--', 'python3', errnos], env);
    expect(py.stdout).toBe('ok\nNo such file or directory\nDevice or resource busy\nok\n');
  });

  it('returns the command status', async () => {
    expect((await run(['exec', '--mount', mnt, '--', 'sh', '-c', 'exit 7'], env)).code).toBe(7);
  });
});
