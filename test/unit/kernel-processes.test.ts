/**
 * Real processes mirrored as tasks, with their lives inferred from /proc
 * (scripted here) or reported by the proc connector: fork in the parent,
 * exec when the comm changes, exit when the process is gone or its pid
 * reused; kernel threads with stable pids.
 */
import { describe, expect, it, vi } from 'vitest';
import { procEventLine, procEventsHelper } from '../../src/host/cn_proc.js';
import type { HostDriver } from '../../src/host/driver.js';
import { hostEventLines } from '../../src/host/events.js';
import { ObserveLevel } from '../../src/host/observe_switch.js';
import { execContext } from '../../src/kernel/cpu.js';
import { TRACE_FLAG_HARDIRQ, TRACE_FLAG_IRQS_OFF } from '../../src/kernel/context.js';
import { inOrder, kernelEmu, recordCalls, recordEvents, SCHED_EVENTS } from '../helpers/kernel.js';

const caller = (pid: number) => ({ pid, uid: 0, gid: 0 });

/** Where the events FIFO's lines go, for hostEventLines(), with nothing seeing system calls. */
const sinksOf = (host: HostDriver) => ({ mirror: host.mirror, syscalls: host.syscalls, traced: host.traced, observed: () => ObserveLevel.Nothing });

/** A watched shell, pid 900 (as under exec), the FIFO's sinks, and the scheduler's events from then on. */
function watchedShell() {
  const e = kernelEmu();
  e.proc.set({ pid: 900, comm: 'sh', ppid: 1, startTime: 5 });
  e.host.mirror.watch(e.host.mirror.taskOf(900));
  return { ...e, sinks: sinksOf(e.host), evs: recordEvents(e.k, SCHED_EVENTS) };
}

