import { describe, expect, it } from 'vitest';
import { O_RDONLY } from '../../src/tracefs/node.js';
import type { TraceEventType } from '../../src/trace/event_type.js';
import { StaticEventType } from '../../src/trace/events/static_event.js';
import { ctxOf, emulator } from '../helpers/events.js';

function kprobeType(): TraceEventType {
  return new StaticEventType({
    system: 'kprobes',
    name: 'myprobe',
    id: 2000,
    fields: [{ type: 'unsigned long', name: '__probe_ip', offset: 8, size: 8, signed: false }],
    printFmt: '"(%lx)", REC->__probe_ip',
  });
}

describe('dynamic event types', () => {
  it('appear and disappear in every events/ tree, first in the lists', async () => {
    const { fs, te, r } = emulator();
    fs.mkdir('instances/a');
    let armed = 0;
    const t = te.addEventType(kprobeType(), { register: () => armed++, unregister: () => armed-- });
    expect(fs.readdir('events/kprobes').sort()).toEqual(['enable', 'filter', 'myprobe']);
    expect(fs.readdir('instances/a/events/kprobes/myprobe').sort()).toEqual(['enable', 'filter', 'format', 'hist', 'id', 'trigger']);
    expect((await r('available_events')).split('\n')[0]).toBe('kprobes:myprobe');
    expect(await r('events/kprobes/myprobe/id')).toBe('2000\n');
    await fs.writeFile('events/kprobes/myprobe/enable', '1\n');
    expect(armed).toBe(1);
    await fs.writeFile('instances/a/events/kprobes/enable', '1\n');
    expect(armed).toBe(1);
    expect(() => te.removeEventType(t)).toThrow(expect.objectContaining({ code: 'EBUSY' }));
    await fs.writeFile('events/enable', '0\n');
    await fs.writeFile('instances/a/events/enable', '0\n');
    expect(armed).toBe(0);
    const h = await fs.open('events/kprobes/myprobe/format', O_RDONLY);
    expect(() => te.removeEventType(t)).toThrow(expect.objectContaining({ code: 'EBUSY' }));
    h.release();
    te.removeEventType(t);
    expect(() => fs.stat('events/kprobes')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(() => fs.stat('instances/a/events/kprobes')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('record through emit() with the same filters and pid lists', async () => {
    const { fs, te, lines } = emulator();
    const t = te.addEventType(kprobeType());
    await fs.writeFile('events/kprobes/myprobe/enable', '1\n');
    await fs.writeFile('events/kprobes/myprobe/filter', '__probe_ip == 0x1234\n');
    const rec = (ip: bigint) => {
      const b = Buffer.alloc(16);
      b.writeUInt16LE(t.id, 0);
      b.writeInt32LE(7, 4);
      b.writeBigUInt64LE(ip, 8);
      return b;
    };
    te.emit(t, ctxOf(7, 'cat'), rec(0x1234n));
    te.emit(t, ctxOf(7, 'cat'), rec(0x9999n));
    expect(lines()).toEqual(['myprobe: (1234)']);
  });
});

describe('ownership in eventfs', () => {
  it('keeps a chown of an event file once its directory was filled', async () => {
    const { fs } = emulator();
    fs.chown('events/sched/sched_switch/enable', undefined, 1234);
    expect(fs.stat('events/sched/sched_switch/enable').gid).toBe(1234);
    fs.chown('events/sched/sched_switch', undefined, 99);
    expect(fs.stat('events/sched/sched_switch').gid).toBe(99);
    expect(fs.stat('events/sched/sched_switch/enable').gid).toBe(1234);
    expect(fs.stat('events/sched/sched_switch/format').gid).toBe(0);
  });
});

describe('instance removal', () => {
  it('turns everything off and leaves stale files answering ENODEV', async () => {
    const { fs, tp } = emulator();
    fs.mkdir('instances/foo');
    await fs.writeFile('instances/foo/events/sched/sched_switch/enable', '1\n');
    await fs.writeFile('instances/foo/set_event_pid', '1\n');
    const node = fs.lookup('instances/foo/events/sched/sched_switch/enable');
    expect(tp.enabled('sched_switch')).toBe(true);
    fs.rmdir('instances/foo');
    expect(tp.enabled('sched_switch')).toBe(false);
    expect(tp.enabled('sched_process_fork')).toBe(false);
    const { File } = await import('../../src/tracefs/node.js');
    const f = node as InstanceType<typeof File>;
    expect(() => f.fops.open!({ node: f, caller: { pid: 1, uid: 0, gid: 0 }, task: fs.kernel.tasks.get(1)!, flags: 1, readable: false, writable: true })).toThrow(expect.objectContaining({ code: 'ENODEV' }));
  });
});

describe('dynamic event ids', () => {
  it('starts after the static events and reuses freed ids (7.2: 1592, 7.3: 1609, 6.12: 1496)', () => {
    for (const [series, first] of [['7.2', 1592], ['7.3', 1609], ['6.12', 1496]] as const) {
      const { te } = emulator(series);
      expect(te.allocEventId()).toBe(first);
      const mk = (name: string, id: number) =>
        new StaticEventType({ system: 'kprobes', name, id, fields: [], printFmt: '""' });
      const a = te.addEventType(mk('a', te.allocEventId()));
      te.addEventType(mk('b', te.allocEventId()));
      expect(te.allocEventId()).toBe(first + 2);
      te.removeEventType(a);
      expect(te.allocEventId()).toBe(first);
    }
  });
});
