/**
 * System calls made outside the mount by processes `tracefs-emu exec` watches
 * (native/seccomp/syscall_watch.c reports them; host_syscalls.ts runs them):
 * the syscalls/* events, kprobes on the functions of their call trees with
 * the user's strings, eprobes on them, the file's objects for %pD — as the
 * selftests kprobe_args_user.tc, add_remove_eprobe.tc and
 * event-filter-function.tc see them on a real kernel.
 */
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HostDriver } from '../../src/host/driver.js';
import { hostEventLine } from '../../src/host/events.js';
import { ObserveLevel } from '../../src/host/observe_switch.js';
import { parseHostSyscall } from '../../src/host/syscalls.js';
import { O_RDONLY } from '../../src/tracefs/node.js';
import { Tracefs } from '../../src/tracefs/tracefs.js';
import { kernelEmu } from '../helpers/kernel.js';
import { echo, traceLines } from '../helpers/tracefs.js';
import { profileOf, SERIES } from '../../src/kernel/series.js';

const SH = { pid: 4321, uid: 0, gid: 0 };

/** A watcher line, as syscall_watch writes it. */
function line(o: { pid?: number; nr: number; ret: number; args?: bigint[]; dev?: string; ino?: number; mode?: number; s0?: string; s1?: string; abs?: string; comm?: string }): string {
  const a = [...(o.args ?? []), 0n, 0n, 0n, 0n, 0n, 0n].slice(0, 6).map((x) => BigInt.asUintN(64, x).toString(16));
  return `S ${o.pid ?? SH.pid} ${o.nr} ${o.ret} ${a.join(' ')} ${o.dev ?? '0:0'} ${o.ino ?? 0} ${(o.mode ?? 0).toString(8)}\t${o.s0 ?? ''}\t${o.s1 ?? ''}\t${o.abs ?? o.s0 ?? ''}\t${o.comm ?? 'sh'}`;
}

/** AT_FDCWD as glibc leaves it in the register (zero-extended), which the watcher reports. */
const AT_FDCWD = 0xffffff9cn;
const devNull = (ret = 3) => line({ nr: 257, ret, args: [AT_FDCWD, 0x7ffc0000n, 0o1101n, 0o666n], dev: '0:6', ino: 4, mode: 0o20666, s0: '/dev/null' });

describe('the watcher\'s lines', () => {
  it('carry the call, its predicted result, the file and the paths (escaped)', () => {
    const r = parseHostSyscall('S 4707 257 3 ffffff9c 563cc7e971e0 241 1b6 7f4536419c70 1 0:6 3 20666 4700\t/dev/null\t\t/dev/null\tsh')!;
    expect(r).toMatchObject({ pid: 4707, nr: 257, ret: 3, file: { dev: '0:6', ino: 3, mode: 0o20666 }, path: '/dev/null', path2: '', abs: '/dev/null', comm: 'sh', ppid: 4700 });
    expect(r.args[0]).toBe(0xffffff9cn);
    expect(r.args[2]).toBe(0o1101n);
    const s = parseHostSyscall('S 1 266 -17 0 ffffff9c 0 0 0 0 0:0 0 0\ta\\011b\tdir\\134x\t/tmp/dir\\134x')!;
    expect(s).toMatchObject({ nr: 266, ret: -17, file: undefined, path: 'a\tb', path2: 'dir\\x', abs: '/tmp/dir\\x', ppid: 0 });
    expect(parseHostSyscall('F 1 2 2 3 3')).toBeUndefined();
  });
});