describe('process mirror', () => {
  it('runs kernel_clone in the parent for a process seen for the first time, then exec when its comm differs', async () => {
    const { k, fs, proc, taskOf } = kernelEmu();
    proc.set({ pid: 500, comm: 'bash', ppid: 1, startTime: 5 });
    proc.set({ pid: 501, comm: 'cat', ppid: 500, exe: '/usr/bin/cat' });
    const evs = recordEvents(k, SCHED_EVENTS);
    const calls = recordCalls(k, (n) => n === 'kernel_clone' || n === 'wake_up_new_task' || n === 'bprm_execve' || n === 'vfs_read');
    await fs.readFile('README', caller(501));
    const fork = evs.find((e) => e.name === 'sched_process_fork')!;
    expect(fork.args).toMatchObject({ parent_comm: 'bash', parent_pid: 500, child_comm: 'bash', child_pid: 501 });
    expect(fork.pid).toBe(500);
    const exec = evs.find((e) => e.name === 'sched_process_exec')!;
    expect(exec.args).toMatchObject({ filename: '/usr/bin/cat', pid: 501, old_pid: 501 });
    expect(exec.comm).toBe('cat');
    expect(inOrder(evs.map((e) => e.name), ['sched_process_fork', 'sched_wakeup_new', 'sched_process_exec'])).toBe(true);
    expect(calls.map((c) => `${c.name}/${c.pid}`)).toEqual(expect.arrayContaining(['kernel_clone/500', 'wake_up_new_task/500', 'bprm_execve/501', 'vfs_read/501']));
    // kernel_clone's argument is a kernel_clone_args of a fork (SIGCHLD).
    const kc = calls.find((c) => c.name === 'kernel_clone')!;
    expect(k.structs.get(kc.regs.get('di'), 'kernel_clone_args', 'flags')).toBe(17n);
    // The task is laid out as task_struct.
    const t = taskOf(caller(501));
    expect(k.structs.get(t.addr, 'task_struct', 'pid')).toBe(501n);
    expect(k.structs.get(t.addr, 'task_struct', 'tgid')).toBe(501n);
    expect(k.kernelMemory.readCString(k.structs.addrOf(t.addr, 'task_struct', 'comm')!)).toBe('cat');
    expect(k.structs.get(t.addr, 'task_struct', 'real_parent')).toBe(k.tasks.get(500)!.addr);
  });

  it("a child is born with its parent's policy and priority (sched_fork); what it set since (chrt) shows from its exec", async () => {
    const { k, fs, proc } = kernelEmu();
    proc.set({ pid: 500, comm: 'sh', ppid: 1, startTime: 5 });
    // Read late: the child already made itself SCHED_FIFO 10 (priority -11: prio 89) and exec'd.
    proc.set({ pid: 501, comm: 'sleep', ppid: 500, exe: '/usr/bin/sleep', priority: -11, policy: 1 });
    const evs = recordEvents(k, SCHED_EVENTS);
    await fs.readFile('README', caller(501));
    expect(evs.find((e) => e.name === 'sched_wakeup_new')?.args).toMatchObject({ pid: 501, prio: 120 });
    expect(evs.find((e) => e.name === 'sched_process_exec')?.comm).toBe('sleep');
    const t = k.tasks.get(501)!;
    expect({ prio: t.prio, policy: t.policy }).toEqual({ prio: 89, policy: 1 });
  });

  it('a process already gone when its watched call is read is born of the parent the watcher saw (its fork line may come later)', () => {
    const { k, proc, host } = kernelEmu();
    proc.set({ pid: 900, comm: 'sh', ppid: 1, startTime: 5 });
    const evs = recordEvents(k, SCHED_EVENTS);
    const calls = recordCalls(k, (n) => n === 'kernel_clone');
    // (as the watcher's replay asks: a process using the emulator)
    const t = host.mirror.taskOf(901, 'ping', 900, true);
    expect(t.comm).toBe('ping');
    expect(t.ppid).toBe(900);
    expect(evs.find((e) => e.name === 'sched_process_fork')!.args).toMatchObject({ parent_pid: 900, child_pid: 901 });
    expect(calls.map((c) => `${c.name}/${c.pid}`)).toEqual(['kernel_clone/900']);
    // the proc connector's fork and exec, read afterwards, change nothing
    host.mirror.onFork(900, 901, 901);
    host.mirror.onExec(901, 'ping');
    expect(evs.filter((e) => e.name === 'sched_process_fork' || e.name === 'sched_process_exec').map((e) => e.name)).toEqual(['sched_process_fork', 'sched_process_exec']);
    // without a parent, as before: adopted under init, no birth invented
    evs.length = 0;
    expect(host.mirror.taskOf(902, 'gone').ppid).toBe(1);
    expect(evs.filter((e) => e.name === 'sched_process_fork')).toEqual([]);
  });

  it('a fork of a pid still held by a process whose exit went unreported ends that one and forks anew (pid reuse)', () => {
    const { k, proc, host } = kernelEmu();
    proc.set({ pid: 970, comm: 'sh', ppid: 1, startTime: 5 });
    // A watched shell (as under exec): its children's lives run their kernel paths.
    host.mirror.watch(host.mirror.taskOf(970));
    proc.set({ pid: 971, comm: 'echo', ppid: 970, startTime: 6 });
    host.mirror.onFork(970, 971, 971);
    const old = k.tasks.process(971)!;
    // 971 exits, its exit is lost, and the pid comes back for a subshell of the same shell.
    proc.set({ pid: 971, comm: 'sh', ppid: 970, startTime: 90 });
    const evs = recordEvents(k, SCHED_EVENTS);
    const calls = recordCalls(k, (n) => n === 'kernel_clone');
    host.mirror.onFork(970, 971, 971);
    expect(old.exited).toBe(true);
    expect(k.tasks.process(971)).not.toBe(old);
    expect(evs.filter((e) => e.name === 'sched_process_fork').map((e) => e.args.child_pid)).toEqual([971]);
    expect(calls.map((c) => `${c.name}/${c.pid}`)).toEqual(['kernel_clone/970']);
    // Its fork line read again changes nothing: the task is that process.
    host.mirror.onFork(970, 971, 971);
    expect(evs.filter((e) => e.name === 'sched_process_fork')).toHaveLength(1);
  });

  it('when the proc connector lost events (its helper says L), mirrored processes gone meanwhile exit at once', () => {
    const { k, proc, host } = kernelEmu();
    proc.set({ pid: 980, comm: 'sh', ppid: 1, startTime: 5 });
    proc.set({ pid: 981, comm: 'echo', ppid: 980, startTime: 6 });
    procEventLine(host.mirror, 'F 1 980 980 981 981');
    const echo = k.tasks.process(981)!;
    const evs = recordEvents(k, ['sched_process_exit']);
    // Its exit was among the events dropped.
    proc.procs.delete(981);
    expect(echo.exited).toBe(false);
    procEventLine(host.mirror, 'L');
    expect(echo.exited).toBe(true);
    expect(evs.map((e) => e.args.pid)).toEqual([981]);
    expect(k.tasks.process(980)!.exited).toBe(false);
  });

  it('a watched process that ran outside the mount while its task slept is woken and switched in (its schedstat count moved)', () => {
    const { k, proc, host } = kernelEmu();
    proc.set({ pid: 950, comm: 'sh', ppid: 1, startTime: 5 });
    proc.set({ pid: 951, comm: 'ping', ppid: 950, startTime: 5, switches: 4 });
    const ping = host.mirror.taskOf(951);
    host.mirror.watch(ping);
    expect(k.sched.sleeping(ping)).toBe(true);
    const evs = recordEvents(k, SCHED_EVENTS);
    host.sched!.poll();
    // the first look only counts; an unwatched process is never looked at
    proc.set({ pid: 950, comm: 'sh', ppid: 1, startTime: 5, switches: 9 });
    host.sched!.poll();
    expect(evs).toEqual([]);
    proc.set({ pid: 951, comm: 'ping', ppid: 950, startTime: 5, switches: 6 });
    host.sched!.poll();
    const seen = evs.map((e) => `${e.name} ${String(e.args.comm ?? e.args.next_comm ?? '')}`);
    expect(seen).toEqual(['sched_waking ping', 'sched_wakeup ping', 'sched_switch ping']);
    expect(k.cpus[ping.cpu]!.curr).toBe(ping);
    // running already: nothing more, but it counts as busy (its calls may be answered without the kernel seeing them)
    ping.lastSyscallNs -= 30_000_000;
    proc.set({ pid: 951, comm: 'ping', ppid: 950, startTime: 5, switches: 7 });
    host.sched!.poll();
    expect(evs).toHaveLength(3);
    expect(k.clock.now() - ping.lastSyscallNs).toBeLessThan(1_000_000);
    // asleep on the host, and no call for a while: switched out with that state (not before)
    proc.set({ pid: 951, comm: 'ping', ppid: 950, startTime: 5, switches: 7, state: 'S' });
    host.sched!.poll();
    expect(evs).toHaveLength(3);
    ping.lastSyscallNs -= 30_000_000;
    host.sched!.poll();
    expect(evs.slice(3).map((e) => `${e.name} ${String(e.args.prev_comm)} ${String(e.args.prev_state)}`)).toEqual(['sched_switch ping 1']);
    expect(k.sched.sleeping(ping)).toBe(true);
    // left runnable while others ran, asleep on the host meanwhile: off the runqueue, without an event
    k.sched.wake(ping);
    expect(k.sched.sleeping(ping)).toBe(false);
    host.sched!.poll();
    expect(k.sched.sleeping(ping)).toBe(true);
    expect(evs).toHaveLength(4);
  });

  it('mirrors processes older than the emulator without inventing their birth', async () => {
    const { k, fs, proc, taskOf } = kernelEmu();
    proc.set({ pid: 600, comm: 'sshd', ppid: 1, startTime: 3 });
    const evs = recordEvents(k, SCHED_EVENTS);
    await fs.readFile('README', caller(600));
    expect(evs.filter((e) => e.name.startsWith('sched_process'))).toEqual([]);
    expect(taskOf(caller(600)).comm).toBe('sshd');
  });

  it('notices an exit (do_exit, prev_state Z, wait, free) and a reused pid', async () => {
    const { k, fs, proc, host } = kernelEmu();
    proc.set({ pid: 700, comm: 'sh', ppid: 1, startTime: 5 });
    proc.set({ pid: 701, comm: 'sh', ppid: 700, startTime: 2000 });
    await fs.readFile('README', caller(701));
    const evs = recordEvents(k, SCHED_EVENTS);
    const calls = recordCalls(k, (n) => n === 'do_exit' || n === 'kernel_clone');
    proc.procs.delete(701);
    host.mirror.checkExits();
    expect(inOrder(evs.map((e) => e.name), ['sched_process_exit', 'sched_switch', 'sched_process_wait', 'sched_process_free'])).toBe(true);
    const sw = evs.find((e) => e.name === 'sched_switch' && e.args.prev_pid === 701)!;
    expect(sw.args.prev_state).toBe(0x20);
    expect(evs.find((e) => e.name === 'sched_process_wait')!.pid).toBe(700);
    expect(calls.map((c) => c.name)).toEqual(['do_exit']);
    expect(k.tasks.process(701)).toBeUndefined();
    // The same pid, a younger process: a new fork.
    proc.set({ pid: 701, comm: 'sh', ppid: 700, startTime: 3000 });
    evs.length = 0;
    await fs.readFile('README', caller(701));
    expect(evs.find((e) => e.name === 'sched_process_fork')!.args.child_pid).toBe(701);
  });

  it('a request of a process served after its exit was reported is its own: no task named <...>, and the zombie is never switched in again', async () => {
    const { k, fs, proc, host } = kernelEmu();
    proc.set({ pid: 750, comm: 'sh', ppid: 1, startTime: 5 });
    proc.set({ pid: 751, comm: 'trace-cmd', ppid: 750, startTime: 2000 });
    await fs.readFile('README', caller(751));
    const task = k.tasks.process(751)!;
    const evs = recordEvents(k, ['sched_switch']);
    // The connector reports the exit (its parent reaps it), the host's /proc still shows the zombie or nothing at all.
    procEventLine(host.mirror, 'X 1 751 751 0');
    for (const gone of [false, true]) {
      if (gone) proc.procs.delete(751);
      await fs.readFile('README', caller(751)).catch(() => undefined);
    }
    // Nor does the scheduler switch it in when asked to.
    k.sched.ensureRunning(task);
    k.sched.schedule(k.sched.cpuOf(task), 'R', task);
    const switches = evs.map((e) => e.args as { prev_pid: number; prev_state: number; next_pid: number; next_comm: string; prev_comm: string });
    expect(switches.some((a) => a.prev_pid === 751 && a.prev_state === 0x20)).toBe(true);
    const zombie = switches.findIndex((a) => a.prev_pid === 751 && a.prev_state === 0x20);
    expect(switches.slice(zombie).filter((a) => a.next_pid === 751)).toEqual([]);
    expect(switches.filter((a) => a.next_comm === '<...>' || a.prev_comm === '<...>')).toEqual([]);
    expect(k.tasks.process(751)).toBeUndefined();
  });

  it('a reused pid seen before the exit check: the old one exits, then the new one is forked', async () => {
    const { k, fs, proc } = kernelEmu();
    proc.set({ pid: 800, comm: 'sh', ppid: 1, startTime: 5 });
    proc.set({ pid: 801, comm: 'cat', ppid: 800, startTime: 2000 });
    await fs.readFile('README', caller(801));
    proc.set({ pid: 801, comm: 'cat', ppid: 800, startTime: 2500 });
    const evs = recordEvents(k, SCHED_EVENTS);
    await fs.readFile('README', caller(801));
    expect(inOrder(evs.map((e) => e.name), ['sched_process_exit', 'sched_process_free', 'sched_process_fork', 'sched_process_exec'])).toBe(true);
  });

  it("reads nothing in /proc for a process whose exit is among the lines read with its fork and exec (its pid may be another's by then)", () => {
    const { k, proc, host } = kernelEmu();
    proc.set({ pid: 900, comm: 'sh', ppid: 1, startTime: 5 });
    host.mirror.watch(host.mirror.taskOf(900));
    // By the time the lines are read, 901 exited and its pid went to another process.
    proc.set({ pid: 901, comm: 'other', ppid: 1, startTime: 99, exe: '/usr/bin/other', cpu: 1, priority: -51, policy: 1 });
    const stat = vi.spyOn(proc, 'stat');
    const exe = vi.spyOn(proc, 'exe');
    const evs = recordEvents(k, SCHED_EVENTS);
    const sinks = sinksOf(host);
    hostEventLines(sinks, ['F 0 900 900 901 901', 'E 0 901 901 \t', 'X 0 901 901 0']);
    expect(stat.mock.calls.filter(([pid]) => pid === 901)).toEqual([]);
    expect(exe.mock.calls).toEqual([]);
    expect(evs.find((e) => e.name === 'sched_process_fork')!.args).toMatchObject({ parent_pid: 900, child_comm: 'sh', child_pid: 901 });
    // The helper could read neither its comm nor its file: nothing is taken from the pid's new owner.
    expect(evs.filter((e) => e.name === 'sched_process_exit').map((e) => [e.args.pid, e.args.prio])).toEqual([[901, 120]]);
    expect(evs.some((e) => e.comm === 'other' || e.args.comm === 'other' || e.args.next_comm === 'other')).toBe(false);
    // Lines read later are of whatever has the pid now: the new process is read from /proc.
    stat.mockClear();
    hostEventLines(sinks, ['F 1 900 900 901 901']);
    expect(stat.mock.calls.filter(([pid]) => pid === 901).length).toBeGreaterThan(0);
  });

  it("a watched process's exit said by its tracer runs at once, and once, whichever teller is read first — also when its pid is soon another's", () => {
    const { k, proc, host, sinks, evs } = watchedShell();
    const exits = () => evs.filter((e) => e.name === 'sched_process_exit').map((e) => e.args.pid);
    const forks = () => evs.filter((e) => e.name === 'sched_process_fork').map((e) => e.args.child_pid);
    proc.set({ pid: 901, comm: 'sh', ppid: 900, startTime: 6 });
    hostEventLines(sinks, ['N 900 901', 'D 901 256']);
    const first = k.tasks.process(901);
    expect(exits()).toEqual([901]);
    // The pid goes to the shell's next child before the proc connector's lines for the first one are read.
    proc.set({ pid: 901, comm: 'sh', ppid: 900, startTime: 7 });
    hostEventLines(sinks, ['N 900 901']);
    const second = k.tasks.process(901)!;
    expect(second).not.toBe(first);
    hostEventLines(sinks, ['F 0 900 900 901 901', 'X 0 901 901 256', 'F 0 900 900 901 901']);
    expect(second.exited).toBe(false);
    expect(exits()).toEqual([901]);
    expect(forks()).toEqual([901, 901]);
    // The connector first: its exit runs, the tracer's line for it changes nothing.
    hostEventLines(sinks, ['X 0 901 901 0', 'D 901 0']);
    expect(second.exited).toBe(true);
    expect(exits()).toEqual([901, 901]);
    // An exit said by the tracer for a task nobody knows: nothing.
    hostEventLines(sinks, ['D 955 0']);
    expect(exits()).toEqual([901, 901]);
  });

  it('a process that slept unseen since its fork (its tracer says how long) sleeps, then is woken and switched in to exit', () => {
    const { k, proc, sinks, evs } = watchedShell();
    const life = (pid: number) =>
      evs
        .filter((e) => (e.args.pid ?? e.args.child_pid ?? e.args.prev_pid) === pid || e.args.next_pid === pid)
        .map((e) => (e.name === 'sched_switch' ? `switch ${e.args.prev_pid === pid ? `out ${String(e.args.prev_state)}` : 'in'}` : e.name));
    proc.set({ pid: 901, comm: 'sleep', ppid: 900, startTime: 6 });
    hostEventLines(sinks, ['N 900 901\tsh']);
    k.sched.ensureRunning(k.tasks.process(901)!);
    evs.length = 0;
    // 100 ms asleep on the host, no call since its fork: it slept (state 1: S), was woken, ran its exit.
    hostEventLines(sinks, ['D 901 0 100000000\tsleep']);
    expect(life(901).slice(0, 6)).toEqual(['switch out 1', 'sched_waking', 'sched_wakeup', 'switch in', 'sched_process_exit', 'switch out 32']);
    // 5 ms off the CPU is no sleep the scheduler would have seen; nor is time off the CPU of one that made calls since.
    proc.set({ pid: 902, comm: 'true', ppid: 900, startTime: 7 });
    proc.set({ pid: 903, comm: 'cat', ppid: 900, startTime: 7 });
    hostEventLines(sinks, ['N 900 902\tsh', 'N 900 903\tsh']);
    for (const pid of [902, 903]) k.sched.ensureRunning(k.tasks.process(pid)!);
    k.tasks.process(903)!.lastSyscallNs = k.clock.now() + 1;
    evs.length = 0;
    hostEventLines(sinks, ['D 902 0 5000000\ttrue', 'D 903 0 100000000\tcat']);
    expect(life(902)).not.toContain('sched_wakeup');
    expect(life(903)).not.toContain('sched_wakeup');
    expect(evs.filter((e) => e.name === 'sched_process_exit').map((e) => e.args.pid)).toEqual([902, 903]);
  });

  it('a shell the host has asleep (in wait4) is not preempted by its child\'s exit: it sleeps, and the child runs from idle', () => {
    const { k, proc, sinks, evs } = watchedShell();
    const sh = k.tasks.process(900)!;
    const switches = () => evs.filter((e) => e.name === 'sched_switch').map((e) => `${String(e.args.prev_pid)}:${String(e.args.prev_state)}>${String(e.args.next_pid)}`);
    for (const [child, hostState] of [[901, 'S'], [902, 'R']] as const) {
      proc.set({ pid: 900, comm: 'sh', ppid: 1, startTime: 5, state: hostState });
      proc.set({ pid: child, comm: 'sh', ppid: 900, startTime: 6 });
      hostEventLines(sinks, [`N 900 ${child}\tsh`]);
      // The child was placed on the shell's CPU, where the shell runs.
      k.sched.migrate(k.tasks.process(child)!, sh.cpu);
      k.sched.ensureRunning(sh);
      evs.length = 0;
      hostEventLines(sinks, [`D ${child} 0\tsh`]);
      // Asleep there: switched out with S, the child in from what runs next; running there: preempted (R+, 256).
      expect(switches()[0]).toBe(hostState === 'S' ? `900:1>${child}` : `900:256>${child}`);
    }
  });

  it("a watched process's exec not yet said by the proc connector runs before the fork or exit its tracer says next", () => {
    const { k, proc, host, sinks, evs } = watchedShell();
    const lives = () => evs.filter((e) => e.name === 'sched_process_exec' || e.name === 'sched_process_fork' || e.name === 'sched_process_exit').map((e) => `${e.name}/${e.args.pid ?? e.args.child_pid}/${e.args.filename ?? e.args.parent_comm ?? e.args.comm}`);
    // sh runs /tmp/outsider (its execve() reported before it ran), which forks before the connector's exec line is read.
    host.mirror.execCalled(900, '/tmp/outsider');
    proc.set({ pid: 900, comm: 'outsider', ppid: 1, startTime: 5, exe: '/tmp/outsider' });
    proc.set({ pid: 901, comm: 'outsider', ppid: 900, startTime: 6 });
    hostEventLines(sinks, ['N 900 901\toutsider', 'E 0 900 900 outsider\t/tmp/outsider']);
    expect(lives()).toEqual(['sched_process_exec/900//tmp/outsider', 'sched_process_fork/901/outsider']);
    // The child runs /bin/true and exits before the connector's exec line for it is read: the exec is not lost.
    evs.length = 0;
    host.mirror.execCalled(901, '/bin/true');
    hostEventLines(sinks, ['D 901 0\ttrue', 'E 0 901 901 true\t/usr/bin/true', 'X 0 901 901 0']);
    expect(lives()).toEqual(['sched_process_exec/901//bin/true', 'sched_process_exit/901/true']);
    // A rename (prctl) is no exec, and neither is an execve() that failed (the old name).
    evs.length = 0;
    host.mirror.execCalled(900, '/nonexistent');
    proc.set({ pid: 902, comm: 'renamed', ppid: 900, startTime: 7 });
    hostEventLines(sinks, ['N 900 902\toutsider', 'C 0 900 900 renamed', 'N 900 903\trenamed']);
    expect(lives().filter((l) => l.startsWith('sched_process_exec'))).toEqual([]);
  });

  it("with the processes of exec only, the machine's others are not followed: their forks, execs and exits are in no trace", () => {
    const { k, proc, host, fs } = kernelEmu({}, { processes: 'exec' });
    proc.set({ pid: 900, comm: 'bash', ppid: 1, startTime: 5 });
    proc.set({ pid: 901, comm: 'bash', ppid: 900, startTime: 6 });
    const evs = recordEvents(k, SCHED_EVENTS);
    procEventLine(host.mirror, 'F 1 900 900 901 901');
    procEventLine(host.mirror, 'E 1 901 901 make\t/usr/bin/make');
    procEventLine(host.mirror, 'X 1 901 901 0');
    expect(evs.filter((e) => e.name.startsWith('sched_process_'))).toEqual([]);
    expect(k.tasks.process(900)).toBeUndefined();
    // A caller of the mount is known: its exit is followed, but not the children it never made watched.
    void fs.stat('', caller(900));
    procEventLine(host.mirror, 'F 1 900 900 902 902');
    expect(k.tasks.process(902)).toBeUndefined();
    // A watched process's children are followed from the connector's lines too.
    host.mirror.watch(k.tasks.process(900)!);
    proc.set({ pid: 903, comm: 'bash', ppid: 900, startTime: 8 });
    procEventLine(host.mirror, 'F 1 900 900 903 903');
    procEventLine(host.mirror, 'E 1 903 903 cat\t/usr/bin/cat');
    procEventLine(host.mirror, 'X 1 903 903 0');
    procEventLine(host.mirror, 'C 1 900 900 renamed');
    expect(evs.filter((e) => e.name === 'sched_process_fork' || e.name === 'sched_process_exec' || e.name === 'sched_process_exit').map((e) => `${e.name}/${e.args.child_pid ?? e.args.pid}`)).toEqual([
      'sched_process_fork/903',
      'sched_process_exec/903',
      'sched_process_exit/903',
    ]);
    expect(k.tasks.process(900)!.comm).toBe('renamed');
    procEventLine(host.mirror, 'X 1 900 900 0');
    expect(k.tasks.process(900)?.exited ?? true).toBe(true);
  });

  it('follows the proc connector: a process that never touches the mount forks, execs and exits', () => {
    const { k, proc, host } = kernelEmu();
    proc.set({ pid: 900, comm: 'bash', ppid: 1, startTime: 5 });
    const evs = recordEvents(k, SCHED_EVENTS);
    procEventLine(host.mirror, 'F 1 900 900 901 901');
    procEventLine(host.mirror, 'E 1 901 901 sh\t/usr/bin/dash');
    procEventLine(host.mirror, 'X 1 901 901 0');
    const names = evs.map((e) => e.name);
    expect(inOrder(names, ['sched_process_fork', 'sched_wakeup_new', 'sched_process_exec', 'sched_process_exit', 'sched_process_free'])).toBe(true);
    expect(evs.find((e) => e.name === 'sched_process_fork')!.args).toMatchObject({ parent_comm: 'bash', parent_pid: 900, child_comm: 'bash', child_pid: 901 });
    expect(evs.find((e) => e.name === 'sched_process_exec')!.args).toMatchObject({ filename: '/usr/bin/dash', pid: 901 });
    // A thread: same tgid, no wait by the parent.
    procEventLine(host.mirror, 'F 0 900 900 902 900');
    expect(k.tasks.process(902)!.tgid).toBe(900);
  });

  it("runs the call trees of the lives of processes that use the emulator, and only the events of the machine's others", () => {
    const { k, proc, host, fs } = kernelEmu();
    proc.set({ pid: 900, comm: 'bash', ppid: 1, startTime: 5 });
    const evs = recordEvents(k, SCHED_EVENTS);
    const calls = recordCalls(k, (n) => n === 'kernel_clone' || n === 'bprm_execve' || n === 'do_exit');
    // a process somewhere on the machine: its events, none of its calls
    procEventLine(host.mirror, 'F 1 900 900 901 901');
    procEventLine(host.mirror, 'E 1 901 901 make\t/usr/bin/make');
    procEventLine(host.mirror, 'X 1 901 901 0');
    expect(inOrder(evs.map((e) => e.name), ['sched_process_fork', 'sched_process_exec', 'sched_process_exit'])).toBe(true);
    expect(calls).toEqual([]);
    // once bash makes a request on the mount, its lives run their trees, and so does the exec of a child it forks
    void fs.stat('', { pid: 900, uid: 0, gid: 0 });
    procEventLine(host.mirror, 'F 1 900 900 903 903');
    expect(calls.map((c) => `${c.name}/${c.pid}`)).toEqual(['kernel_clone/900']);
    // the child of a watched process is watched: its exec and exit run their trees
    host.mirror.watch(k.tasks.process(900)!);
    procEventLine(host.mirror, 'F 1 900 900 904 904');
    procEventLine(host.mirror, 'E 1 904 904 cat\t/usr/bin/cat');
    procEventLine(host.mirror, 'X 1 904 904 0');
    expect(calls.map((c) => `${c.name}/${c.pid}`)).toEqual(['kernel_clone/900', 'kernel_clone/900', 'bprm_execve/904', 'do_exit/904']);
  });

  it('two busy processes on one host CPU run on two emulated CPUs (an idle one their affinity allows), not taking turns at every call', async () => {
    const { k, fs, proc } = kernelEmu({ cpus: 2 });
    proc.set({ pid: 700, comm: 'trace-cmd', ppid: 1, startTime: 5, cpu: 0, allowed: [0, 1] });
    proc.set({ pid: 701, comm: 'trace-cmd', ppid: 1, startTime: 5, cpu: 0, allowed: [0, 1] });
    proc.set({ pid: 702, comm: 'taskset', ppid: 1, startTime: 5, cpu: 0, allowed: [0] });
    const evs = recordEvents(k, ['sched_switch']);
    // Born where the host says (both on CPU 0): the second preempts the first once.
    for (const pid of [700, 701]) await fs.readFile('README', caller(pid));
    evs.length = 0;
    for (let i = 0; i < 10; i++) for (const pid of [700, 701]) await fs.readFile('README', caller(pid));
    const mine = evs.filter((e) => [700, 701].includes(e.args.prev_pid as number) && [700, 701].includes(e.args.next_pid as number));
    expect(mine).toEqual([]);
    expect(new Set([k.tasks.get(700)!.cpu, k.tasks.get(701)!.cpu])).toEqual(new Set([0, 1]));
    // One pinned to CPU 0 stays there, busy as CPU 0 is.
    await fs.readFile('README', caller(702));
    expect(k.tasks.get(702)!.cpu).toBe(0);
  });

  it('a child waiting on its parent\'s CPU that the host moved before it exec\'d (taskset) runs where the host says, not where it waited', async () => {
    const { k, fs, proc, host } = kernelEmu({ cpus: 2 });
    proc.set({ pid: 720, comm: 'sh', ppid: 1, startTime: 5, cpu: 1, allowed: [0, 1] });
    const sh = host.mirror.taskOf(720, 'sh', 1, true);
    k.sched.ensureRunning(sh);
    expect(sh.cpu).toBe(1);
    proc.set({ pid: 721, comm: 'sh', ppid: 720, startTime: 6, cpu: 1, allowed: [0, 1] });
    host.mirror.onFork(720, 721, 721, 1);
    const child = k.tasks.get(721)!;
    expect(k.cpus[1]!.runqueue).toContain(child);
    // taskset -c 0: pinned and moved, then it execs echo
    proc.set({ pid: 721, comm: 'echo', ppid: 720, startTime: 6, cpu: 0, allowed: [0] });
    host.mirror.onExec(721, 'echo');
    expect(child.cpu).toBe(0);
    expect(k.cpus[1]!.runqueue).not.toContain(child);
    // its request: still on CPU 0, and CPU 1 never switches to it
    k.sched.ensureRunning(sh);
    await fs.readFile('README', caller(721));
    expect(child.cpu).toBe(0);
    expect(k.cpus[1]!.runqueue).not.toContain(child);
    expect(k.cpus[1]!.curr).not.toBe(child);
  });

  it('with no CPU idle, a process calling where another has not had its first tick yet goes where the running task has', async () => {
    const { k, fs, proc } = kernelEmu({ cpus: 2, virtualClock: true });
    for (const pid of [710, 711, 712]) proc.set({ pid, comm: `p${pid}`, ppid: 1, startTime: 5, cpu: pid === 712 ? 1 : 0, allowed: [0, 1] });
    await fs.readFile('README', caller(712)); // CPU 1, long since
    await fs.readFile('README', caller(710)); // CPU 0
    k.clock.advance(10_000_000);
    await fs.readFile('README', caller(710)); // still running: its slice starts over only when switched in
    await fs.readFile('README', caller(711)); // born on CPU 0, preempting 710 once
    const evs = recordEvents(k, ['sched_switch']);
    for (let i = 0; i < 10; i++) for (const pid of [710, 711]) await fs.readFile('README', caller(pid));
    const between = evs.filter((e) => [710, 711].includes(e.args.prev_pid as number) && [710, 711].includes(e.args.next_pid as number));
    expect(between).toEqual([]);
    expect(new Set([k.tasks.get(710)!.cpu, k.tasks.get(711)!.cpu])).toEqual(new Set([0, 1]));
  });

  it('leaves the host\'s kernel threads (children of kthreadd) out: the emulated kernel has its own', () => {
    const { k, proc, host } = kernelEmu();
    proc.set({ pid: 4430, comm: 'kworker/u8:3', ppid: 2, startTime: 5 });
    const evs = recordEvents(k, SCHED_EVENTS);
    host.mirror.onFork(2, 4430, 4430);
    expect(k.tasks.get(4430)).toBeUndefined();
    expect(evs).toEqual([]);
  });

  it('has kernel threads with stable pids, per CPU', () => {
    const { k } = kernelEmu({ cpus: 4 });
    expect(k.tasks.get(0)!.comm).toBe('swapper/0');
    expect(k.tasks.idle.map((t) => t.comm)).toEqual(['swapper/0', 'swapper/1', 'swapper/2', 'swapper/3']);
    expect(k.tasks.get(2)!.comm).toBe('kthreadd');
    expect(k.tasks.get(15)!.comm).toBe('rcu_preempt');
    for (let c = 0; c < 4; c++) {
      expect(k.tasks.byRole('ksoftirqd', c)[0]!.comm).toBe(`ksoftirqd/${c}`);
      expect(k.tasks.byRole('migration', c)[0]!.prio).toBe(0);
    }
    const again = kernelEmu({ cpus: 4 }).k;
    expect(again.tasks.kthreads.map((t) => `${t.pid}:${t.comm}`)).toEqual(k.tasks.kthreads.map((t) => `${t.pid}:${t.comm}`));
  });

  it('builds and runs the proc connector helper where the machine allows it', async () => {
    if (process.getuid?.() !== 0) return;
    const bin = procEventsHelper();
    if (!bin) return;
    const { spawn, spawnSync } = await import('node:child_process');
    const child = spawn(bin, [], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((r) => setTimeout(r, 300));
    const sh = spawnSync('sh', ['-c', 'true']);
    await new Promise((r) => setTimeout(r, 300));
    child.kill();
    if (!out.startsWith('R\n')) return; // not allowed here (no CAP_NET_ADMIN in the initial netns)
    expect(out).toMatch(new RegExp(`^F \\d+ ${process.pid} \\d+ ${sh.pid} ${sh.pid}$`, 'm'));
    expect(out).toMatch(new RegExp(`^X \\d+ ${sh.pid} ${sh.pid} 0$`, 'm'));
  });
});

describe('interrupts', () => {
  it('a timer tick can strike in the middle of a call path, in hardirq context', async () => {
    const { k, fs, proc, taskOf } = kernelEmu({ activity: 1, virtualClock: true });
    k.stop();
    proc.set({ pid: 1000, comm: 'cat', ppid: 1, startTime: 5 });
    const t = taskOf(caller(1000));
    const flags: number[] = [];
    const where: string[][] = [];
    recordCalls(k, (n) => n === 'hrtimer_interrupt' || /^(vfs_read|rw_verify_area|security_file_permission|apparmor_file_permission|aa_file_perm|__rcu_read_lock|__rcu_read_unlock|bpf_lsm_file_permission|simple_read_from_buffer|seq_read\w*|mutex_\w+)$/.test(n));
    const exec = k.exec;
    const inner = exec.fentry;
    exec.fentry = (ip, p, regs, task) => {
      inner(ip, p, regs, task);
      const name = k.symbols.lookup(ip)!.sym.name;
      // Time passes while the read runs: a tick falls due.
      if (name !== 'hrtimer_interrupt') k.clock.advance(1_000_000);
      if (name !== 'hrtimer_interrupt') return;
      flags.push(execContext(task, k.cpus[task.cpu]).flags);
      where.push(task.frames.map((f) => f.fn.name));
    };
    k.clock.advance(1_000_000_000);
    k.sched.ensureRunning(t);
    k.activity!.maybeTick(t, undefined);
    await fs.readFile('README', caller(1000));
    const inCall = where.findIndex((w) => w.includes('do_syscall_64'));
    expect(inCall).toBeGreaterThanOrEqual(0);
    expect(where[inCall]).toEqual(expect.arrayContaining(['do_syscall_64', 'vfs_read', '__sysvec_apic_timer_interrupt', 'hrtimer_interrupt']));
    expect(flags[inCall]! & TRACE_FLAG_HARDIRQ).toBeTruthy();
    expect(flags[inCall]! & TRACE_FLAG_IRQS_OFF).toBeTruthy();
    expect(t.frames).toHaveLength(0);
    expect(t.preemptCount).toBe(0);
  });
});
