import { describe, expect, it } from 'vitest';
import { ctxOf, emulator, fireSwitch } from '../helpers/events.js';

describe('recording through tracepoints', () => {
  it('attaches the probe only while enabled, and records in the kernel layout', async () => {
    const { w, tp, top, lines } = emulator();
    expect(tp.enabled('sched_switch')).toBe(false);
    fireSwitch(tp, [10, 'sh'], [0, 'swapper/0']);
    expect(top).toHaveLength(0);
    await w('events/sched/sched_switch/enable', '1\n');
    expect(tp.enabled('sched_switch')).toBe(true);
    fireSwitch(tp, [10, 'sh'], [0, 'swapper/0']);
    expect(lines()).toEqual(['sched_switch: prev_comm=sh prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120']);
    expect(top[0].data.readInt32LE(4)).toBe(10);
    await w('events/sched/sched_switch/enable', '0\n');
    expect(tp.enabled('sched_switch')).toBe(false);
  });

  it('builds dynamic strings (__string) after the fixed part', async () => {
    const { w, tp, lines } = emulator();
    await w('events/sched/sched_process_fork/enable', '1\n');
    await w('events/sched/sched_process_exec/enable', '1\n');
    await w('events/kmem/kmem_cache_free/enable', '1\n');
    tp.fire('sched_process_fork', ctxOf(100, 'bash'), { parent_comm: 'bash', parent_pid: 100, child_comm: 'bash', child_pid: 101 });
    tp.fire('sched_process_exec', ctxOf(101, 'ls'), { filename: '/bin/ls', pid: 101, old_pid: 101 });
    tp.fire('kmem_cache_free', ctxOf(101, 'ls'), { call_site: 0n, ptr: 0n, name: 'names_cache' });
    expect(lines()).toEqual([
      'sched_process_fork: comm=bash pid=100 child_comm=bash child_pid=101',
      'sched_process_exec: filename=/bin/ls pid=101 old_pid=101',
      'kmem_cache_free: call_site=0x0 ptr=0000000000000000 name=names_cache',
    ]);
  });

  it('records into each trace array that has the event on', async () => {
    const { w, fs, tp, top, tracing, lines } = emulator();
    fs.mkdir('instances/a');
    const { capture } = await import('../helpers/events.js');
    const inst = capture(tracing.instances.get('a')!);
    await w('instances/a/events/sched/sched_wakeup/enable', '1\n');
    tp.fire('sched_wakeup', ctxOf(5, 'kworker/0:1'), { comm: 'sh', pid: 7, prio: 120, target_cpu: 1 });
    expect(top).toHaveLength(0);
    expect(lines(inst)).toEqual(['sched_wakeup: comm=sh pid=7 prio=120 target_cpu=001']);
    fs.rmdir('instances/a');
    expect(tp.enabled('sched_wakeup')).toBe(false);
  });

  it('prints syscall events as the kernel does, with 7.2 user data', async () => {
    const { w, tp, lines } = emulator();
    await w('events/syscalls/sys_enter_openat/enable', '1\n');
    await w('events/syscalls/sys_exit_openat/enable', '1\n');
    await w('events/syscalls/sys_enter_write/enable', '1\n');
    await w('events/raw_syscalls/sys_enter/enable', '1\n');
    const user = (i: number, max: number) => (i === 1 ? Buffer.from('/etc/passwd\0junk').subarray(0, max) : undefined);
    tp.fire('sys_enter', ctxOf(9, 'cat'), { id: 257, args: [0xffffff9cn, 0x7ffd1000n, 0x80000n, 0n, 0n, 0n], user });
    tp.fire('sys_exit', ctxOf(9, 'cat'), { id: 257, ret: 3 });
    const data = (i: number, max: number) => (i === 1 ? Buffer.from('hi\n').subarray(0, max) : undefined);
    tp.fire('sys_enter', ctxOf(9, 'cat'), { id: 1, args: [1n, 0x55e3c0872570n, 3n, 0n, 0n, 0n], user: data });
    expect(lines()).toEqual([
      'sys_enter: NR 257 (ffffff9c, 7ffd1000, 80000, 0, 0, 0)',
      'sys_openat(dfd: 4294967196, filename: 2147291136 "/etc/passwd", flags: O_RDONLY|O_CLOEXEC)',
      'sys_openat -> 0x3',
      'sys_enter: NR 1 (1, 55e3c0872570, 3, 0, 0, 0)',
      'sys_write(fd: 1, buf: 0x55e3c0872570 (68:69:0a) "hi.", count: 3)',
    ]);
  });

  it('truncates recorded user strings to syscall_user_buf_size with "..."', async () => {
    const { w, r, tp, lines } = emulator();
    await w('syscall_user_buf_size', '4\n');
    expect(await r('syscall_user_buf_size')).toBe('4\n');
    await w('events/syscalls/sys_enter_mkdir/enable', '1\n');
    tp.fire('sys_enter', ctxOf(9, 'mkdir'), { id: 83, args: [0x1000n, 0o777n], user: (i: number) => (i === 0 ? Buffer.from('/tmp/xx\0') : undefined) });
    expect(lines()).toEqual(['sys_mkdir(pathname: 0x1000 "/tmp...", mode: 0x1ff)']);
    await w('syscall_user_buf_size', '500\n');
    expect(await r('syscall_user_buf_size')).toBe('165\n');
  });
});
