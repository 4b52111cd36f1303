/**
 * In-process replays of test.d/event/*.tc and filter/event-filter-function.tc:
 * the same file operations, with a stub activity firing what the emulated
 * kernel will fire (forks, switches, wakeups, kmem and syscall events).
 */
import { describe, expect, it } from 'vitest';
import { type Captured, capture, ctxOf, emulator } from '../helpers/events.js';

type Emu = ReturnType<typeof emulator>;

const SHELL = 4242;
const OTHERS: Array<[number, string]> = [
  [15, 'rcu_preempt'],
  [31, 'kworker/0:1'],
  [0, 'swapper/0'],
];

/** What running `yield` (ping) looks like to the scheduler and friends, in the stub kernel. */
class StubActivity {
  private nextPid = 5000;
  constructor(private readonly e: Emu) {}

  private switch(prev: [number, string], next: [number, string], cpu = 0): void {
    this.e.tp.fire('sched_switch', ctxOf(prev[0], prev[1], cpu), { prev_comm: prev[1], prev_pid: prev[0], prev_prio: 120, prev_state: 1, next_comm: next[1], next_pid: next[0], next_prio: 120 });
  }

  /** The shell forks a child that runs `ping`, exits and is reaped; other tasks run in between. */
  yield(shell: [number, string] = [SHELL, 'sh']): number {
    const tp = this.e.tp;
    const child = this.nextPid++;
    tp.fire('sched_process_fork', ctxOf(shell[0], shell[1]), { parent_comm: shell[1], parent_pid: shell[0], child_comm: shell[1], child_pid: child });
    tp.fire('sched_wakeup_new', ctxOf(shell[0], shell[1]), { comm: shell[1], pid: child, prio: 120, target_cpu: 1 });
    tp.fire('timer_init', ctxOf(shell[0], shell[1]), { timer: 0xffff888003a1c000n });
    this.switch(shell, [child, shell[1]]);
    tp.fire('sched_process_exec', ctxOf(child, 'ping'), { filename: '/bin/ping', pid: child, old_pid: child });
    tp.fire('sys_enter', ctxOf(child, 'ping'), { id: 1, args: [1n, 0x1000n, 4n, 0n, 0n, 0n] });
    tp.fire('sys_exit', ctxOf(child, 'ping'), { id: 1, ret: 4 });
    for (const o of OTHERS) {
      tp.fire('sched_waking', ctxOf(child, 'ping'), { comm: o[1], pid: o[0], prio: 120, target_cpu: 0 });
      tp.fire('sched_wakeup', ctxOf(child, 'ping'), { comm: o[1], pid: o[0], prio: 120, target_cpu: 0 });
      this.switch([child, 'ping'], o);
      tp.fire('rcu_utilization', ctxOf(o[0], o[1]), { s: 'Start context switch' });
      tp.fire('irq_handler_entry', ctxOf(o[0], o[1]), { irq: 11, name: 'virtio0' });
      tp.fire('irq_handler_exit', ctxOf(o[0], o[1]), { irq: 11, ret: 1 });
      this.switch(o, [child, 'ping']);
    }
    tp.fire('sched_process_exit', ctxOf(child, 'ping'), { comm: 'ping', pid: child, prio: 120, group_dead: true });
    this.switch([child, 'ping'], shell);
    tp.fire('sched_process_wait', ctxOf(shell[0], shell[1]), { comm: shell[1], pid: 0, prio: 120 });
    tp.fire('sched_process_free', ctxOf(shell[0], shell[1]), { comm: 'ping', pid: child, prio: 120 });
    return child;
  }
}

function setup(instance = false) {
  const e = emulator();
  let base = '';
  let recs: Captured[] = e.top;
  if (instance) {
    e.fs.mkdir('instances/ftracetest');
    base = 'instances/ftracetest/';
    recs = capture(e.tracing.instances.get('ftracetest')!);
  }
  const w = (p: string, d: string, append = false) => e.w(base + p, d, append);
  const r = (p: string) => e.r(base + p);
  const tr = instance ? e.tracing.instances.get('ftracetest')! : e.tracing.top;
  const trace = () => e.lines(recs);
  /** "comm-pid" of each trace line, as the trace file's TASK-PID column. */
  const pids = () => recs.map((c) => c.data.readInt32LE(4));
  /** `echo > trace` */
  const clear = () => {
    recs.length = 0;
  };
  const act = new StubActivity(e);
  const opts = new Set<string>();
  (tr as unknown as { options: Set<string> }).options = opts;
  return { e, w, r, tr, trace, pids, clear, act, opts };
}

