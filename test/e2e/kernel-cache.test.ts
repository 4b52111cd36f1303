/**
 * The kernel caches lookups and attributes of the mount (entry_timeout,
 * attr_timeout), and forgets them as soon as the tree changes behind its
 * back: a node removed without rmdir, owners changed by a remount or by a
 * chgrp of a directory others inherit from. No deadlock when lookups race
 * the invalidations.
 */
import { chmodSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MountedTracefs, mountTracefs } from '../../src/fuse/mount.js';
import type { Emulator } from '../../src/index.js';
import { Dir, File } from '../../src/tracefs/node.js';
import { applyMountOptions } from '../../src/tracefs/ownership.js';
import { testEmulator } from '../helpers/emulator.js';
import { fuseUnavailable, sh, tempDir } from '../helpers/e2e.js';

const skip = fuseUnavailable();
if (skip) console.warn(`e2e-kernel-cache: skipped: ${skip}`);

/** A pretend dynamic event: events/<group>/<name>/ with the usual files. */
function addEventDir(events: Dir, group: string, name: string): Dir {
  const sys = events.get(group) instanceof Dir ? (events.get(group) as Dir) : events.add(new Dir(group));
  const d = sys.add(new Dir(name));
  for (const f of ['enable', 'filter', 'format', 'id', 'trigger']) d.add(new File(f, 0o640, { read: (_f, _size, pos) => Buffer.from(pos === 0 ? '0\n' : '') }));
  return d;
}

function removeEventDir(events: Dir, group: string, name: string): void {
  const sys = events.get(group) as Dir | undefined;
  if (!sys) return;
  sys.remove(name);
  if (sys.children.size === 0) events.remove(group);
}

