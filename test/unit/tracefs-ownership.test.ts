/**
 * Ownership as fs/tracefs has it, through the library API: the scenarios of
 * test.d/00basic/test_ownership.tc and mount_options.tc, plus the rules
 * behind them (events saved owners, instances, remount).
 */
import { describe, expect, it } from 'vitest';
import { Kernel } from '../../src/kernel/kernel.js';
import { Dir, File } from '../../src/tracefs/node.js';
import { applyMountOptions, parseTracefsOptions, showTracefsOptions } from '../../src/tracefs/ownership.js';
import { Tracefs } from '../../src/tracefs/tracefs.js';

const ORIG = 0;
const OTHER = 1234;
const OWNER2 = 4321;

function eventsDir(): Dir {
  const ev = new Dir('events', 0o755);
  for (const [sys, evs] of [['sched', ['sched_switch', 'sched_wakeup']], ['timer', ['timer_cancel']]] as const) {
    const s = ev.add(new Dir(sys, 0o755));
    for (const e of evs) {
      const d = s.add(new Dir(e, 0o755));
      d.add(new File('enable', 0o644, {}));
      d.add(new File('format', 0o444, {}));
    }
  }
  return ev;
}

/** A root with events/, tracing_on and instances/ whose mkdir builds the same. */
function tree(): Tracefs {
  const root = new Dir('', 0o700);
  root.add(new File('tracing_on', 0o640, {}));
  root.add(eventsDir());
  root.add(
    new Dir('instances', 0o750, {
      mkdir(dir, name) {
        const inst = dir.add(new Dir(name, 0o750));
        inst.add(new File('tracing_on', 0o640, {}));
        inst.add(eventsDir());
      },
      rmdir(dir, name) {
        dir.remove(name);
      },
    }),
  );
  const fs = new Tracefs(root, new Kernel({ cpus: 1 }), { uid: 0, gid: 0 });
  applyMountOptions(fs.root, fs.sb, {}, false);
  return fs;
}

const CANARY = ['events/timer', 'events/timer/timer_cancel', 'events/timer/timer_cancel/format'];
const ALL = ['', 'events', 'events/sched', 'events/sched/sched_switch', 'events/sched/sched_switch/enable', ...CANARY];

function remount(fs: Tracefs, opts: string) {
  applyMountOptions(fs.root, fs.sb, parseTracefsOptions(opts), true);
}

/** test_ownership.tc's test(): owner and group as expected, and chown to and from another owner works. */
function check(fs: Tracefs, prefix: string, path: string, gid: number) {
  const p = prefix ? (path ? `${prefix}/${path}` : prefix) : path;
  expect({ p, ...owner(fs, p) }).toEqual({ p, uid: ORIG, gid });
  fs.chown(p, OWNER2, undefined);
  expect(fs.stat(p).uid).toBe(OWNER2);
  fs.chown(p, ORIG, undefined);
  expect(fs.stat(p).uid).toBe(ORIG);
}

function owner(fs: Tracefs, p: string) {
  const s = fs.stat(p);
  return { uid: s.uid, gid: s.gid };
}

function runTests(fs: Tracefs, prefix: string) {
  for (const d of ALL) check(fs, prefix, d, OTHER);
  const at = (p: string) => (prefix ? (p ? `${prefix}/${p}` : prefix) : p);
  fs.chown(at('events'), undefined, ORIG);
  check(fs, prefix, 'events', ORIG);
  for (const d of ['', 'events/sched', 'events/sched/sched_switch', 'events/sched/sched_switch/enable', ...CANARY]) check(fs, prefix, d, OTHER);
  fs.chown(at('events/sched'), undefined, ORIG);
  check(fs, prefix, 'events/sched', ORIG);
  for (const d of ['', 'events/sched/sched_switch', 'events/sched/sched_switch/enable', ...CANARY]) check(fs, prefix, d, OTHER);
  fs.chown(at('events/sched/sched_switch'), undefined, ORIG);
  check(fs, prefix, 'events/sched/sched_switch', ORIG);
  for (const d of ['', 'events/sched/sched_switch/enable', ...CANARY]) check(fs, prefix, d, OTHER);
  fs.chown(at('events/sched/sched_switch/enable'), undefined, ORIG);
  check(fs, prefix, 'events/sched/sched_switch/enable', ORIG);
  for (const d of ['', ...CANARY]) check(fs, prefix, d, OTHER);
}

