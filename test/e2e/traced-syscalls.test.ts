/**
 * Under `tracefs-emu exec`, every system call of a traced program reaches
 * the emulated kernel: with raw_syscalls enabled, the sys_enter events of a
 * command and its children, per system call, are as many as strace counts
 * for the same command run outside (strace cannot run inside: the watcher
 * is the command's tracer), and the calls return the same values (pointers
 * and pids: the same sign); and a function_graph recording (trace-cmd,
 * perf ftrace) shows vfs_read called by cat.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSCALL_NR } from '../../src/kernel/syscall_nr.js';
import { syscallWatcher } from '../../src/exec/namespace.js';

const REPO = resolve(import.meta.dirname, '../..');
const CLI = join(REPO, 'bin', 'tracefs-emu.js');

function why(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (mount namespaces, ptrace)';
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse';
  if (!existsSync(join(REPO, 'dist', 'src', 'cli', 'index.js'))) return 'not built (npm run build)';
  if (!syscallWatcher()) return 'no C compiler for the watcher';
  if (!existsSync('/usr/bin/strace')) return 'no strace';
  return undefined;
}
const skip = why();

function run(file: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    execFile(file, args, { env, cwd, timeout: 120_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      ok({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Calls whose result is an address or a pid: only whether they failed is compared. */
const SIGN_ONLY = new Set(['mmap', 'brk', 'mremap', 'clone', 'clone3', 'fork', 'vfork', 'wait4', 'getpid', 'getppid', 'gettid', 'set_tid_address']);
/** Calls whose result depends on timing: rt_sigreturn gives back what the call a signal interrupted had returned. */
const COUNT_ONLY = new Set(['rt_sigreturn']);

/**
 * An attempt a signal interrupted and the kernel restarts (ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND,
 * ERESTART_RESTARTBLOCK): raw_syscalls shows it as a call of its own, as strace does (`= ? ERESTARTNOINTR`),
 * but whether one happens depends on timing (a child's SIGCHLD during the shell's next clone): left out of both.
 */
const RESTARTED = new Set([-512n, -513n, -514n, -516n]);

/** Per system call number: how many calls, and their results (sorted), normalized. */
type Census = Map<number, { calls: number; rets: string[] }>;

function norm(name: string, ret: bigint): string {
  if (COUNT_ONLY.has(name)) return '*';
  return SIGN_ONLY.has(name) ? (ret < 0n ? String(ret) : '+') : String(ret);
}

const NAMES = new Map<number, string>();
for (const [name, nr] of Object.entries(SYSCALL_NR)) if (!NAMES.has(nr)) NAMES.set(nr, name);

function add(c: Census, nr: number, ret?: bigint): void {
  let e = c.get(nr);
  if (!e) c.set(nr, (e = { calls: 0, rets: [] }));
  if (ret === undefined) e.calls++;
  else e.rets.push(norm(NAMES.get(nr) ?? '', ret));
}

/** strace -f output: `PID name(...) = RET`, possibly split into `<unfinished ...>` and `<... name resumed>`. */
function straceCensus(text: string): Census {
  const c: Census = new Map();
  for (const line of text.split('\n')) {
    const m = /^\d+\s+(?:<\.\.\. )?(\w+)(?:\(| resumed>)/.exec(line);
    // (a signal's `--- SIG... ---` and an exit's `+++ ... +++` lines are not calls; a call's data may hold either)
    if (!m || /^\d+\s+(---|\+\+\+) /.test(line)) continue;
    const nr = SYSCALL_NR[m[1]!];
    if (nr === undefined) continue;
    if (/ = \? ERESTART/.test(line)) {
      // (its `<unfinished ...>` half was counted)
      if (line.includes(' resumed>')) c.get(nr)!.calls--;
      continue;
    }
    if (!line.includes(' resumed>')) add(c, nr);
    // Failures print -1 and the errno's name; the kernel returns -errno.
    const r = /\) += (-?\d+|0x[0-9a-f]+)(?: (E[A-Z0-9]+))?/.exec(line);
    if (r) add(c, nr, r[2] ? BigInt(-(constants.errno as Record<string, number>)[r[2]]!) : BigInt(r[1]!));
  }
  for (const e of c.values()) e.rets.sort();
  return c;
}