describe.each(SERIES)('watched system calls outside the mount (%s)', (series) => {
  function setup() {
    const e = kernelEmu({ series });
    e.proc.set({ pid: SH.pid, comm: 'sh', ppid: 1, startTime: 1, cwd: '/sys/kernel/tracing' });
    const w = (path: string, text: string, append = false) => echo(e.fs, path, text, append, SH);
    const lines = async () => traceLines(await e.fs.readFile('trace', SH));
    const report = (l: string) => hostEventLine({ mirror: e.host.mirror, syscalls: e.host.syscalls, traced: e.host.traced, observed: () => ObserveLevel.Nothing }, l);
    return { ...e, w, lines, report };
  }

  it('an open of /dev/null fires sys_enter_openat with the path and sys_exit_openat with the fd', async () => {
    const { w, lines, report } = setup();
    await w('events/syscalls/sys_enter_openat/enable', '1');
    await w('events/syscalls/sys_exit_openat/enable', '1');
    report(devNull(3));
    report(line({ nr: 257, ret: -2, args: [AT_FDCWD, 0x7ffc0000n, 0n, 0n], s0: 'missing', abs: '/tmp/missing' }));
    await w('events/syscalls/sys_enter_openat/enable', '0');
    await w('events/syscalls/sys_exit_openat/enable', '0');
    // (the shell's own opens of tracefs files, through the mount, are there too)
    const got = (await lines()).filter((l) => / sh-4321 .*sys_openat/.test(l)).map((l) => l.replace(/^.*: sys_openat/, 'sys_openat'));
    const at = (re: RegExp) => got.findIndex((l) => re.test(l));
    if (profileOf(series).syscallUserData) {
      const i = at(/"\/dev\/null"/);
      // (as the real kernel prints AT_FDCWD from a glibc program)
      expect(got[i]).toMatch(/^sys_openat\(dfd: 4294967196, filename: \d+ "\/dev\/null", flags: O_WRONLY\|O_CREAT\|O_TRUNC, mode: 0666\)$/);
      expect(got[i + 1]).toBe('sys_openat -> 0x3');
      const j = at(/"missing"/);
      expect(got[j]).toMatch(/filename: \S+ "missing", flags: O_RDONLY\)$/);
      expect(got[j + 1]).toBe('sys_openat -> 0xfffffffffffffffe');
    } else {
      // 6.12 prints the raw arguments
      const i = at(/^sys_openat\(dfd: ffffff9c, filename: [0-9a-f]+, flags: 241, mode: 1b6\)$/);
      expect(i).toBeGreaterThanOrEqual(0);
      expect(got[i + 1]).toBe('sys_openat -> 0x3');
      expect(got[i + 3]).toBe('sys_openat -> 0xfffffffffffffffe');
    }
  });

  it('kprobes see the user string on do_sys_openat2 and fault on vfs_symlink\'s kernel pointer (kprobe_args_user)', async () => {
    const { w, lines, report } = setup();
    await w('kprobe_events', 'p:myevent2 do_sys_openat2 path=+0($arg2):ustring path2=+u0($arg2):string\n');
    await w('kprobe_events', 'p:myevent vfs_symlink path=+0($arg3):ustring path2=+u0($arg3):string\n', true);
    await w('kprobe_events', 'r:myret do_sys_openat2 ret=$retval\n', true);
    await w('events/kprobes/enable', '1');
    report(devNull(5));
    report(line({ pid: SH.pid, nr: 266, ret: 0, args: [0x7ffc0000n, AT_FDCWD, 0x7ffc0010n], s0: 'foo', s1: '/tmp/bar', abs: '/tmp/bar' }));
    await w('events/kprobes/enable', '0');
    const got = await lines();
    expect(got.some((l) => /myevent2: \(do_sys_openat2\+0x[0-9a-f]+\/0x[0-9a-f]+\) path="\/dev\/null" path2="\/dev\/null"$/.test(l))).toBe(true);
    expect(got.some((l) => /myret: \(\S+ <- do_sys_openat2\) ret=5$/.test(l))).toBe(true);
    expect(got.filter((l) => l.includes('myevent: '))).toHaveLength(1);
    expect(got.find((l) => l.includes('myevent: '))).toMatch(/ sh-4321 .*myevent: \(vfs_symlink\+0x[0-9a-f]+\/0x[0-9a-f]+\) path=\(fault\) path2=\(fault\)$/);
  });

  it('the opened file is a real one to the probes: vfs_open\'s file prints as its name, chrdev_open runs for a device', async () => {
    const { w, lines, report } = setup();
    await w('kprobe_events', 'p:vo vfs_open f=$arg2:%pD\n');
    await w('events/kprobes/enable', '1');
    await w('set_ftrace_filter', 'chrdev_open');
    await w('current_tracer', 'function');
    report(devNull());
    await w('events/kprobes/enable', '0');
    await w('tracing_on', '0');
    const got = await lines();
    await w('current_tracer', 'nop');
    expect(got.some((l) => / sh-4321 .* vo: \(vfs_open\+0x[0-9a-f]+\/0x[0-9a-f]+\) f="null"$/.test(l))).toBe(true);
    expect(got.some((l) => / sh-4321 .* chrdev_open <-do_dentry_open$/.test(l))).toBe(true);
  });

  it('a chdir into the directory the shell is in is seen (add_remove_eprobe), and a watched shell\'s chdir is never inferred twice', async () => {
    const { w, lines, report, proc, fs } = setup();
    await w('dynamic_events', 'e:eprobe_chdir syscalls/sys_enter_chdir file=+0($filename):ustring\n');
    await fs.readFile('README', SH); // the shell's cwd is known: /sys/kernel/tracing
    await w('events/eprobes/eprobe_chdir/enable', '1');
    report(line({ nr: 80, ret: 0, args: [0x7ffc0000n], s0: '/sys/kernel/tracing' }));
    report(line({ nr: 80, ret: 0, args: [0x7ffc0000n], dev: '254:1', ino: 2, mode: 0o41777, s0: '/tmp' }));
    proc.set({ pid: SH.pid, comm: 'sh', ppid: 1, startTime: 1, cwd: '/tmp' });
    await fs.readFile('README', SH);
    await w('events/eprobes/eprobe_chdir/enable', '0');
    const got = (await lines()).filter((l) => l.includes('eprobe_chdir:'));
    expect(got.map((l) => l.replace(/^.*eprobe_chdir: /, ''))).toEqual(['(syscalls.sys_enter_chdir) file="/sys/kernel/tracing"', '(syscalls.sys_enter_chdir) file="/tmp"']);
  });

  it('calls arrive in the order they were made: a child forked, exec\'d, opened a file and exited', async () => {
    const { w, lines, report } = setup();
    await w('events/syscalls/sys_enter_openat/filter', 'filename.ustring ~ "*ftracetest-dir*"');
    await w('events/syscalls/sys_enter_openat/enable', '1');
    // `ls $TMPDIR` (event-filter-function.tc): gone from /proc by the time its lines are read.
    report(`F 1 ${SH.pid} ${SH.pid} 4400 4400`);
    report('E 1 4400 4400 ls\t/usr/bin/ls');
    report(line({ pid: 4400, nr: 257, ret: 3, args: [AT_FDCWD, 0x5000n, 0o2204000n], dev: '254:1', ino: 9, mode: 0o40700, s0: '/tmp/ftracetest-dir.abc', abs: '/tmp/ftracetest-dir.abc', comm: 'ls' }));
    report(line({ pid: 4400, nr: 257, ret: 3, args: [AT_FDCWD, 0x5000n, 0o2000000n], dev: '254:1', ino: 9, mode: 0o100644, s0: '/etc/ld.so.cache', comm: 'ls' }));
    report('X 1 4400 4400 0');
    await w('events/syscalls/sys_enter_openat/enable', '0');
    const got = (await lines()).filter((l) => l.includes('sys_openat('));
    expect(got).toHaveLength(1);
    expect(got[0]).toMatch(profileOf(series).syscallUserData ? /^\s+ls-4400 .*sys_openat\(.*"\/tmp\/ftracetest-dir\.abc", flags: O_RDONLY\|O_NONBLOCK\|O_DIRECTORY\|O_CLOEXEC, mode: 0000\)$/ : /^\s+ls-4400 .*sys_openat\(dfd: ffffff9c, filename: [0-9a-f]+, flags: 90800, mode: 0\)$/);
  });

  it("an exec the proc connector reports late is taken from the watcher's comm (perf ftrace's perf-exec becomes cat)", async () => {
    const { w, lines, report } = setup();
    await w('events/syscalls/sys_enter_openat/enable', '1');
    report(`F 1 ${SH.pid} ${SH.pid} 4700 4700`);
    // perf's child runs as perf-exec until it execs the workload; the exec line is still in the helper when cat's opens come
    report(line({ pid: 4700, nr: 59, ret: 0, s0: '/usr/bin/cat', abs: '/usr/bin/cat', comm: 'perf-exec' }));
    report(line({ pid: 4700, nr: 257, ret: 3, args: [AT_FDCWD, 0x5000n, 0o2000000n], dev: '254:1', ino: 9, mode: 0o100644, s0: '/etc/hostname', comm: 'cat' }));
    report('E 1 4700 4700 cat\t/usr/bin/cat');
    report('X 1 4700 4700 0');
    await w('events/syscalls/sys_enter_openat/enable', '0');
    const got = (await lines()).filter((l) => l.includes('sys_openat(') && l.includes('-4700 '));
    expect(got).toHaveLength(1);
    expect(got[0]).toMatch(/^\s+cat-4700 /);
  });

  it('a process gone before the daemon read of it keeps its name: from the watcher, or the file it ran', async () => {
    const { w, lines, report } = setup();
    await w('events/syscalls/sys_enter_chdir/enable', '1');
    await w('events/sched/sched_process_exec/enable', '1');
    // the watcher's comm for a pid that never showed in /proc (its fork not reported yet)
    report(line({ pid: 4500, nr: 80, ret: 0, args: [0x7ffc0000n], s0: '/tmp', comm: 'make' }));
    // an exec whose comm the proc connector's helper could not read any more
    report(`F 1 ${SH.pid} ${SH.pid} 4501 4501`);
    report('E 1 4501 4501 \t/usr/bin/true');
    await w('events/sched/sched_process_exec/enable', '0');
    await w('events/syscalls/sys_enter_chdir/enable', '0');
    const got = await lines();
    expect(got.some((l) => /^\s+make-4500 .*sys_chdir\(/.test(l))).toBe(true);
    expect(got.some((l) => /^\s+true-4501 .*sched_process_exec: filename=\/usr\/bin\/true pid=4501 old_pid=4501$/.test(l))).toBe(true);
  });

  it('an exec runs the path its execve() was given, even when the program is gone before /proc could tell', async () => {
    const { w, lines, report } = setup();
    await w('events/sched/sched_process_exec/enable', '1');
    report(`F 1 ${SH.pid} ${SH.pid} 4601 4601`);
    // the watcher saw execve("/bin/true") (predicted to succeed); the connector's helper found argv[0] gone
    report(line({ pid: 4601, nr: 59, ret: 0, s0: '/bin/true', abs: '/bin/true', comm: 'sh' }));
    report('E 1 4601 4601 \t');
    // a failed execve() names nothing: the exec that follows is of what the connector says
    report(`F 1 ${SH.pid} ${SH.pid} 4602 4602`);
    report(line({ pid: 4602, nr: 59, ret: -2, s0: '/usr/local/bin/ls', abs: '/usr/local/bin/ls', comm: 'sh' }));
    report('E 1 4602 4602 ls\t/usr/bin/ls');
    await w('events/sched/sched_process_exec/enable', '0');
    const got = (await lines()).filter((l) => l.includes('sched_process_exec'));
    expect(got.map((l) => l.replace(/^\s+(\S+) .*: /, '$1 '))).toEqual([
      'true-4601 filename=/bin/true pid=4601 old_pid=4601',
      'ls-4602 filename=/usr/bin/ls pid=4602 old_pid=4602',
    ]);
  });

  it('a watched shell\'s children are watched: their chdir()s are reported, never inferred from a changed cwd', async () => {
    const { k, host, w, lines, report, proc, fs } = setup();
    const CHILD = { pid: 4402, uid: 0, gid: 0 };
    report(devNull());
    proc.set({ pid: CHILD.pid, comm: 'sh', ppid: SH.pid, startTime: 2, cwd: '/sys/kernel/tracing' });
    report(`F 1 ${SH.pid} ${SH.pid} ${CHILD.pid} ${CHILD.pid}`);
    expect(host.mirror.watched(k.tasks.process(CHILD.pid)!)).toBe(true);
    await w('events/syscalls/sys_enter_chdir/enable', '1');
    await fs.readFile('README', CHILD);
    proc.set({ pid: CHILD.pid, comm: 'sh', ppid: SH.pid, startTime: 2, cwd: '/sys/kernel/tracing/events' });
    await fs.readFile('README', CHILD);
    await w('events/syscalls/sys_enter_chdir/enable', '0');
    expect((await lines()).filter((l) => l.includes('sys_chdir('))).toEqual([]);
  });
});