for (const instance of [false, true]) {
  const where = instance ? ' (instance)' : '';

  describe(`test.d/event${where}`, () => {
    it('event-enable.tc', async () => {
      const { w, trace, clear, act } = setup(instance);
      const reset = async () => {
        await w('set_event', '\n');
        clear();
      };
      await w('set_event', 'sched:sched_switch\n');
      act.yield();
      expect(trace().filter((l) => l.includes('sched_switch')).length).toBeGreaterThan(0);
      await reset();
      await w('events/sched/sched_switch/enable', '1\n');
      act.yield();
      expect(trace().filter((l) => l.includes('sched_switch')).length).toBeGreaterThan(0);
      await reset();
      await w('events/sched/sched_switch/enable', '0\n');
      act.yield();
      expect(trace().filter((l) => l.includes('sched_switch')).length).toBe(0);
    });

    it('subsystem-enable.tc', async () => {
      const { w, trace, clear, act } = setup(instance);
      const unique = () => new Set(trace().map((l) => l.split(':')[0])).size;
      await w('set_event', 'sched:*\n');
      act.yield();
      expect(unique()).toBeGreaterThanOrEqual(3);
      await w('set_event', '\n');
      clear();
      await w('events/sched/enable', '1\n');
      act.yield();
      expect(unique()).toBeGreaterThanOrEqual(3);
      await w('set_event', '\n');
      clear();
      await w('events/sched/enable', '0\n');
      act.yield();
      expect(trace().length).toBe(0);
    });

    it('toplevel-enable.tc', async () => {
      const { w, trace, clear, act } = setup(instance);
      await w('set_event', '*:*\n');
      act.yield();
      await w('tracing_on', '0\n');
      expect(trace().length).toBeGreaterThan(0);
      await w('set_event', '\n');
      clear();
      await w('events/enable', '1\n');
      await w('tracing_on', '1\n');
      act.yield();
      await w('tracing_on', '0\n');
      expect(trace().length).toBeGreaterThan(0);
      await w('set_event', '\n');
      clear();
      await w('events/enable', '0\n');
      act.yield();
      expect(trace().length).toBe(0);
    });

    it('event-pid.tc', async () => {
      const { w, r, trace, clear, act, opts } = setup(instance);
      const reset = async () => {
        await w('set_event', '\n');
        await w('set_event_pid', '\n');
        opts.delete('event-fork');
        clear();
      };
      await w('events/sched/sched_switch/enable', '1\n');
      act.yield();
      expect(trace().filter((l) => l.includes('sched_switch')).length).toBeGreaterThan(0);
      await reset();
      await w('set_event_pid', `${SHELL}\n`);
      expect(await r('set_event_pid')).toContain(`${SHELL}`);
      await w('set_event', 'sched:sched_switch\n');
      act.yield();
      const switches = () => trace().filter((l) => l.includes('sched_switch'));
      expect(switches().length).toBeGreaterThan(0);
      expect(switches().filter((l) => !l.includes(`pid=${SHELL}`)).length).toBe(0);
      await reset();
      await w('set_event_pid', `${SHELL}\n`);
      opts.add('event-fork');
      await w('events/sched/sched_switch/enable', '1\n');
      act.yield();
      expect(switches().filter((l) => !l.includes(`pid=${SHELL}`)).length).toBeGreaterThan(0);
      await reset();
    });

    it('event-no-pid.tc', async () => {
      const { w, pids, clear, act, opts } = setup(instance);
      const reset = async () => {
        await w('set_event', '\n');
        await w('set_event_pid', '\n');
        await w('set_event_notrace_pid', '\n');
        opts.delete('event-fork');
        await w('events/enable', '0\n');
        clear();
        await w('tracing_on', '1\n');
      };
      const enableEvents = async () => {
        await w('tracing_on', '0\n');
        for (const s of ['syscalls', 'rcu', 'block', 'exceptions', 'irq', 'net', 'power', 'signal', 'sock', 'timer', 'thermal']) await w(`events/${s}/enable`, '1\n');
        await w('tracing_on', '1\n');
      };
      await reset();
      await w('set_event_notrace_pid', `${SHELL}\n`);
      await enableEvents();
      act.yield();
      await w('tracing_on', '0\n');
      expect(pids().filter((p) => p === SHELL).length).toBe(0);
      expect(pids().filter((p) => p !== SHELL).length).toBeGreaterThan(0);
      await reset();
      await w('set_event_notrace_pid', `${SHELL}\n`);
      opts.add('event-fork');
      await enableEvents();
      const child = act.yield();
      await w('tracing_on', '0\n');
      expect(pids().filter((p) => p === SHELL).length).toBe(0);
      expect(pids().filter((p) => p === child).length).toBe(0);
      expect(pids().filter((p) => p !== SHELL).length).toBeGreaterThan(0);
      await reset();
    });
  });

  describe(`test.d/filter${where}`, () => {
    it('event-filter-function.tc', async () => {
      const { e, w, trace, clear } = setup(instance);
      const syms = e.kernel.symbols;
      const fn = (name: string) => syms.byName(name)[0].addr;
      const sites = [fn('do_readlinkat') + 0xcdn, fn('kern_path') + 0x3bn, fn('kern_path') + 0x3bn, fn('__x64_sys_execve') + 0x47n];
      const sampleEvents = async () => {
        await w('events/kmem/kmem_cache_free/enable', '1\n');
        await w('tracing_on', '1\n');
        // `ls > /dev/null`
        for (const cs of sites) e.tp.fire('kmem_cache_free', ctxOf(SHELL + 1, 'ls'), { call_site: cs, ptr: 0xffff888004d3c000n, name: 'names_cache' });
        await w('tracing_on', '0\n');
        await w('events/kmem/kmem_cache_free/enable', '0\n');
      };
      await w('tracing_on', '0\n');
      await w('events/enable', '0\n');
      await sampleEvents();
      await sampleEvents();
      clear();
      await sampleEvents();
      const callSites = trace().map((l) => /call_site=([^+]*)/.exec(l)?.[1]);
      const counts = new Map<string, number>();
      for (const c of callSites) if (c) counts.set(c, (counts.get(c) ?? 0) + 1);
      const target = [...counts].sort((a, b) => a[1] - b[1]).pop()![0];
      expect(target).toBe('kern_path');
      clear();
      await w('events/kmem/kmem_cache_free/filter', `call_site.function == ${target}\n`);
      await sampleEvents();
      const hits = () => trace().filter((l) => l.includes('kmem_cache_free'));
      expect(hits().length).toBeGreaterThan(0);
      expect(hits().filter((l) => !l.includes(target)).length).toBe(0);
      const address = syms.byName(target)[0].addr.toString(16);
      await w('events/kmem/kmem_cache_free/filter', `call_site.function == 0x${address}\n`);
      clear();
      await sampleEvents();
      expect(hits().length).toBeGreaterThan(0);
      expect(hits().filter((l) => !l.includes(target)).length).toBe(0);

      // filename.ustring: user memory of the task that calls openat
      const user = new Map<bigint, string>([
        [0x7ffd0010n, '/bin/sh'],
        [0x7ffd0020n, '/tmp/ftracetest-dir.XyZ'],
      ]);
      e.te.memory.readUser = (_task, addr, len) => {
        const s = user.get(addr);
        return s === undefined ? undefined : Buffer.from(s + '\0').subarray(0, len);
      };
      await w('events/syscalls/sys_enter_openat/filter', 'filename.ustring ~ "*ftracetest-dir*"\n');
      await w('events/syscalls/sys_enter_openat/enable', '1\n');
      await w('tracing_on', '1\n');
      const openat = (addr: bigint) => e.tp.fire('sys_enter', ctxOf(SHELL + 2, 'ls'), { id: 257, args: [0xffffff9cn, addr, 0x80000n, 0n, 0n, 0n] });
      openat(0x7ffd0010n);
      const nocnt = trace().filter((l) => l.includes('openat')).length;
      openat(0x7ffd0020n);
      await w('tracing_on', '0\n');
      const hitcnt = trace().filter((l) => l.includes('openat')).length;
      expect(nocnt).toBe(0);
      expect(hitcnt).toBeGreaterThan(0);
    });
  });
}
