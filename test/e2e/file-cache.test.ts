/**
 * Files the native FUSE side answers by itself (src/fuse/file_cache.ts)
 * through a real mount: the default trigger and filter files of built-in
 * events are answered without JS while nothing observes system calls (an
 * instance's too, held by those opens as by any), show
 * at once what a write changed, and go through the emulated kernel again
 * as soon as something can see the open (the function tracer here).
 */
import { chmodSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MountedTracefs, mountTracefs } from '../../src/fuse/mount.js';
import { testEmulator } from '../helpers/emulator.js';
import { fuseUnavailable, sh, tempDir } from '../helpers/e2e.js';

const skip = fuseUnavailable();
if (skip) console.warn(`e2e-file-cache: skipped: ${skip}`);

describe.skipIf(!!skip)(`native file cache through a mount${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let m: MountedTracefs;
  let M: string;
  const ev = 'events/sched/sched_switch';

  beforeAll(async () => {
    const parent = tempDir('tfe-filecache-');
    chmodSync(parent, 0o755);
    M = `${parent}/mnt`;
    // Call paths on, as the daemon runs them: an open runs do_sys_openat2 and the rest.
    m = await mountTracefs(testEmulator({ callPaths: true }).fs, M);
  });

  afterAll(async () => {
    await m?.unmount();
  });

  const opens = () => m.cachedAnswers().open ?? 0;

  it('answers repeated reads of a default trigger file natively, with the same bytes, mode and size', async () => {
    const first = await sh(`cat ${M}/${ev}/trigger`);
    const before = opens();
    const again = await sh(`cat ${M}/${ev}/trigger; stat -c '%a %s' ${M}/${ev}/trigger; wc -c < ${M}/${ev}/trigger`);
    expect(opens()).toBe(before + 2);
    expect(first.stdout).toMatch(/^# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event/);
    expect(again.stdout).toBe(`${first.stdout}640 0\n${first.stdout.length}\n`);
  });

  it('lets the kernel read a cached file by itself where it offers passthrough: no read reaches the daemon, the bytes are the same', async () => {
    const first = await sh(`cat ${M}/${ev}/trigger`);
    const before = m.cachedAnswers();
    const again = await sh(`for i in 1 2 3; do cat ${M}/${ev}/trigger; done`);
    const after = m.cachedAnswers();
    expect(again.stdout).toBe(first.stdout.repeat(3));
    expect(after.open).toBe(before.open + 3);
    // A kernel without FUSE passthrough (before 6.9, or built without it) gets the reads as requests instead.
    if (after.passthrough > 0) {
      expect(after.passthrough).toBe(before.passthrough + 3);
      expect(after.read).toBe(before.read);
    } else expect(after.read).toBeGreaterThan(before.read);
  });

  it('takes writes and shows each change while a file is held open through the kernel\'s own reads', async () => {
    const r = await sh(
      `cd ${M}/${ev} && cat trigger > /dev/null && exec 3< trigger && head -1 <&3 && ` +
        `echo 'traceoff if prev_pid == 0' > trigger && cat trigger && echo 'prev_pid == 2' > filter && cat filter && ` +
        `echo '!traceoff' > trigger && head -1 trigger && echo 0 > filter && cat filter && exec 3<&- && head -1 trigger`,
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('# Available triggers:\ntraceoff:unlimited if prev_pid == 0\nprev_pid == 2\n# Available triggers:\nnone\n# Available triggers:\n');
  });

  it('shows a trigger or a filter as soon as it is written, and the default again once removed', async () => {
    await sh(`cat ${M}/${ev}/filter ${M}/${ev}/trigger`);
    const r = await sh(
      `cd ${M}/${ev} && echo 'prev_pid == 1' > filter && cat filter && echo 0 > filter && cat filter && ` +
        `echo 'traceoff if prev_pid == 0' > trigger && cat trigger && echo '!traceoff' > trigger && cat trigger`,
    );
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.slice(0, 3)).toEqual(['prev_pid == 1', 'none', 'traceoff:unlimited if prev_pid == 0']);
    expect(lines[3]).toBe('# Available triggers:');
  });

  it('holds an instance while one of its files is open natively: rmdir fails with EBUSY until it is closed', async () => {
    await sh(`mkdir ${M}/instances/held && cat ${M}/instances/held/${ev}/trigger > /dev/null && sleep 0.05`);
    const before = opens();
    const r = await sh(
      `exec 3< ${M}/instances/held/${ev}/trigger; rmdir ${M}/instances/held 2>/dev/null; echo "busy:$?"; ` +
        `exec 3<&-; sleep 0.1; rmdir ${M}/instances/held; echo "gone:$?"`,
    );
    expect(opens()).toBe(before + 1);
    expect(r.stdout).toBe('busy:1\ngone:0\n');
  });

  it('lets the kernel keep a directory listing until an entry comes or goes, and lists through the emulated kernel while getdents64 can be seen', async () => {
    const readdirs = () => m.requests.report().readdir?.count ?? 0;
    await sh(`ls ${M}/events/sched ${M}/instances > /dev/null`);
    let before = readdirs();
    const same = await sh(`ls ${M}/events/sched | wc -l; ls ${M}/instances`);
    expect(readdirs()).toBe(before);
    expect(Number(same.stdout.split('\n')[0])).toBeGreaterThan(20);
    // Every change shows at the next listing: an instance made and removed, an event system that comes and goes.
    const r = await sh(
      `mkdir ${M}/instances/listed && ls ${M}/instances && rmdir ${M}/instances/listed && ls ${M}/instances | wc -l && ` +
        `ls ${M}/events > /dev/null && echo 'p:lsprobe vfs_read' > ${M}/kprobe_events && ls ${M}/events | grep -c '^kprobes$'; ` +
        `echo > ${M}/kprobe_events && ls ${M}/events | grep -c '^kprobes$'`,
    );
    expect(r.stdout).toBe('listed\n0\n1\n0\n');
    // A kprobe on the iterate operation sees every listing: none is served from the kernel's cache.
    // (tracing on again: a traceoff trigger written above may have fired)
    await sh(`echo 'p:itr dcache_readdir' > ${M}/kprobe_events && echo 1 > ${M}/events/kprobes/itr/enable && echo 1 > ${M}/tracing_on && echo > ${M}/trace`);
    before = readdirs();
    await sh(`ls ${M}/instances > /dev/null; ls ${M}/instances > /dev/null`);
    expect(readdirs()).toBeGreaterThanOrEqual(before + 2);
    expect((await sh(`cat ${M}/trace`)).stdout.match(/ itr: \(dcache_readdir\+/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
    await sh(`echo 0 > ${M}/events/kprobes/itr/enable && echo > ${M}/kprobe_events`);
  });

  it('sends opens to the emulated kernel while the function tracer can see them', async () => {
    const trace = async () => (await sh(`grep -c 'fd_install <-do_sys_openat2' ${M}/trace`)).stdout.trim();
    await sh(`cat ${M}/${ev}/trigger; echo fd_install > ${M}/set_ftrace_filter; echo function > ${M}/current_tracer; echo 1 > ${M}/tracing_on; echo > ${M}/trace`);
    const before = opens();
    await sh(`cat ${M}/${ev}/trigger ${M}/${ev}/filter > /dev/null`);
    expect(opens()).toBe(before);
    expect(Number(await trace())).toBeGreaterThanOrEqual(2);
    // Off again: once the cache has re-checked its entries (a burst of changes is checked at most every few ms), C answers.
    await sh(`echo nop > ${M}/current_tracer; echo > ${M}/set_ftrace_filter; sleep 0.05`);
    await sh(`cat ${M}/${ev}/trigger > /dev/null`);
    expect(opens()).toBe(before + 1);
  });
});