describe('the order of a release and what the machine reported meanwhile', () => {
  it("a trace reader's close is not overtaken by the calls reported while FUSE's release was on its way (pause-on-trace)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tfe-order-'));
    const fifo = join(dir, 'events');
    const e = kernelEmu();
    const host = new HostDriver(e.kernel, { proc: e.proc, eventsFifo: fifo });
    // the emulator's requests map their callers through this driver, as the daemon's do
    const fs = new Tracefs(e.fs.root, e.kernel, e.fs.sb, host.taskOf);
    host.start();
    const writer = openSync(fifo, constants.O_WRONLY);
    try {
      e.proc.set({ pid: SH.pid, comm: 'sh', ppid: 1, startTime: 1, cwd: '/sys/kernel/tracing' });
      const w = (path: string, text: string) => echo(fs, path, text, false, SH);
      await w('options/pause-on-trace', '1');
      await w('events/syscalls/sys_enter_openat/enable', '1');
      const grep = await fs.open('trace', O_RDONLY, { pid: 4400, uid: 0, gid: 0 });
      await grep.read(65536, 0);
      // grep has closed trace and exited, ls opened a file; FUSE's RELEASE of grep's trace comes only now
      writeSync(writer, line({ pid: 4401, nr: 257, ret: 3, args: [AT_FDCWD, 0x5000n, 0o2204000n], dev: '254:1', ino: 9, mode: 0o40700, s0: '/tmp/dir', abs: '/tmp/dir', comm: 'ls' }) + '\n');
      grep.release();
      await w('tracing_on', '0');
      const got = traceLines(await fs.readFile('trace', SH)).filter((l) => l.includes('ls-4401'));
      expect(got).toHaveLength(1);
    } finally {
      closeSync(writer);
      host.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
