#!/usr/bin/env node
// Adds to data/kernel-<series>/call-paths.txt.br the `call:` blocks: what the
// real kernel runs for the system calls every program makes, by the kind of
// file they are on — read and write on a file on tmpfs, a pipe, /dev/null,
// a socket, a terminal (devpts); close of a file on tmpfs, a pipe, a socket;
// an anonymous mmap; a stat of a path on tmpfs; getdents64 of a tmpfs
// directory; the socket calls (socket, socketpair, bind, listen, connect,
// accept, accept4, sendto, recvfrom, sendmsg, recvmsg, sendmmsg, recvmmsg,
// shutdown, getsockname, getpeername, setsockopt, getsockopt), the sockets
// being of the kinds `unix-stream`, `unix` (datagram), `udp`, `udpv6`, `tcp`,
// `tcpv6`; and the other calls programs make (brk, mprotect, munmap,
// madvise, mremap, rt_sigaction, rt_sigprocmask, sigaltstack, kill, tgkill,
// rt_sigreturn, the get*id calls, setpgid, uname, sysinfo, umask, getrandom,
// prlimit64, set_tid_address, set_robust_list, rseq, arch_prctl, futex wake,
// sched_getaffinity, sched_yield, times, clock_gettime, wait4 finding no
// child exited, nanosleep, clock_nanosleep, fcntl, dup*, pipe2, getcwd;
// fstat, lseek, ioctl, sendfile on a file on tmpfs, a pipe, /dev/null, a
// terminal; pread64, pwrite64; the path calls on tmpfs) — cut out of the traces
// tools/oracle/kernel-paths-calls.sh takes. The emulated kernel replays them
// for the calls `tracefs-emu exec`'s watcher traces (src/host/traced_calls.ts),
// named `call:<syscall>:<kind>`. Each block has one hole, `$op`, as the last
// call of the function that returns the system call's result: a failure is
// settled there. Calls whose tree is the same whatever file they are on
// (or that take none) are `call:<syscall>`; fcntl's and futex's are named by
// command (`call:fcntl:F_GETFL`). A call that slept keeps its own work
// around schedule(), not the scheduler's: see `sleeps` below.
//
//   { cat tools/oracle/capture.sh
//     sh tools/oracle/guest-binary.sh tools/oracle/guest-sockets.c /tmp/sockets
//     sh tools/oracle/guest-binary.sh tools/oracle/guest-calls.c /tmp/calls
//     cat tools/oracle/kernel-paths-calls.sh; } | kernel-oracle [--series S] --out DIR run -
//   node tools/kernel-paths/calls.mjs S DIR
//
// Blocks already named `call:*` in the file are replaced; the others are kept.
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanTree, has, node, openCapture, replaceBlocks } from './lib.mjs';