/**
 * A raw_syscalls trace: the process that wrote the `go` marker, from its
 * next exec on, and its descendants (the machine's other processes' lives
 * are in the trace too, as on a real kernel).
 */
function traceCensus(text: string): Census {
  const c: Census = new Map();
  let cmd = -1;
  let started = false;
  const ours = new Set<number>();
  const pending = new Map<number, number>();
  for (const line of text.split('\n')) {
    const go = /^\s*\S+-(\d+)\s+\[\d+\].*tracing_mark_write: go$/.exec(line);
    if (go) cmd = Number(go[1]);
    const m = /^\s*\S+-(\d+)\s+\[\d+\].*?: sys_(enter|exit): NR (\d+) (?:\(|= (-?\d+))/.exec(line);
    if (!m || cmd < 0) continue;
    const pid = Number(m[1]);
    const nr = Number(m[3]);
    if (!started && pid === cmd && m[2] === 'enter' && NAMES.get(nr) === 'execve') {
      started = true;
      ours.add(cmd);
    }
    if (!ours.has(pid)) continue;
    if (m[2] === 'exit' && /^(clone|vfork|fork|clone3)$/.test(NAMES.get(nr) ?? '') && Number(m[4]) > 0) ours.add(Number(m[4]));
    if (m[2] === 'enter') {
      add(c, nr);
      pending.set(pid, nr);
    } else if (pending.get(pid) === nr) {
      const ret = BigInt(m[4]!);
      if (RESTARTED.has(ret)) c.get(nr)!.calls--;
      else add(c, nr, ret);
      pending.delete(pid);
    }
  }
  for (const e of c.values()) e.rets.sort();
  return c;
}

function table(c: Census): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [nr, e] of [...c].sort((a, b) => a[0] - b[0])) out[NAMES.get(nr) ?? String(nr)] = `${e.calls}: ${e.rets.join(' ')}`;
  return out;
}

