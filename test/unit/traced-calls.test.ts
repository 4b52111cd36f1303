/**
 * Every other system call of a watched process (the watcher traces them
 * while the kernel can see system calls: `T` lines, traced_calls.ts): each
 * runs in the caller's task with its events and the real kernel's path.
 */
import { describe, expect, it } from 'vitest';
import { hostEventLine } from '../../src/host/events.js';
import { ObserveLevel } from '../../src/host/observe_switch.js';
import { parseTracedCall } from '../../src/host/traced_calls.js';
import { SERIES } from '../../src/kernel/series.js';
import { SYSCALL_NR } from '../../src/kernel/syscall_nr.js';
import { kernelEmu, recordEvents } from '../helpers/kernel.js';
import { echo, traceLines } from '../helpers/tracefs.js';

const SH = { pid: 4321, uid: 0, gid: 0 };

/** A traced call, as syscall_watch writes it. */
function tline(nr: number, ret: bigint | number, args: bigint[] = [], file = '', pid = SH.pid, comm = 'sh'): string {
  const a = [...args, 0n, 0n, 0n, 0n, 0n, 0n].slice(0, 6).map((x) => BigInt.asUintN(64, x).toString(16));
  return `T ${pid} ${nr} ${ret} ${a.join(' ')} 1\t${file}\t${comm}`;
}

describe('traced calls\' lines', () => {
  it('carry the call, its result, the file and the comm', () => {
    const r = parseTracedCall('T 77 0 832 3 7ffd1000 340 0 0 0 70\t/usr/lib/x86_64-linux-gnu/libc.so.6\tcat')!;
    expect(r).toMatchObject({ pid: 77, nr: 0, ret: 832n, ppid: 70, file: '/usr/lib/x86_64-linux-gnu/libc.so.6', comm: 'cat' });
    expect(r.args.slice(0, 3)).toEqual([3n, 0x7ffd1000n, 0x340n]);
    expect(parseTracedCall('T 77 9 -12 0 0 0 0 0 0 70\t\tcat')!.ret).toBe(-12n);
    expect(parseTracedCall('C 1 2 0 comm')).toBeUndefined();
  });

  it('of a call that may block carry how long it slept, and then the priority and policy the caller had', () => {
    expect(parseTracedCall('T 77 230 0 0 0 7ffd20 0 0 0 70 100112413 -11 1\t\tsleep')).toMatchObject({ nr: 230, sleptNs: 100112413, sched: { priority: -11, policy: 1 } });
    const quick = parseTracedCall('T 77 0 3 0 7ffd20 10 0 0 0 70 0\tpipe:[9]\tcat')!;
    expect([quick.sleptNs, quick.sched]).toEqual([0, undefined]);
    const untimed = parseTracedCall('T 77 9 -12 0 0 0 0 0 0 70 -1\t\tcat')!;
    expect([untimed.sleptNs, untimed.sched]).toEqual([undefined, undefined]);
  });

  it('carry the user memory the call used: where, and its bytes (NULs and all)', () => {
    const r = parseTracedCall('T 77 1 6 1 55d0c0de1000 6 0 0 0 70	/dev/null	sh	55d0c0de1000 hello\\012')!;
    expect(r.user).toEqual({ addr: 0x55d0c0de1000n, bytes: Buffer.from('hello\n') });
    expect(parseTracedCall('T 77 257 3 ffffff9c 7ffd20 0 0 0 0 70	/etc/passwd	cat	7ffd20 /etc/passwd\\000')!.user!.bytes).toEqual(Buffer.from('/etc/passwd\0'));
    expect(parseTracedCall('T 77 9 -12 0 0 0 0 0 0 70		cat')!.user).toBeUndefined();
  });
});