describe.skipIf(!!skip)(`kernel cache of the mount${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let emu: Emulator;
  let m: MountedTracefs;
  let M: string;
  let events: Dir;

  beforeAll(async () => {
    emu = testEmulator();
    events = emu.fs.root.get('events') as Dir;
    // A file whose write removes an event directory, as `echo -:ev >> dynamic_events` does.
    emu.fs.root.add(
      new File('remover', 0o200, {
        write: async (_f, data) => {
          const [group, name] = data.toString().trim().split('/');
          removeEventDir(events, group!, name!);
          return data.length;
        },
      }),
    );
    const parent = tempDir('tfe-cache-');
    chmodSync(parent, 0o755);
    M = `${parent}/mnt`;
    m = await mountTracefs(emu.fs, M);
  });

  afterAll(async () => {
    await m?.unmount();
  });

  it('mounts with long entry and attribute timeouts: a cached stat costs no request', async () => {
    const r = await sh(`cat /proc/self/mountinfo | grep ' ${M} '`);
    expect(r.stdout).toContain('fuse.tracefs');
    // Warm, then time a loop of stats: microseconds each once cached.
    const t = await sh(`stat ${M}/events/sched/sched_switch/enable >/dev/null; python3 -c '
import os, time
p = "${M}/events/sched/sched_switch/enable"
t = time.perf_counter()
for _ in range(2000): os.stat(p)
print((time.perf_counter() - t) / 2000 * 1e6)'`);
    expect(Number(t.stdout.trim())).toBeLessThan(50);
  });

  it('a node removed through the library API is gone for the mount at once', async () => {
    addEventDir(events, 'kprobes', 'myev');
    const before = await sh(`test -d ${M}/events/kprobes/myev && cat ${M}/events/kprobes/myev/enable && stat -c %n ${M}/events/kprobes/myev/format`);
    expect(before.code).toBe(0);
    removeEventDir(events, 'kprobes', 'myev');
    await m.settled();
    const after = await sh(`test -d ${M}/events/kprobes/myev; echo $?; test -e ${M}/events/kprobes/myev/format; echo $?; test -d ${M}/events/kprobes; echo $?`);
    expect(after.stdout.split('\n').slice(0, 3)).toEqual(['1', '1', '1']);
  });

  it('a write that removes a node returns once the kernel has forgotten it', async () => {
    addEventDir(events, 'kprobes', 'ev2');
    addEventDir(events, 'kprobes', 'ev3');
    const r = await sh(
      `set -e; test -d ${M}/events/kprobes/ev2; cat ${M}/events/kprobes/ev2/id >/dev/null
       echo kprobes/ev2 > ${M}/remover
       if test -d ${M}/events/kprobes/ev2; then echo stale; else echo gone; fi
       test -d ${M}/events/kprobes/ev3 && echo kept`,
    );
    expect(r.stdout.split('\n').slice(0, 2)).toEqual(['gone', 'kept']);
    // Re-created under the same name: seen again (no stale negative entry).
    addEventDir(events, 'kprobes', 'ev2');
    expect((await sh(`test -d ${M}/events/kprobes/ev2 && echo back`)).stdout.trim()).toBe('back');
    removeEventDir(events, 'kprobes', 'ev2');
    removeEventDir(events, 'kprobes', 'ev3');
    await m.settled();
  });

  it('an event removed through dynamic_events is gone at once, in every instance too', async () => {
    const r = await sh(
      `cd ${M}; mkdir instances/dyn; echo 'p:myev vfs_read' >> dynamic_events
       test -d events/kprobes/myev && cat events/kprobes/myev/id >/dev/null && test -d instances/dyn/events/kprobes/myev && echo made
       echo '-:myev' >> dynamic_events
       test -d events/kprobes/myev; echo $?; test -d events/kprobes; echo $?; test -d instances/dyn/events/kprobes/myev; echo $?
       echo 'p:myev vfs_read' >> dynamic_events; test -d events/kprobes/myev && echo again
       echo > dynamic_events; test -d events/kprobes/myev; echo $?; rmdir instances/dyn`,
    );
    expect(r.stdout.trim().split('\n')).toEqual(['made', '1', '1', '1', 'again', '1']);
  });

  it('lets go of a removed instance, even of what a process in it still had cached (its cwd)', async () => {
    await sh(`stat ${M}/instances >/dev/null`);
    const before = m.knownNodes;
    const inside = sh(`cd ${M} && mkdir instances/gone && cd instances/gone/events/sched/sched_switch && cat enable >/dev/null && echo in && sleep 0.8 && echo out`);
    await new Promise((r) => setTimeout(r, 400));
    expect((await sh(`rmdir ${M}/instances/gone`)).code).toBe(0);
    expect((await inside).stdout.split('\n').slice(0, 2)).toEqual(['in', 'out']);
    await m.settled();
    // The kernel forgets the removed directories once its cwd leaves them: the instance's nodes go.
    for (let i = 0; i < 40 && m.knownNodes > before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(m.knownNodes).toBeLessThanOrEqual(before);
  });

  it('a remount with gid= is seen at once by stat', async () => {
    const paths = ['.', 'events', 'events/sched', 'events/sched/sched_switch', 'events/sched/sched_switch/enable', 'trace', 'options/print-parent'];
    const statAll = `cd ${M} && stat -c %g ${paths.join(' ')}`;
    expect((await sh(statAll)).stdout.trim().split('\n')).toEqual(paths.map(() => '0'));
    applyMountOptions(emu.fs.root, emu.fs.sb, { gid: 4242 }, true);
    await m.settled();
    expect((await sh(statAll)).stdout.trim().split('\n')).toEqual(paths.map(() => '4242'));
    applyMountOptions(emu.fs.root, emu.fs.sb, { gid: 0 }, true);
    await m.settled();
    expect((await sh(statAll)).stdout.trim().split('\n')).toEqual(paths.map(() => '0'));
  });

  it('cwd and open files see a remount made while they are held', async () => {
    const script = `cd ${M}/events/sched && exec 3<${M}/trace && stat -c %g . && stat -L -c %g /dev/fd/3 && sleep 1.5 && stat -c %g . && stat -L -c %g /dev/fd/3`;
    const p = sh(script);
    await new Promise((r) => setTimeout(r, 700));
    applyMountOptions(emu.fs.root, emu.fs.sb, { gid: 77 }, true);
    await m.settled();
    const r = await p;
    expect(r.stdout.trim().split('\n')).toEqual(['0', '0', '77', '77']);
    applyMountOptions(emu.fs.root, emu.fs.sb, { gid: 0 }, true);
    await m.settled();
  });

  it('a chgrp of a directory reaches what inherits its owner (instances/)', async () => {
    const r = await sh(
      `set -e; cd ${M}; mkdir instances/cachetest; stat -c %g instances/cachetest/trace instances/cachetest/options
       chgrp 55 instances; stat -c %g instances/cachetest/trace instances/cachetest/options; chgrp 0 instances; rmdir instances/cachetest`,
    );
    expect(r.stdout.trim().split('\n')).toEqual(['0', '0', '55', '55']);
  });

  it('does not deadlock when lookups race removals, remounts and waiting writes', async () => {
    const groups = ['g1', 'g2', 'g3'];
    for (const g of groups) for (let i = 0; i < 5; i++) addEventDir(events, g, `e${i}`);
    // Readers: path walks, stats, cats and listings of the churning directories.
    const readers = Array.from({ length: 3 }, (_, k) =>
      sh(
        `end=$(($(date +%s) + 6)); n=0; while [ $(date +%s) -lt $end ]; do
           for g in ${groups.join(' ')}; do ls ${M}/events/$g >/dev/null 2>&1; for i in 0 1 2 3 4; do
             stat ${M}/events/$g/e$i/enable >/dev/null 2>&1; cat ${M}/events/$g/e$i/id >/dev/null 2>&1; done; done
           stat -c %g ${M}/events/sched/sched_switch >/dev/null; n=$((n+1)); done; echo ${k}:$n`,
        { timeoutMs: 60_000 },
      ),
    );
    // A writer whose writes remove nodes (each waits for its invalidations).
    const writer = sh(
      `end=$(($(date +%s) + 6)); n=0; while [ $(date +%s) -lt $end ]; do for g in ${groups.join(' ')}; do
         echo $g/e$((n % 5)) > ${M}/remover 2>/dev/null || true; done; n=$((n+1)); done; echo w:$n`,
      { timeoutMs: 60_000 },
    );
    // Real dynamic events coming and going.
    const dyn = sh(
      `cd ${M}; end=$(($(date +%s) + 6)); n=0; while [ $(date +%s) -lt $end ]; do
         echo "p:stress$((n % 3)) vfs_read" >> dynamic_events; ls events/kprobes >/dev/null; echo "-:stress$((n % 3))" >> dynamic_events
         n=$((n+1)); done; test -d events/kprobes && echo left || echo d:$n`,
      { timeoutMs: 60_000 },
    );
    // In process: removals, re-creations and remounts, as fast as the loop allows.
    const t0 = Date.now();
    let churn = 0;
    while (Date.now() - t0 < 6000) {
      for (const g of groups) {
        const i = churn % 5;
        removeEventDir(events, g, `e${i}`);
        addEventDir(events, g, `e${i}`);
      }
      if (churn % 20 === 0) applyMountOptions(emu.fs.root, emu.fs.sb, { gid: churn % 40 === 0 ? 9 : 0 }, true);
      churn++;
      await new Promise((r) => setTimeout(r, 2));
    }
    const results = await Promise.all([...readers, writer, dyn]);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expect(results.at(-1)!.stdout).toMatch(/^d:\d+/);
    await m.settled();
    // Consistent at the end: what exists is seen, what is gone is not.
    for (const g of groups) for (let i = 0; i < 5; i++) if (!(events.get(g) as Dir | undefined)?.get(`e${i}`)) addEventDir(events, g, `e${i}`);
    removeEventDir(events, 'g1', 'e0');
    applyMountOptions(emu.fs.root, emu.fs.sb, { gid: 0 }, true);
    await m.settled();
    const end = await sh(`test -d ${M}/events/g1/e0; echo $?; test -d ${M}/events/g1/e1; echo $?; stat -c %g ${M}/events/g2/e3/enable`);
    expect(end.stdout.trim().split('\n')).toEqual(['1', '0', '0']);
    expect(churn).toBeGreaterThan(50);
  }, 90_000);
});