describe.skipIf(!!skip)(`traced system calls${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let base: string;
  let mnt: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'e2e-traced-'));
    mnt = join(base, 'mnt');
    env = { ...process.env, TRACEFS_EMU_STATE_DIR: join(base, 'state'), LC_ALL: 'C' };
    const r = await run(process.execPath, [CLI, 'mount', mnt, '--daemon'], env);
    expect(r.code, r.stderr).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await run(process.execPath, [CLI, 'unmount', mnt], env);
    rmSync(base, { recursive: true, force: true });
  });

  /** The command under exec with raw_syscalls on, and under strace outside: the two censuses. */
  async function both(cmd: string): Promise<{ traced: Census; strace: Census }> {
    const out = join(base, 'strace.txt');
    // Both run in / (a shell checks $PWD against its cwd: a cwd on the mount would be FUSE's, its attributes cached).
    // Both read /dev/null and write to it (a program may ask whether its output is a terminal).
    const s = await run('/bin/sh', ['-c', 'exec strace -f -o "$0" /bin/sh -c "$1" < /dev/null > /dev/null', out, `exec ${cmd}`], { ...env, PWD: '/' }, '/');
    expect(s.code, s.stderr).toBe(0);
    const strace = straceCensus(readFileSync(out, 'utf8'));
    // The command's shell marks the trace, then runs what strace ran.
    const inner = join(base, 'inner.sh');
    writeFileSync(inner, `echo go > /sys/kernel/tracing/trace_marker\nexec /bin/sh -c 'exec ${cmd.replace(/'/g, `'\\''`)}'\n`);
    const script = [
      'cd /sys/kernel/tracing',
      'echo > trace',
      'echo 1 > events/raw_syscalls/enable',
      `(cd / && /bin/sh ${inner} < /dev/null > /dev/null)`,
      'echo 0 > events/raw_syscalls/enable',
      'cat trace',
    ].join('; ');
    const r = await run(process.execPath, [CLI, 'exec', '--mount', mnt, '--', '/bin/sh', '-c', script], env);
    expect(r.code, r.stderr).toBe(0);
    return { traced: traceCensus(r.stdout), strace };
  }

  /** Both censuses, run again once when they differ: a shell's waits depend on when its children end, in each run. */
  async function compared(cmd: string): Promise<{ traced: Census; strace: Census }> {
    const first = await both(cmd);
    return JSON.stringify(table(first.traced)) === JSON.stringify(table(first.strace)) ? first : both(cmd);
  }

  it('cat /etc/hostname: every call strace sees, as often, with the same results', async () => {
    const { traced, strace } = await compared('/bin/cat /etc/hostname');
    expect(strace.get(SYSCALL_NR.read!)?.calls).toBeGreaterThan(0);
    expect(table(traced)).toEqual(table(strace));
  }, 180_000);

  it("sh -c 'echo hi | wc -c': the shell and both sides of the pipe", async () => {
    const { traced, strace } = await compared(`/bin/sh -c "echo hi | /usr/bin/wc -c"`);
    expect(strace.get(SYSCALL_NR.pipe2!)?.calls).toBe(1);
    expect(table(traced)).toEqual(table(strace));
  }, 180_000);

  it('ls -l /: directory reads, the stat of every entry, the owners looked up', async () => {
    const { traced, strace } = await compared('/bin/ls -l /');
    expect(strace.get(SYSCALL_NR.getdents64!)?.calls).toBeGreaterThan(0);
    expect(table(traced)).toEqual(table(strace));
  }, 180_000);

  it('sleep 0.2: the sleep itself and what the program does around it', async () => {
    const { traced, strace } = await compared('/bin/sleep 0.2');
    expect(strace.get(SYSCALL_NR.clock_nanosleep!)?.calls).toBe(1);
    expect(table(traced)).toEqual(table(strace));
  }, 180_000);

  /** A shell script (one command per line) run under exec, its status checked: what it printed. */
  async function execScript(lines: string[]): Promise<string> {
    const r = await run(process.execPath, [CLI, 'exec', '--mount', mnt, '--', '/bin/sh', '-c', lines.join('\n')], env);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  }

  it('fetch args read the real user buffers: what echo wrote, what cat read, the path open was given', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'e2e-traced-ustr-'));
    try {
      const file = join(dir, 'note.txt');
      const out = await execScript([
        'cd /sys/kernel/tracing',
        'echo "p:wr vfs_write s=+0(%si):ustring" > kprobe_events',
        'echo "r:rd vfs_read s=+0(\\$arg2):ustring" >> kprobe_events',
        'echo "p:op do_sys_openat2 f=+0(%si):ustring" >> kprobe_events',
        'echo 1 > events/kprobes/enable',
        `/bin/sh -c 'echo ustring-written > ${file}; /bin/cat ${file} > /dev/null'`,
        'echo 0 > events/kprobes/enable',
        'grep -a -E " (wr|rd|op): " trace',
        'echo > kprobe_events',
      ]);
      expect(out).toMatch(/ wr: \(vfs_write\+0x[0-9a-f]+\/0x[0-9a-f]+\) s="ustring-written/);
      expect(out).toMatch(/ rd: \(.*<- vfs_read\) s="ustring-written/);
      expect(out).toContain(`f="${file}"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('the call right after the write that turns tracing on is seen, every time', async () => {
    // umask is a shell builtin whose calls only the watcher's tracing reports: the shell makes them as
    // soon as its write to the mount returns, as on a kernel where the hook is live by then. Each round
    // ends with a marker.
    const rounds = 20;
    const script = [
      'cd /sys/kernel/tracing',
      'echo > trace',
      `i=0; while [ $i -lt ${rounds} ]; do echo 1 > events/raw_syscalls/sys_enter/enable; umask 022; echo "round $i" > trace_marker; echo 0 > events/raw_syscalls/sys_enter/enable; i=$((i+1)); done`,
      'read pid _ < /proc/self/stat; echo "shell $pid"',
      'cat trace',
    ].join('\n');
    const r = await run(process.execPath, [CLI, 'exec', '--mount', mnt, '--', '/bin/sh', '-c', script], env);
    expect(r.code, r.stderr).toBe(0);
    const shell = /^shell (\d+)$/m.exec(r.stdout)![1];
    const umask = new RegExp(`^\\s*\\S+-${shell}\\s.*sys_enter: NR ${SYSCALL_NR.umask} `);
    const seen: number[] = [];
    let calls = 0;
    for (const line of r.stdout.split('\n')) {
      if (umask.test(line)) calls++;
      const end = /tracing_mark_write: round (\d+)$/.exec(line);
      if (end) {
        if (calls > 0) seen.push(Number(end[1]));
        calls = 0;
      }
    }
    expect(seen, r.stdout.slice(0, 3000)).toEqual([...Array(rounds).keys()]);
  }, 180_000);

  it('a process asleep in a read when the function tracer comes on has its next calls seen (perf ftrace\'s child waits so)', async () => {
    // head sleeps reading a FIFO while tracing starts: woken, its read is traced; then its parent execs cat,
    // whose reads must all be traced, as many as those of a cat started once tracing is on.
    const dir = mkdtempSync(join(tmpdir(), 'e2e-traced-asleep-'));
    try {
      for (let i = 0; i < 2; i++) {
        const out = await execScript([
          'cd /sys/kernel/tracing',
          `rm -f ${dir}/go; mkfifo ${dir}/go`,
          'echo > trace',
          `(exec 4<>${dir}/go; head -n 1 <&4 > /dev/null; exec cat /etc/hostname > /dev/null) & A=$!`,
          'sleep 0.3',
          'echo vfs_read > set_ftrace_filter',
          'echo function > current_tracer',
          `echo go > ${dir}/go`,
          'wait',
          'cat /etc/hostname > /dev/null & B=$!; wait',
          'echo 0 > tracing_on',
          'echo "$(grep -c "^ *head-[0-9]* .* vfs_read <-" trace) $(grep -c "^ *cat-$A .* vfs_read <-" trace) $(grep -c "^ *cat-$B .* vfs_read <-" trace)"',
          'echo nop > current_tracer; echo > set_ftrace_filter; echo 1 > tracing_on',
        ]);
        const [head, woken, fresh] = out.trim().split(' ').map(Number);
        expect(head, out).toBe(1);
        expect(fresh, out).toBeGreaterThanOrEqual(3);
        expect(woken, out).toBe(fresh);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it.skipIf(!existsSync('/usr/bin/perl'))('a poll of a file on the mount is one system call, however often FUSE asks the file', async () => {
    // Two polls of trace_pipe_raw (nothing to read: the second sleeps 200 ms): FUSE asks the file again at each wake-up.
    const perl = `use IO::Poll qw(POLLIN); open(my $f, "<", "per_cpu/cpu0/trace_pipe_raw") or die; my $p = IO::Poll->new; $p->mask($f => POLLIN); $p->poll(0); $p->poll(0.2); print "pid $$\\n"`;
    const out = await execScript([
      'cd /sys/kernel/tracing',
      'echo > trace',
      'echo 1 > events/raw_syscalls/enable',
      `perl -e '${perl}'`,
      'echo 0 > events/raw_syscalls/enable',
      'cat trace',
    ]);
    const pid = /^pid (\d+)$/m.exec(out)?.[1];
    expect(pid, out.slice(0, 2000)).toBeDefined();
    const polls = out.split('\n').filter((l) => new RegExp(`-${pid} .*sys_enter: NR ${SYSCALL_NR.poll} `).test(l));
    expect(polls.map((l) => l.replace(/^.*\(([0-9a-f]+), ([0-9a-f]+), ([0-9a-f]+),.*$/, '$2 $3')), out.slice(0, 3000)).toEqual(['1 0', '1 c8']);
  }, 180_000);

  it.skipIf(!existsSync('/usr/bin/ping'))('ping -c1 127.0.0.1: sockets, the echo request sent and its reply awaited', async () => {
    const { traced, strace } = await compared('/usr/bin/ping -c1 127.0.0.1');
    expect(strace.get(SYSCALL_NR.socket!)?.calls).toBeGreaterThan(0);
    expect(strace.get(SYSCALL_NR.sendto!)?.calls).toBeGreaterThan(0);
    // What it writes holds the round trip's time: as many writes, not the same lengths.
    const lengthsOff = (c: Census): Record<string, string> => ({ ...table(c), write: `${c.get(SYSCALL_NR.write!)?.calls ?? 0}` });
    expect(lengthsOff(traced)).toEqual(lengthsOff(strace));
  }, 180_000);

  /** The function tracer on `filter` while `cmd` runs under exec: the trace's lines (`comm: function <-parent`). */
  async function functions(filter: string, cmd: string): Promise<string[]> {
    const out = await execScript([
      'cd /sys/kernel/tracing',
      'echo > trace',
      `echo '${filter}' > set_ftrace_filter`,
      'echo 1 > tracing_on',
      'echo function > current_tracer',
      cmd,
      'echo 0 > tracing_on',
      'cat trace',
      // (a new tracer empties the buffer: read first)
      'echo nop > current_tracer',
      'echo > set_ftrace_filter',
      'echo 1 > tracing_on',
    ]);
    return out.split('\n').filter((l) => !l.startsWith('#') && l.trim()).map((l) => l.replace(/^\s*(\S+?)-\d+ .*?: /, '$1: '));
  }

  it.skipIf(!existsSync('/usr/bin/script'))('a write to a terminal and a read of it run the tty layer (a shell on the pty script(1) makes)', async () => {
    const l = await functions('pty_write n_tty_read', `SHELL=/bin/sh script -qc 'echo hi; head -c 1 > /dev/null' /dev/null < /etc/hostname > /dev/null`);
    expect(l, l.join('\n')).toContain('sh: pty_write <-n_tty_write');
    expect(l, l.join('\n')).toContain('head: n_tty_read <-tty_read');
  }, 180_000);

  it('the calls a shell and coreutils make besides reads and writes run their real trees: brk, mprotect, rt_sigaction, a sleep', async () => {
    const l = await functions('do_brk_flags mprotect_fixup do_sigaction hrtimer_nanosleep', `sh -c 'sleep 0.1; ls / > /dev/null'`);
    expect(l, l.join('\n')).toContain('ls: do_brk_flags <-__x64_sys_brk');
    expect(l, l.join('\n')).toContain('ls: mprotect_fixup <-do_mprotect_pkey');
    expect(l, l.join('\n')).toContain('sh: do_sigaction <-__x64_sys_rt_sigaction');
    expect(l, l.join('\n')).toContain('sleep: hrtimer_nanosleep <-common_nsleep');
  }, 180_000);

  it.skipIf(!existsSync('/usr/bin/perl'))('a TCP socket read and written over loopback runs the TCP stack', async () => {
    const perl = `my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1:0") or die; my $p = $s->sockport; if (!fork) { my $c = IO::Socket::INET->new("127.0.0.1:$p") or die; syswrite($c, "hi"); exit 0 } my $a = $s->accept; sysread($a, my $b, 2); wait; close($a)`;
    const l = await functions('tcp_sendmsg tcp_recvmsg tcp_close', `perl -MIO::Socket::INET -e '${perl}'`);
    expect(l, l.join('\n')).toContain('perl: tcp_sendmsg <-inet_sendmsg');
    expect(l, l.join('\n')).toContain('perl: tcp_recvmsg <-inet_recvmsg');
    expect(l.some((x) => /^perl: tcp_close <-/.test(x)), l.join('\n')).toBe(true);
  }, 180_000);

  it.skipIf(!existsSync('/usr/bin/perl'))('a unix stream socket and UDP over loopback run their protocols\' code, call by call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'e2e-traced-sock-'));
    try {
      const perl = [
        `my $l = IO::Socket::UNIX->new(Type => SOCK_STREAM, Local => "${dir}/s", Listen => 1) or die; my $c = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => "${dir}/s") or die`,
        'my $a = $l->accept; send($c, "hi", 0); recv($a, my $b, 2, 0)',
        'my $u = IO::Socket::INET->new(Proto => "udp", LocalAddr => "127.0.0.1:0") or die; my $v = IO::Socket::INET->new(Proto => "udp", PeerAddr => "127.0.0.1:" . $u->sockport) or die',
        'send($v, "hi", 0); recv($u, $b, 2, 0)',
      ].join('; ');
      const fns = 'unix_stream_connect unix_accept unix_stream_sendmsg unix_stream_recvmsg udp_init_sock udp_sendmsg udp_recvmsg';
      const l = await functions(fns, `perl -MIO::Socket::UNIX -MIO::Socket::INET -e '${perl}'`);
      // connect, accept4, sendto and recvfrom on the unix socket; socket, sendto and recvfrom for UDP
      for (const f of ['unix_stream_connect <-__sys_connect_file', 'unix_accept <-do_accept', 'unix_stream_sendmsg <-__sys_sendto', 'unix_stream_recvmsg <-sock_recvmsg', 'udp_init_sock <-inet_create', 'udp_sendmsg <-inet_sendmsg', 'udp_recvmsg <-inet_recvmsg']) {
        expect(l, l.join('\n')).toContain(`perl: ${f}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it.skipIf(!existsSync('/usr/bin/perf'))('perf ftrace -G vfs_read shows vfs_read called by cat, with its call tree', async () => {
    const r = await run(process.execPath, [CLI, 'exec', '--mount', mnt, '--', 'perf', 'ftrace', '-G', 'vfs_read', '--', 'cat', '/etc/hostname'], env);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const open = lines.findIndex((l) => /^ *\d+\) +\|  vfs_read\(\) \{$/.test(l));
    expect(open, r.stdout.slice(0, 3000)).toBeGreaterThanOrEqual(0);
    // vfs_read's children, one level deeper, before it closes (a timer interrupt taken inside it may come first, with its own tree)
    const close = lines.findIndex((l, i) => i > open && /^ *\d+\) .*\|  \}/.test(l));
    expect(close, r.stdout.slice(0, 3000)).toBeGreaterThan(open);
    expect(lines.slice(open + 1, close).some((l) => /^ *\d+\) .*\|    rw_verify_area\(\)/.test(l)), r.stdout.slice(0, 3000)).toBe(true);
  }, 180_000);

  it.skipIf(!existsSync('/usr/bin/trace-cmd'))('trace-cmd record -p function_graph -g vfs_read records vfs_read called by cat', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'e2e-traced-tc-'));
    try {
      const r = await run(
        process.execPath,
        [CLI, 'exec', '--mount', mnt, '--', 'sh', '-c', `cd ${dir} && trace-cmd record -p function_graph -g vfs_read sh -c 'sleep 1; exec cat /etc/hostname' > record.log 2>&1; trace-cmd report 2>/dev/null`],
        env,
      );
      const lines = r.stdout.split('\n');
      const why = () => `${readFileSync(join(dir, 'record.log'), 'utf8')}\n${r.stdout.slice(0, 4000)}`;
      expect(lines.some((l) => /^\s+cat-\d+ .*funcgraph_entry:.*\|\s+vfs_read\(\) \{/.test(l)), why()).toBe(true);
      expect(lines.some((l) => /^\s+cat-\d+ .*funcgraph_entry:.*\|\s+rw_verify_area\(\) \{/.test(l)), why()).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