describe('tracefs ownership', () => {
  it('passes the scenario of test_ownership.tc, twice', () => {
    const fs = tree();
    for (let loop = 0; loop < 2; loop++) {
      remount(fs, `rw,nosuid,nodev,noexec,relatime,gid=${OTHER}`);
      runTests(fs, '');
      remount(fs, `rw,nosuid,nodev,noexec,relatime,gid=${ORIG}`);
      for (const d of ALL) check(fs, '', d, ORIG);
      fs.chown('instances', undefined, OTHER);
      fs.mkdir(`instances/test-${loop}`);
      runTests(fs, `instances/test-${loop}`);
      fs.rmdir(`instances/test-${loop}`);
      fs.chown('instances', undefined, ORIG);
    }
  });

  it('passes the scenario of mount_options.tc: new instances inherit a remounted gid', () => {
    const fs = tree();
    remount(fs, `gid=${OTHER}`);
    for (const d of ['', 'events', 'events/sched', 'events/sched/sched_switch', 'events/sched/sched_switch/enable']) expect(owner(fs, d).gid).toBe(OTHER);
    fs.mkdir('instances/x');
    for (const d of ['', '/events', '/events/sched', '/events/sched/sched_switch/enable']) expect(owner(fs, `instances/x${d}`).gid).toBe(OTHER);
    fs.rmdir('instances/x');
    remount(fs, `gid=${ORIG}`);
    expect(owner(fs, '').gid).toBe(ORIG);
    expect(owner(fs, 'events/sched').gid).toBe(ORIG);
  });

  it('shows mount options as tracefs_show_options, and applies mode to the root only', () => {
    const fs = tree();
    expect(showTracefsOptions(fs.sb)).toBe('');
    applyMountOptions(fs.root, fs.sb, parseTracefsOptions('uid=5,gid=6,mode=755'), false);
    expect(showTracefsOptions(fs.sb)).toBe(',uid=5,gid=6,mode=755');
    expect(fs.stat('')).toMatchObject({ mode: 0o040755, uid: 5, gid: 6 });
    expect(fs.stat('tracing_on')).toMatchObject({ mode: 0o100640, uid: 5, gid: 6 });
    // A remount with only gid keeps the root's uid and mode (checked on 7.2).
    remount(fs, 'gid=9');
    expect(fs.stat('')).toMatchObject({ mode: 0o040755, uid: 5, gid: 9 });
    expect(showTracefsOptions(fs.sb)).toBe(',uid=5,gid=9,mode=755');
  });

  it('lets tracefs files follow a chgrp of the root or of instances, but not eventfs', () => {
    const fs = tree();
    fs.mkdir('instances/a');
    fs.chown('', undefined, 77);
    expect(owner(fs, 'tracing_on').gid).toBe(77);
    expect(owner(fs, 'instances/a/tracing_on').gid).toBe(77);
    expect(owner(fs, 'events/sched').gid).toBe(0);
    fs.chown('instances', undefined, 88);
    expect(owner(fs, 'instances/a').gid).toBe(88);
    expect(owner(fs, 'instances/a/tracing_on').gid).toBe(88);
    expect(owner(fs, 'instances/a/events').gid).toBe(0);
  });

  it('rejects bad option values with EINVAL and ignores mount(8) flags', () => {
    expect(() => parseTracefsOptions('gid=abc')).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => parseTracefsOptions('mode=9')).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => parseTracefsOptions('bogus=1')).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(parseTracefsOptions('remount,rw,relatime,uid=1,gid=2,mode=0750')).toEqual({ uid: 1, gid: 2, mode: 0o750 });
  });
});