describe.each(SERIES)('traced calls (%s)', (series) => {
  function setup() {
    const e = kernelEmu({ series });
    e.proc.set({ pid: SH.pid, comm: 'sh', ppid: 1, startTime: 1, cwd: '/' });
    const w = (path: string, text: string) => echo(e.fs, path, text, false, SH);
    const lines = async () => traceLines(await e.fs.readFile('trace', SH));
    const report = (l: string) => hostEventLine({ mirror: e.host.mirror, syscalls: e.host.syscalls, traced: e.host.traced, observed: () => ObserveLevel.Nothing }, l);
    /** Reports nc's calls on `file`; what the function tracer saw them run, each `fn <-parent` once, in order. */
    const calls = async (file: string, ...rec: [number, number, bigint[]][]): Promise<string[]> => {
      await w('trace', '');
      for (const [nr, ret, args] of rec) report(tline(nr, ret, args, file, SH.pid, 'nc'));
      return [...new Set((await lines()).filter((x) => x.includes('nc-4321')).map((x) => x.replace(/^.*: /, '')))];
    };
    return { ...e, w, lines, report, calls };
  }

  it('are wanted only while something can see what they run: a probe elsewhere leaves them untraced', async () => {
    const { w, host } = setup();
    const seen = async (probe: string): Promise<[boolean, boolean]> => {
      await w('kprobe_events', `p:p1 ${probe}`);
      await w('events/kprobes/p1/enable', '1');
      const r: [boolean, boolean] = [host.traced.treesSeen(), host.syscalls.treesSeen()];
      await w('events/kprobes/p1/enable', '0');
      await w('kprobe_events', '');
      return r;
    };
    expect(host.traced.treesSeen()).toBe(false);
    expect(await seen('tracefs_create_dir')).toEqual([false, false]); // only a mkdir on the mount reaches it
    expect(await seen('ksys_read')).toEqual([true, false]); // every read's
    expect(await seen('do_sys_openat2')).toEqual([false, true]); // an open's: always reported (S lines)
    expect(await seen('__x64_sys_flock')).toEqual([true, false]); // a call whose tree was not captured: its entry
  });

  it('sys_enter_getppid / sys_exit_getppid and raw_syscalls for each call, with its arguments and result', async () => {
    const { w, lines, report } = setup();
    await w('events/syscalls/sys_enter_getppid/enable', '1');
    await w('events/syscalls/sys_exit_getppid/enable', '1');
    await w('events/raw_syscalls/enable', '1');
    for (let i = 0; i < 3; i++) report(tline(110, 1));
    report(tline(0, -9, [77n, 0x1000n, 16n]));
    const l = await lines();
    expect(l.filter((x) => x.includes('sys_getppid()'))).toHaveLength(3);
    expect(l.filter((x) => x.includes('sys_getppid -> 0x1'))).toHaveLength(3);
    expect(l.filter((x) => x.includes('sys_enter: NR 110 '))).toHaveLength(3);
    expect(l.some((x) => /sh-4321 .* sys_enter: NR 0 \(4d, 1000, 10, 0, 0, 0\)$/.test(x))).toBe(true);
    expect(l.some((x) => /sh-4321 .* sys_exit: NR 0 = -9$/.test(x))).toBe(true);
  });

  it('what a write was given and what a read filled are in the caller\'s memory for fetch args (ustring)', async () => {
    const { w, lines, report } = setup();
    await w('kprobe_events', 'p:wr vfs_write s=+0(%si):ustring\nr:rd vfs_read s=+0($arg2):ustring');
    await w('events/kprobes/enable', '1');
    report(`${tline(1, 6, [1n, 0x55d0c0de1000n, 6n], '/dev/null')}\t55d0c0de1000 hello\\012`);
    report(`${tline(0, 4, [3n, 0x7ffd2000n, 4096n], '/etc/hostname', SH.pid, 'cat')}\t7ffd2000 host`);
    const l = await lines();
    expect(l.some((x) => / wr: \(vfs_write\+0x4\/0x[0-9a-f]+\) s="hello\n?/.test(x)), l.join('\n')).toBe(true);
    expect(l.some((x) => / rd: \(.*<- vfs_read\) s="host"$/.test(x)), l.join('\n')).toBe(true);
  });

  it('a read runs ksys_read → vfs_read in the caller, with the bytes it read as the result', async () => {
    const { w, lines, report } = setup();
    await w('set_graph_function', 'vfs_read');
    await w('current_tracer', 'function_graph');
    report(tline(0, 5, [3n, 0x7ffd1000n, 4096n], '/etc/hostname', SH.pid, 'cat'));
    await w('tracing_on', '0');
    const l = await lines();
    expect(l.some((x) => /vfs_read\(\) \{/.test(x)), l.join('\n')).toBe(true);
    expect(l.some((x) => /rw_verify_area\(\)/.test(x))).toBe(true);
  });

  it('a read of a pipe or of /dev/null runs what the real kernel runs for that kind of file', async () => {
    const { w, lines, report } = setup();
    await w('set_ftrace_filter', '*pipe_read read_null vfs_read');
    await w('current_tracer', 'function');
    report(tline(0, 3, [0n, 0x7ffd1000n, 4096n], 'pipe:[4242]', SH.pid, 'cat'));
    report(tline(0, 0, [3n, 0x7ffd1000n, 4096n], '/dev/null', SH.pid, 'cat'));
    await w('tracing_on', '0');
    const l = (await lines()).filter((x) => /cat-4321|sh-4321/.test(x)).map((x) => x.replace(/^.*: /, ''));
    expect(l.filter((x) => x !== 'vfs_read <-kernel_read')).toEqual(['vfs_read <-ksys_read', expect.stringMatching(/^(anon_)?pipe_read <-vfs_read$/), 'vfs_read <-ksys_read', 'read_null <-vfs_read']);
  });

  const rw: [number, number, bigint[]][] = [
    [0, 3, [3n, 0x7ffd1000n, 4096n]],
    [1, 3, [3n, 0x7ffd1000n, 3n]],
  ];

  it('a socket and a terminal run what the real kernel runs for them; a protocol not captured keeps the generic tree', async () => {
    const { w, proc, calls: traced } = setup();
    proc.mountTable.push({ id: 2, mountPoint: '/dev/pts', fstype: 'devpts', source: 'devpts', options: 'rw', dev: '0:25' });
    await w('set_ftrace_filter', 'tcp_recvmsg tcp_sendmsg tcp_close pty_write n_tty_read unix_stream_recvmsg unix_stream_sendmsg unix_release netlink_recvmsg');
    await w('current_tracer', 'function');
    // (each function once: a terminal's write may call pty_write once per chunk of output)
    const calls = async (file: string, ...rec: [number, number, bigint[]][]) => [...new Set((await traced(file, ...rec)).map((x) => x.replace(/ <-.*$/, '')))];
    expect(await calls('socket:[4243] TCP', ...rw, [3, 0, [3n]])).toEqual(['tcp_recvmsg', 'tcp_sendmsg', 'tcp_close']);
    expect(await calls('/dev/pts/3', ...rw)).toEqual(['n_tty_read', 'pty_write']);
    expect(await calls('socket:[4244] UNIX-STREAM', ...rw, [3, 0, [3n]])).toEqual(['unix_stream_recvmsg', 'unix_stream_sendmsg', 'unix_release']);
    expect(await calls('socket:[4245] TCPv6', ...rw, [3, 0, [3n]])).toEqual(['tcp_recvmsg', 'tcp_sendmsg', 'tcp_close']);
    // A netlink socket's trees were not captured: the generic ones run, with no protocol's functions.
    expect(await calls('socket:[4246] NETLINK', ...rw)).toEqual([]);
  });

  it('each socket call runs its protocol\'s code, as the real kernel does; socket() the one its arguments ask for', async () => {
    const { w, calls } = setup();
    const protocolFns = ['udp_sendmsg', 'udpv6_sendmsg', 'udp_recvmsg', 'udpv6_recvmsg', 'unix_stream_sendmsg', 'unix_stream_recvmsg', 'unix_dgram_sendmsg', 'unix_dgram_recvmsg'];
    const otherFns = ['tcp_v4_connect', 'tcp_v6_connect', 'unix_stream_connect', 'unix_dgram_connect', 'inet_csk_accept', 'unix_accept', 'udp_destroy_sock', 'unix_release'];
    await w('set_ftrace_filter', [...protocolFns, ...otherFns, 'udp_init_sock', 'tcp_v4_init_sock', 'unix_create', 'unix_socketpair'].join(' '));
    await w('current_tracer', 'function');
    const nr = (n: string) => SYSCALL_NR[n]!;
    const buf = [3n, 0x7ffd1000n, 64n];
    // socket(2) and socketpair(2): family, type (flags or'ed in), protocol
    expect(await calls('', [nr('socket'), 3, [2n, 2n, 0n]])).toEqual(['udp_init_sock <-inet_create']);
    expect(await calls('', [nr('socket'), 3, [2n, 1n | 0x80000n, 6n]])).toEqual(['tcp_v4_init_sock <-inet_create']);
    expect(await calls('', [nr('socket'), 3, [1n, 2n | 0x800n, 0n]])).toEqual(['unix_create <-__sock_create']);
    expect(await calls('', [nr('socketpair'), 0, [1n, 1n, 0n, 0x7ffd1000n]])).toEqual(['unix_create <-__sock_create', 'unix_socketpair <-__sys_socketpair']);
    expect(await calls('', [nr('socket'), 3, [2n, 3n, 1n]])).toEqual([]); // a raw socket: not captured
    // connect and accept
    expect(await calls('socket:[4250] TCP', [nr('connect'), 0, [3n, 0x7ffd1000n, 16n]])).toEqual(['tcp_v4_connect <-__inet_stream_connect']);
    expect(await calls('socket:[4251] TCPv6', [nr('connect'), 0, [3n, 0x7ffd1000n, 28n]])).toEqual(['tcp_v6_connect <-__inet_stream_connect']);
    expect(await calls('socket:[4252] UNIX-STREAM', [nr('connect'), 0, [3n, 0x7ffd1000n, 110n]])).toEqual(['unix_stream_connect <-__sys_connect_file']);
    expect(await calls('socket:[4253] UNIX', [nr('connect'), 0, [3n, 0x7ffd1000n, 110n]])).toEqual(['unix_dgram_connect <-__sys_connect_file']);
    expect(await calls('socket:[4254] TCP', [nr('accept4'), 4, [3n, 0n, 0n, 0x80000n]])).toEqual(['inet_csk_accept <-inet_accept']);
    expect(await calls('socket:[4255] UNIX-STREAM', [nr('accept'), 4, [3n, 0n, 0n]])).toEqual(['unix_accept <-do_accept']);
    // the data calls: each protocol's sendmsg and recvmsg, under the call's own path
    expect(await calls('socket:[4256] UDP', [nr('sendto'), 64, buf], [nr('recvfrom'), 64, buf])).toEqual(['udp_sendmsg <-inet_sendmsg', 'udp_recvmsg <-inet_recvmsg']);
    expect(await calls('socket:[4257] UDPv6', [nr('sendmsg'), 64, buf], [nr('recvmmsg'), 2, buf])).toEqual(['udpv6_sendmsg <-inet6_sendmsg', 'udpv6_recvmsg <-inet6_recvmsg']);
    expect(await calls('socket:[4258] UNIX-STREAM', [nr('sendto'), 64, buf], [nr('recvmsg'), 64, buf])).toEqual(['unix_stream_sendmsg <-__sys_sendto', 'unix_stream_recvmsg <-sock_recvmsg']);
    expect(await calls('socket:[4259] UNIX', [nr('sendmsg'), 64, buf], [nr('recvfrom'), 64, buf])).toEqual(['unix_dgram_sendmsg <-____sys_sendmsg', 'unix_dgram_recvmsg <-sock_recvmsg']);
    // read, write and close of a UDP socket: UDP's code under the file's
    expect(await calls('socket:[4260] UDP', ...rw, [3, 0, [3n]])).toEqual(['udp_recvmsg <-inet_recvmsg', 'udp_sendmsg <-inet_sendmsg', 'udp_destroy_sock <-sk_common_release']);
  });

  it('a call whose sample slept or woke its peer runs neither here: the real sleeps and wakeups are the scheduler\'s', async () => {
    const { w, lines, report } = setup();
    const nr = (n: string) => SYSCALL_NR[n]!;
    report(tline(nr('getpid'), SH.pid)); // (the caller's first call: its task comes to be)
    await w('set_ftrace_filter', 'schedule try_to_wake_up');
    await w('current_tracer', 'function');
    await w('trace', '');
    // A pipe's writer and reader, connects over loopback (the listener's wakeup ran in the samples), a signal to itself.
    report(tline(nr('write'), 3, [1n, 0x7ffd1000n, 3n], 'pipe:[4300]'));
    report(tline(nr('read'), 3, [0n, 0x7ffd1000n, 4096n], 'pipe:[4300]'));
    for (const proto of ['TCP', 'TCPv6', 'UDP']) report(tline(nr('connect'), 0, [3n, 0x7ffd1000n, 16n], `socket:[4301] ${proto}`));
    report(tline(nr('tgkill'), 0, [BigInt(SH.pid), BigInt(SH.pid), 10n]));
    const l = (await lines()).filter((x) => x.includes(`sh-${SH.pid}`));
    expect(l, l.join('\n')).toEqual([]);
  });

  it('a call that slept unseen (the watcher timed it) sleeps, then is woken with the priority it had, and returns', async () => {
    const { k, report } = setup();
    const nr = (n: string) => SYSCALL_NR[n]!;
    report(tline(nr('getpid'), SH.pid)); // (the caller's first call: its task comes to be)
    const sh = k.tasks.get(SH.pid)!;
    k.sched.ensureRunning(sh);
    const evs = recordEvents(k, ['sched_switch', 'sched_wakeup', 'sys_enter']);
    const clock = (ms: number) => `T ${SH.pid} ${nr('clock_nanosleep')} 0 0 0 7ffd20 0 0 0 1 ${ms * 1e6} -11 1\t\tsh`;
    report(clock(100));
    const seen = evs.map((e) => (e.name === 'sched_switch' ? `switch ${e.args.prev_pid === SH.pid ? `out ${String(e.args.prev_state)}` : `in ${String(e.args.next_prio)}`}` : e.name === 'sched_wakeup' ? `wakeup ${String(e.args.prio)}` : e.name));
    expect(seen).toEqual(['switch out 1', 'wakeup 89', 'switch in 89', 'sys_enter']);
    expect({ prio: sh.prio, policy: sh.policy }).toEqual({ prio: 89, policy: 1 });
    // Asleep for less than a millisecond: no switch.
    evs.length = 0;
    report(clock(0.5));
    expect(evs.map((e) => e.name)).toEqual(['sys_enter']);
  });

  it('a socket call that failed runs its tree and fails where the real call returns from (__sys_connect)', async () => {
    const { w, lines, report } = setup();
    await w('kprobe_events', 'r:c __sys_connect ret=$retval:s32');
    await w('events/kprobes/enable', '1');
    report(tline(SYSCALL_NR.connect!, -111, [3n, 0x7ffd1000n, 16n], 'socket:[4261] TCP', SH.pid, 'nc'));
    report(tline(SYSCALL_NR.connect!, 0, [3n, 0x7ffd1000n, 16n], 'socket:[4262] UDP', SH.pid, 'nc'));
    const l = (await lines()).filter((x) => / c: /.test(x));
    expect(l.map((x) => x.replace(/^.* c: \(/, '(')), l.join('\n')).toEqual([expect.stringMatching(/^\(__x64_sys_connect\+0x[0-9a-f]+\/0x[0-9a-f]+ <- __sys_connect\) ret=-111$/), expect.stringMatching(/ ret=0$/)]);
  });

  it('the other calls programs make run their real trees: memory, signals, identity, sleeps, fd and path calls', async () => {
    const { w, proc, report, lines } = setup();
    proc.mountTable.push({ id: 2, mountPoint: '/tmp', fstype: 'tmpfs', source: 'tmpfs', options: 'rw', dev: '0:26' });
    proc.mountTable.push({ id: 3, mountPoint: '/dev/pts', fstype: 'devpts', source: 'devpts', options: 'rw', dev: '0:25' });
    /** The shell's calls on `file`: what the function tracer saw them run, each `fn <-parent` once, in order. */
    const calls = async (file: string, ...rec: [number, number, bigint[]][]): Promise<string[]> => {
      await w('trace', '');
      for (const [nr, ret, args] of rec) report(tline(nr, ret, args, file));
      return [...new Set((await lines()).filter((x) => x.includes('sh-4321')).map((x) => x.replace(/^.*: /, '')))];
    };
    const fns = ['do_brk_flags', 'mprotect_fixup', 'do_sigaction', '__task_pid_nr_ns', 'vfs_getattr_nosec', 'shmem_getattr', 'tty_ioctl', 'hrtimer_nanosleep', 'schedule', 'f_dupfd', 'set_close_on_exec', 'do_wait', 'shmem_file_llseek', 'futex_wake', 'do_splice_direct', 'splice_file_to_pipe'];
    await w('set_ftrace_filter', fns.join(' '));
    await w('current_tracer', 'function');
    const nr = (n: string) => SYSCALL_NR[n]!;
    // (each function once, with its caller)
    expect(await calls('', [nr('brk'), 0x5555_0002_1000, [0x5555_0002_1000n]])).toEqual(['do_brk_flags <-__x64_sys_brk']);
    expect(await calls('', [nr('mprotect'), 0, [0x7f00_0000_0000n, 4096n, 1n]])).toEqual(['mprotect_fixup <-do_mprotect_pkey']);
    expect(await calls('', [nr('rt_sigaction'), 0, [10n, 0x7ffd1000n, 0n, 8n]])).toEqual(['do_sigaction <-__x64_sys_rt_sigaction']);
    // getpid enters at __do_sys_getpid, as the real kernel's graph shows
    expect(await calls('', [nr('getpid'), SH.pid, []])).toEqual(['__task_pid_nr_ns <-__do_sys_getpid']);
    // fcntl by its command; futex by its operation (FUTEX_WAKE_PRIVATE)
    expect(await calls('/tmp/f', [nr('fcntl'), 10, [3n, 1030n, 10n]], [nr('fcntl'), 0, [3n, 2n, 1n]], [nr('fcntl'), 2, [3n, 3n]])).toEqual(['f_dupfd <-do_fcntl', 'set_close_on_exec <-do_fcntl']);
    expect(await calls('', [nr('futex'), 0, [0x7ffd1000n, 129n, 1n]])).toEqual(['futex_wake <-do_futex']);
    expect(await calls('', [nr('wait4'), 0, [-1n, 0x7ffd1000n, 1n, 0n]])).toEqual(['do_wait <-kernel_wait4']);
    // the fd calls by the kind of file: a file on tmpfs, a terminal; sendfile by where it writes
    expect(await calls('/tmp/f', [nr('fstat'), 0, [3n, 0x7ffd1000n]], [nr('lseek'), 0, [3n, 0n, 0n]])).toEqual([expect.stringMatching(/^vfs_getattr_nosec <-vfs_(fstat|getattr)$/), 'shmem_getattr <-vfs_getattr_nosec', expect.stringMatching(/^shmem_file_llseek <-(vfs_llseek|ksys_lseek)$/)]);
    expect(await calls('/dev/pts/3', [nr('ioctl'), 0, [0n, 0x5401n, 0x7ffd1000n]], [nr('fstat'), 0, [0n, 0x7ffd1000n]])).toEqual(['tty_ioctl <-__x64_sys_ioctl', expect.stringMatching(/^vfs_getattr_nosec <-vfs_(fstat|getattr)$/)]);
    expect(await calls('pipe:[77]', [nr('sendfile'), 6, [4n, 3n, 0x7ffd1000n, 6n]])).toEqual(['splice_file_to_pipe <-do_sendfile']);
    expect(await calls('/dev/null', [nr('sendfile'), 6, [4n, 3n, 0x7ffd1000n, 6n]])).toEqual(['do_splice_direct <-do_sendfile']);
    // a sleep runs its own part, not the scheduler: the process's real sleep is shown by itself (sched.ts)
    expect(await calls('', [nr('nanosleep'), 0, [0x7ffd1000n, 0n]])).toEqual(['hrtimer_nanosleep <-__x64_sys_nanosleep']);
    expect(await calls('', [nr('clock_nanosleep'), 0, [0n, 0n, 0x7ffd1000n, 0n]])).toEqual(['hrtimer_nanosleep <-common_nsleep']);
  });

  it('an ioctl TCGETS on a file fails ENOTTY where the real call returns it; on a terminal it succeeds in tty_ioctl', async () => {
    const { w, proc, lines, report } = setup();
    proc.mountTable.push({ id: 2, mountPoint: '/tmp', fstype: 'tmpfs', source: 'tmpfs', options: 'rw', dev: '0:26' });
    proc.mountTable.push({ id: 3, mountPoint: '/dev/pts', fstype: 'devpts', source: 'devpts', options: 'rw', dev: '0:25' });
    await w('kprobe_events', 'r:io __x64_sys_ioctl ret=$retval:s32\nr:vfs do_vfs_ioctl\nr:tty tty_ioctl');
    await w('events/kprobes/enable', '1');
    report(tline(SYSCALL_NR.ioctl!, -25, [3n, 0x5401n, 0x7ffd1000n], '/tmp/f', SH.pid, 'ls'));
    report(tline(SYSCALL_NR.ioctl!, 0, [1n, 0x5401n, 0x7ffd1000n], '/dev/pts/3', SH.pid, 'ls'));
    const l = (await lines()).filter((x) => / (io|vfs|tty): /.test(x)).map((x) => x.replace(/^.* (io|vfs|tty): /, '$1: ').replace(/\+0x[0-9a-f]+\/0x[0-9a-f]+/g, ''));
    const io = (ret: number) => expect.stringMatching(new RegExp(`^io: \\(\\w+ <- __x64_sys_ioctl\\) ret=${ret}$`));
    expect(l, l.join('\n')).toEqual(['vfs: (__x64_sys_ioctl <- do_vfs_ioctl)', io(-25), 'vfs: (__x64_sys_ioctl <- do_vfs_ioctl)', 'tty: (__x64_sys_ioctl <- tty_ioctl)', io(0)]);
  });

  it('calls the process events run are not run again: the parent\'s clone, a reaping wait4; a traced exec runs once', async () => {
    const { w, lines, report, host, proc } = setup();
    await w('events/raw_syscalls/enable', '1');
    host.mirror.taskOf(SH.pid, 'sh', 1, true);
    report(tline(56, 4400));
    report(tline(61, 4400));
    report(tline(61, -10));
    report(tline(59, -2));
    proc.set({ pid: SH.pid, comm: 'cat', ppid: 1, startTime: 1, cwd: '/' });
    report(tline(59, 0, [], '', SH.pid, 'cat'));
    // The proc connector's line for that exec, late: not run again.
    report(`E 0 ${SH.pid} ${SH.pid} cat\t/usr/bin/cat`);
    const l = (await lines()).filter((x) => /sys_enter: NR (56|59|61) /.test(x));
    expect(l.map((x) => /NR (\d+)/.exec(x)![1])).toEqual(['61', '59', '59']);
    expect(l[2]).toMatch(/^\s+cat-4321 /);
  });

  it("the emulator's own helper starting (exec's watcher) is no exec of the machine's; the command it runs is", async () => {
    const { w, lines, report, host, proc } = setup();
    host.mirror.taskOf(SH.pid, 'sh', 1, true);
    await w('events/sched/sched_process_exec/enable', '1');
    proc.set({ pid: SH.pid, comm: 'cat', ppid: 1, startTime: 1, cwd: '/' });
    report(`E 0 ${SH.pid} ${SH.pid} syscall_watch-9\t/root/.cache/tracefs-emu/syscall_watch-0123456789abcdef`);
    report(`E 0 ${SH.pid} ${SH.pid} cat\t/usr/bin/cat`);
    const l = (await lines()).filter((x) => x.includes('sched_process_exec'));
    expect(l).toEqual([expect.stringMatching(new RegExp(`^\\s+cat-${SH.pid} .* sched_process_exec: filename=/usr/bin/cat pid=${SH.pid} old_pid=${SH.pid}$`))]);
  });

  it("a wait4 that returned a child: the child's exit and reaping come first, before the parent's next call, even when the proc connector tells it later", async () => {
    const { w, lines, report, host, proc } = setup();
    host.mirror.taskOf(SH.pid, 'sh', 1, true);
    proc.set({ pid: 4400, comm: 'sh', ppid: SH.pid, startTime: 2, cwd: '/' });
    report(`F 0 ${SH.pid} ${SH.pid} 4400 4400`);
    await w('events/sched/sched_process_exit/enable', '1');
    await w('events/syscalls/sys_enter_getppid/enable', '1');
    report(tline(61, 4400));
    report(tline(110, 1));
    // The proc connector's exit line, after the parent's next call: nothing runs again.
    report('X 0 4400 4400 0');
    const l = (await lines()).map((x) => x.replace(/^.*?: /, '')).filter((x) => /sched_process_exit|sys_getppid/.test(x));
    expect(l).toEqual([expect.stringMatching(/^sched_process_exit: comm=sh pid=4400 /), 'sys_getppid()']);
  });
});
