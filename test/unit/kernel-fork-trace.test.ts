/**
 * The check, in process: with sched_process_fork enabled, a process
 * that never touches the mount (`sh -c true`, reported by the proc
 * connector) shows up in `trace` with the right parent and child; with
 * sched_switch enabled, switches appear on every CPU.
 */
import { describe, expect, it } from 'vitest';
import { procEventLine } from '../../src/host/cn_proc.js';
import { hostEventLine } from '../../src/host/events.js';
import { ObserveLevel } from '../../src/host/observe_switch.js';
import { kernelEmu } from '../helpers/kernel.js';

const SHELL = { pid: 4400, uid: 0, gid: 0 };

describe('traces of the emulated kernel through tracefs', () => {
  it('sched_process_fork shows the fork of `sh -c true` with its parent and child', async () => {
    const { fs, proc, host } = kernelEmu();
    proc.set({ pid: SHELL.pid, comm: 'bash', ppid: 1, startTime: 5 });
    await fs.writeFile('events/sched/sched_process_fork/enable', '1', {}, SHELL);
    procEventLine(host.mirror, `F 1 ${SHELL.pid} ${SHELL.pid} 4401 4401`);
    procEventLine(host.mirror, 'E 1 4401 4401 sh\t/usr/bin/dash');
    procEventLine(host.mirror, 'X 1 4401 4401 0');
    const trace = await fs.readFile('trace', SHELL);
    const lines = trace.split('\n').filter((l) => l.includes('sched_process_fork'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\s+bash-4400\s+\[00\d\] \S{5}\s+[\d.]+: sched_process_fork: comm=bash pid=4400 child_comm=bash child_pid=4401$/);
  });

  it("a fork its tracer reports runs at once, and the proc connector's later line for it is the same fork", async () => {
    const { fs, proc, host } = kernelEmu();
    proc.set({ pid: SHELL.pid, comm: 'bash', ppid: 1, startTime: 5 });
    proc.set({ pid: 4402, comm: 'bash', ppid: SHELL.pid, startTime: 9 });
    const report = (l: string) => hostEventLine({ mirror: host.mirror, syscalls: host.syscalls, traced: host.traced, observed: () => ObserveLevel.Nothing }, l);
    const forks = async () => (await fs.readFile('trace', SHELL)).split('\n').filter((l) => l.includes('sched_process_fork'));
    await fs.writeFile('events/sched/sched_process_fork/enable', '1', {}, SHELL);
    report(`N ${SHELL.pid} 4402`);
    // The parent's next request is served before the connector's line is read: the fork is already in the trace.
    expect(await forks()).toHaveLength(1);
    report(`F 1 ${SHELL.pid} ${SHELL.pid} 4402 4402`);
    proc.procs.delete(4402);
    report('X 1 4402 4402 0');
    const lines = await forks();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/sched_process_fork: comm=bash pid=4400 child_comm=bash child_pid=4402$/);
    // The pid, used again by a later fork the connector reports alone, is a new process.
    proc.set({ pid: 4402, comm: 'bash', ppid: SHELL.pid, startTime: 12 });
    report(`F 1 ${SHELL.pid} ${SHELL.pid} 4402 4402`);
    expect(await forks()).toHaveLength(2);
  });

  it('a watched fork told by both, in either order and however late, runs once', async () => {
    const { fs, proc, host } = kernelEmu();
    proc.set({ pid: SHELL.pid, comm: 'sh', ppid: 1, startTime: 5 });
    const report = (l: string) => hostEventLine({ mirror: host.mirror, syscalls: host.syscalls, traced: host.traced, observed: () => ObserveLevel.Nothing }, l);
    const forks = async () => (await fs.readFile('trace', SHELL)).split('\n').filter((l) => / sched_process_(fork|exit):/.test(l));
    await fs.writeFile('events/sched/sched_process_fork/enable', '1', {}, SHELL);
    await fs.writeFile('events/sched/sched_process_exit/enable', '1', {}, SHELL);
    host.mirror.watch(host.mirror.taskOf(SHELL.pid));
    // The connector's line first, read when the child is gone already; then its tracer's.
    report(`F 1 ${SHELL.pid} ${SHELL.pid} 4403 4403`);
    report(`N ${SHELL.pid} 4403`);
    // Its tracer's line first; the child exits and is reaped before the connector's line is read.
    report(`N ${SHELL.pid} 4404`);
    report('X 1 4404 4404 0');
    report(`F 1 ${SHELL.pid} ${SHELL.pid} 4404 4404`);
    const lines = await forks();
    expect(lines.filter((l) => l.includes('child_pid=4403'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('child_pid=4404'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('sched_process_exit: comm=sh pid=4404'))).toHaveLength(1);
  });

  it('sched_switch shows switches on every CPU within a second, with plausible prev and next', async () => {
    const { k, fs, proc } = kernelEmu({ cpus: 4, activity: 1, virtualClock: true });
    k.stop();
    proc.set({ pid: SHELL.pid, comm: 'bash', ppid: 1, startTime: 5 });
    await fs.writeFile('events/sched/sched_switch/enable', '1', {}, SHELL);
    for (let t = 0; t < 1000; t += 10) {
      k.clock.advance(10_000_000);
      k.activity!.advance();
    }
    await fs.writeFile('events/sched/sched_switch/enable', '0', {}, SHELL);
    const lines = (await fs.readFile('trace', SHELL)).split('\n').filter((l) => l.includes('sched_switch:'));
    for (let cpu = 0; cpu < 4; cpu++) {
      const mine = lines.filter((l) => l.includes(`[00${cpu}]`));
      expect(mine.length).toBeGreaterThan(2);
      expect(mine.some((l) => l.includes(`prev_comm=swapper/${cpu} prev_pid=0`))).toBe(true);
    }
    expect(lines.some((l) => /next_comm=(rcu_preempt|kworker\/\d+:\d+|ksoftirqd\/\d+) /.test(l))).toBe(true);
  });
});