const [series, dir] = process.argv.slice(2);
if (!series || !dir) {
  console.error('usage: calls.mjs SERIES ORACLE_OUT_DIR');
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const { find } = openCapture(dir);

const blocks = new Map();
const missing = [];
/**
 * A system call's tree from an op's trace, cleaned, with `$op` last under `resultFn` (default: the entry function).
 * `sleeps` (default): where the call waited in schedule() or woke another task (try_to_wake_up: a pipe's or a
 * socket's reader, a signal's target), that is left out: the emulator shows a traced process's real sleeps and
 * wakeups by themselves (src/host/sched.ts), and would not know whom the sample woke; the tree keeps the call's
 * own work around it. (A terminal's writes keep theirs: they queue the flip buffer's work, a kworker's.)
 * `prefer`: a sample that passes it is taken if the op has one.
 */
function call(name, op, sysName, { resultFn = sysName, sleeps = true, prefer, ...opts } = {}) {
  const t = (prefer && find(`calls-${op}`, sysName, { ...opts, where: (n) => prefer(n) && (!opts.where || opts.where(n)) })) || find(`calls-${op}`, sysName, opts);
  const r = t && (t.name === resultFn ? t : node(t, resultFn));
  if (!t || !r) {
    // A kernel that does it another way: that kind of file keeps the generic tree.
    missing.push(`${name} (${op}: ${sysName}${opts.marker ? ` with ${opts.marker}` : ''})`);
    return;
  }
  cleanTree(t);
  if (sleeps) dropSleeps(t);
  const r2 = t.name === resultFn ? t : node(t, resultFn);
  r2.kids.push({ name: '$op', kids: [] });
  blocks.set(name, [t]);
}

const SLEEP = /^(schedule|schedule_hrtimeout\w*|io_schedule\w*|freezable_schedule\w*|try_to_wake_up)$/;
function dropSleeps(n) {
  n.kids = n.kids.filter((k) => !SLEEP.test(k.name));
  for (const k of n.kids) dropSleeps(k);
}

const notTracefs = (n) => !has(n, /^(tracefs_|eventfs_|kernfs_)/);
const noPipe = (n) => notTracefs(n) && !has(n, /^pipe_/);
// The guest's programs are busybox's (its cat copies with sendfile, dd reads and writes); its /tmp is a tmpfs.
call('call:read:tmpfs', 'dd-file', '__x64_sys_read', { comm: 'dd', resultFn: 'vfs_read', where: noPipe, marker: /^(filemap_read|shmem_file_read_iter)$/ });
// A pipe's reader may have slept for the data, its writer woken it: the sleep and the wakeup are the scheduler's
// (src/host/sched.ts shows the real ones), so a sample without them is taken, or they are left out.
const noSched = (n) => !has(n, /^(schedule|try_to_wake_up)$/);
call('call:read:pipe', 'cat-pipe', '__x64_sys_read', { comm: 'cat', resultFn: 'vfs_read', marker: /pipe_read$/, prefer: noSched });
call('call:read:chr', 'cat-null', '__x64_sys_read', { comm: 'cat', resultFn: 'vfs_read', marker: /null/ });
call('call:write:pipe', 'cat-pipe', '__x64_sys_write', { comm: 'sh', resultFn: 'vfs_write', marker: /pipe_write$/, prefer: noSched });
call('call:write:chr', 'cat-pipe', '__x64_sys_write', { comm: 'cat', resultFn: 'vfs_write', marker: /null/ });
call('call:close:tmpfs', 'cat-file', '__x64_sys_close', { comm: 'cat', where: (n) => noPipe(n) && has(n, '__fput') });
call('call:close:pipe', 'cat-pipe', '__x64_sys_close', { comm: 'sh', marker: /pipe_release$/ });
call('call:mmap:anon', 'cat-null', '__x64_sys_mmap', { comm: 'cat' });
call('call:newfstatat:tmpfs', 'ls-dir', '__x64_sys_newfstatat', { comm: 'ls', where: notTracefs, marker: 'vfs_statx' });
// (the first of ls's getdents64 calls: the one that fills entries, not the one that finds the end)
call('call:getdents64:tmpfs', 'ls-dir', '__x64_sys_getdents64', { comm: 'ls', where: (n) => notTracefs(n) && has(n, 'iterate_dir'), marker: 'filldir64' });
// busybox nc copies between its socket and stdin/stdout with read() and write(): its server listens on IPv6
// (inet6_*), its client connects over IPv4 (inet_*) and exits without a close(); busybox telnetd, bound to
// 127.0.0.1, reads its client's input and closes the connection. The watcher names a socket's protocol: TCP, TCPv6.
const v4 = (n) => !has(n, /^inet6_/);
call('call:read:tcp', 'tty-pty', '__x64_sys_read', { comm: 'telnetd', resultFn: 'vfs_read', marker: 'inet_recvmsg' });
call('call:read:tcpv6', 'nc-tcp', '__x64_sys_read', { comm: 'nc', resultFn: 'vfs_read', marker: 'inet6_recvmsg' });
call('call:write:tcp', 'nc-tcp', '__x64_sys_write', { comm: 'nc', resultFn: 'vfs_write', marker: 'inet_sendmsg' });
call('call:close:tcp', 'tty-pty', '__x64_sys_close', { comm: 'telnetd', marker: 'tcp_close', where: v4 });
call('call:close:tcpv6', 'nc-tcp', '__x64_sys_close', { comm: 'nc', marker: 'inet6_release' });
// The shell on the terminal writes its prompt there (busybox cat sends files with sendfile); head reads it.
call('call:read:devpts', 'tty-pty', '__x64_sys_read', { comm: 'head', resultFn: 'vfs_read', marker: 'n_tty_read' });
call('call:write:devpts', 'tty-pty', '__x64_sys_write', { comm: 'sh', resultFn: 'vfs_write', marker: 'pty_write', sleeps: false });
// guest-sockets.c (comm `sockets`) makes the socket calls of one protocol per op, both ends in one process, over
// loopback; a kind is sockfs's name of the protocol, lowercased: a datagram unix socket is UNIX. A socket call's
// result is __sys_<call>'s (accept's: __sys_accept4's; recvmmsg's: do_recvmmsg's, the entry's only call). socket
// and socketpair have no fd: traced_calls.ts takes their kind from their arguments. The TCP sockets' read, close
// (and write over IPv4) come from nc and telnetd above.
const SOCKET_CALLS = {
  stream: ['socket', 'bind', 'listen', 'getsockname', 'connect', 'accept', 'accept4', 'getpeername', 'getsockopt', 'sendto', 'recvfrom', 'sendmsg', 'recvmsg', 'shutdown'],
  dgram: ['socket', 'bind', 'getsockname', 'setsockopt', 'getsockopt', 'sendto', 'recvfrom', 'connect', 'getpeername', 'sendmsg', 'recvmsg', 'sendmmsg', 'recvmmsg', 'shutdown'],
};
const SOCKET_OPS = [
  ['unix-stream', 'unix-stream', [...SOCKET_CALLS.stream, 'socketpair'], ['read', 'write', 'close']],
  ['unix-dgram', 'unix', SOCKET_CALLS.dgram, ['read', 'write', 'close']],
  ['udp', 'udp', SOCKET_CALLS.dgram, ['read', 'write', 'close']],
  ['udp6', 'udpv6', SOCKET_CALLS.dgram, ['read', 'write', 'close']],
  ['tcp', 'tcp', [...SOCKET_CALLS.stream, 'setsockopt'], []],
  ['tcp6', 'tcpv6', [...SOCKET_CALLS.stream, 'setsockopt'], ['write']],
];
const FILE_RESULT = { read: 'vfs_read', write: 'vfs_write', close: '__x64_sys_close' };
for (const [op, kind, calls, fileCalls] of SOCKET_OPS) {
  for (const c of calls) call(`call:${c}:${kind}`, `sock-${op}`, `__x64_sys_${c}`, { comm: 'sockets', resultFn: /^(__sys_|do_recvmmsg$)/ });
  for (const c of fileCalls) call(`call:${c}:${kind}`, `sock-${op}`, `__x64_sys_${c}`, { comm: 'sockets', resultFn: FILE_RESULT[c] });
}

// guest-calls.c (comm `calls`) makes the other calls programs make, one group or kind of file per op; blocks of
// calls whose tree is the same whatever they are on are named `call:<syscall>` (src/host/call_kind.ts). The names
// are the kernel's (newfstat, newuname, sendfile64: its entry functions'). Calls of no arguments enter at
// __do_sys_<name>, as the trace shows.
const ENTRY0 = new Set(['getpid', 'getppid', 'gettid', 'getuid', 'geteuid', 'getgid', 'getegid', 'getpgrp', 'sched_yield', 'rt_sigreturn']);
const plain = (name, op, opts = {}) => call(`call:${name}`, `c-${op}`, `${ENTRY0.has(name) ? '__do_sys' : '__x64_sys'}_${name}`, { comm: 'calls', ...opts });
// brk: the one that grows the heap (malloc's), not brk(0)'s query.
plain('brk', 'mem', { marker: 'do_brk_flags' });
for (const c of ['mprotect', 'madvise', 'mremap', 'munmap']) plain(c, 'mem');
// rt_sigreturn: from the handler of a signal tgkill sent.
for (const c of ['rt_sigaction', 'rt_sigprocmask', 'sigaltstack', 'kill', 'tgkill', 'rt_sigreturn']) plain(c, 'sig');
const PROC = ['getpid', 'getppid', 'gettid', 'getuid', 'geteuid', 'getgid', 'getegid', 'getpgrp', 'setpgid', 'newuname', 'sysinfo', 'umask', 'getrandom'];
for (const c of [...PROC, 'prlimit64', 'set_tid_address', 'set_robust_list', 'rseq', 'arch_prctl', 'sched_getaffinity', 'times', 'clock_gettime']) plain(c, 'proc');
// sched_yield switches to whoever else is runnable: the switch, if any, is the scheduler's (sched.ts).
plain('sched_yield', 'proc');
call('call:futex:FUTEX_WAKE', 'c-proc', '__x64_sys_futex', { comm: 'calls', marker: 'futex_wake' });
// wait4 with WNOHANG while the child lives: 0 (a wait4 that reaps a child is the process events').
plain('wait4', 'proc', { where: (n) => !has(n, /^(schedule|release_task)$/) });
// The sleeps: 10 ms each.
plain('nanosleep', 'sleep');
plain('clock_nanosleep', 'sleep');
// fcntl by command (on a file on tmpfs: none of them reaches the file's code); dup*, pipe2 on any file.
const DUPS = /^(f_dupfd|alloc_fd|fd_install)$/;
call('call:fcntl:F_GETFL', 'c-file', '__x64_sys_fcntl', { comm: 'calls', where: (n) => !has(n, 'set_close_on_exec') && !has(n, DUPS) });
call('call:fcntl:F_SETFD', 'c-file', '__x64_sys_fcntl', { comm: 'calls', marker: 'set_close_on_exec', where: (n) => !has(n, DUPS) });
call('call:fcntl:F_DUPFD_CLOEXEC', 'c-file', '__x64_sys_fcntl', { comm: 'calls', marker: DUPS });
for (const c of ['dup', 'dup2', 'dup3']) plain(c, 'file');
plain('pipe2', 'pipe');
// The fd calls, by the kind of file they are on: a file on tmpfs, a pipe, /dev/null, a terminal (devpts). A
// sendfile is named by where it writes; it reads a file on tmpfs.
const FD_RESULT = { pread64: 'vfs_read', pwrite64: 'vfs_write', sendfile64: 'do_sendfile' };
const FD_OPS = [
  ['file', 'tmpfs', ['newfstat', 'lseek', 'pread64', 'pwrite64', 'ioctl']],
  ['pipe', 'pipe', ['newfstat', 'lseek', 'ioctl', 'sendfile64']],
  ['null', 'chr', ['newfstat', 'lseek', 'ioctl', 'sendfile64']],
  ['pty', 'devpts', ['newfstat', 'ioctl']],
];
for (const [op, kind, calls] of FD_OPS) {
  for (const c of calls) call(`call:${c}:${kind}`, `c-${op}`, `__x64_sys_${c}`, { comm: 'calls', resultFn: FD_RESULT[c] });
}
// The path calls on tmpfs: an unlinkat of a file (one with AT_REMOVEDIR runs a rmdir's tree: not kept).
for (const c of ['access', 'faccessat2', 'statx', 'readlink', 'readlinkat', 'mkdirat', 'rename', 'renameat2']) call(`call:${c}:tmpfs`, 'c-paths', `__x64_sys_${c}`, { comm: 'calls' });
call('call:unlinkat:tmpfs', 'c-paths', '__x64_sys_unlinkat', { comm: 'calls', marker: /^(do_unlinkat|filename_unlinkat)$/, where: (n) => !has(n, /^(do_rmdir|filename_rmdir)$/) });
plain('getcwd', 'paths');

const file = join(root, 'data', `kernel-${series}`, 'call-paths.txt.br');
const { lines, bytes } = replaceBlocks(file, 'call:', blocks);
for (const m of missing) console.error(`${series}: not captured: ${m}`);
console.error(`${series}: ${blocks.size} call blocks; ${lines} lines, ${bytes} bytes in all`);
