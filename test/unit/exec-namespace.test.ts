import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesystemOptions, parseHelperArgs, planHelper } from '../../src/exec/mount_helper.js';
import { type HostFacts, isTraceMount, parseMountinfo, planNamespace } from '../../src/exec/namespace.js';
import { mountOfPath } from '../../src/host/mountinfo.js';
import { binShims, sbinShims } from '../../src/exec/ns_shims.js';

const MOUNTINFO = [
  '22 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
  '23 22 0:21 / /sys rw,relatime - sysfs sysfs rw',
  '30 23 0:12 / /sys/kernel/tracing rw,relatime - tracefs tracefs rw',
  '31 23 0:7 / /sys/kernel/debug rw,relatime - debugfs debugfs rw',
  '32 31 0:12 / /sys/kernel/debug/tracing rw,relatime - tracefs tracefs rw',
  '40 22 0:50 / /srv/other\\040mount rw,nosuid,nodev,relatime - fuse.tracefs tracefs rw,user_id=0,group_id=0',
  '41 22 0:51 / /srv/checkout/mount rw,nosuid,nodev,relatime - fuse.tracefs tracefs rw,user_id=0,group_id=0',
  '42 22 0:52 / /run/emu/debugfs rw,nosuid,nodev,relatime - fuse.debugfs debugfs rw,user_id=0,group_id=0',
].join('\n');

function facts(over: Partial<HostFacts> = {}): HostFacts {
  const existing = new Set(['/sys/kernel/tracing', '/sys/kernel/debug', '/proc/sys/kernel/ftrace_enabled', '/proc/sys/kernel/sched_rt_runtime_us', '/proc/kallsyms', '/proc/version', '/proc/sys/kernel', '/proc/sys/debug', '/sys/devices/system/cpu/cpu1/online']);
  return {
    mounts: parseMountinfo(MOUNTINFO),
    exists: (p) => existing.has(p),
    which: (c) => `/usr/bin/${c}`,
    binSh: '/usr/bin/dash',
    sbin: '/usr/sbin',
    passwd: 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
    group: 'root:x:0:\nnogroup:x:65534:\n',
    list: (d) => (d === '/sys/devices/system/cpu' ? ['cpu0', 'cpu1', 'cpufreq', 'online'] : []),
    read: (p) => (p.endsWith('sched_rt_runtime_us') ? '950000\n' : p.endsWith('/online') ? '1\n' : undefined),
    loopbackUp: true,
    ...over,
  };
}

const shim = { release: '7.2.13+deb14-amd64', nsHelper: "'node' 'cli.js' ns-helper" };
const spec = { tracefs: '/srv/checkout/mount', debugfs: '/run/emu/debugfs', views: { '/proc/kallsyms': '/run/emu/kallsyms' }, controlSocket: '/run/emu/ctl' };

describe('mountinfo', () => {
  it('finds the mount a path is on (the longest mount point above it)', () => {
    const m = parseMountinfo(MOUNTINFO);
    expect(mountOfPath(m, '/sys/kernel/debug/tracing/trace')?.dev).toBe('0:12');
    expect(mountOfPath(m, '/sys/kernel/debugx')?.mountPoint).toBe('/sys');
    expect(mountOfPath(m, '/etc/passwd')).toMatchObject({ mountPoint: '/', fstype: 'ext4', source: '/dev/vda' });
  });

  it('parses mount points (unescaped), types and sources', () => {
    const m = parseMountinfo(MOUNTINFO);
    expect(m[5]).toEqual({ id: 40, mountPoint: '/srv/other mount', fstype: 'fuse.tracefs', source: 'tracefs', options: 'rw,nosuid,nodev,relatime,rw,user_id=0,group_id=0', dev: '0:50' });
    expect(m.filter(isTraceMount).map((e) => e.mountPoint)).toEqual([
      '/sys/kernel/tracing',
      '/sys/kernel/debug',
      '/sys/kernel/debug/tracing',
      '/srv/other mount',
      '/srv/checkout/mount',
      '/run/emu/debugfs',
    ]);
  });
});

describe('the exec namespace plan', () => {
  const plan = planNamespace(spec, facts(), '/rt', shim);
  const lines = plan.script.split('\n');
  const at = (re: RegExp) => lines.findIndex((l) => re.test(l));

  it('unmounts every other tracefs and debugfs, deepest first, before binding ours', () => {
    const um = lines.filter((l) => l.startsWith('umount -l') && l.includes('|| true'));
    expect(um).toEqual([
      "umount -l '/sys/kernel/debug/tracing' 2>/dev/null || true",
      "umount -l '/sys/kernel/tracing' 2>/dev/null || true",
      "umount -l '/sys/kernel/debug' 2>/dev/null || true",
      "umount -l '/srv/other mount' 2>/dev/null || true",
    ]);
    expect(at(/^mount --bind '\/srv\/checkout\/mount' '\/sys\/kernel\/tracing'$/)).toBeGreaterThan(at(/umount -l '\/sys\/kernel\/debug' /));
  });

  it('unmounts, from inside, an emulator that mounted after the host\'s mounts were read, but not its own nor what the command needs', () => {
    // (A second `selftests` series starting beside this one mounts between the reading and the unshare.)
    const kept = planNamespace(spec, facts(), '/rt', shim, ['/srv/late-c/work']);
    const start = kept.script.split('\n').findIndex((l) => l.startsWith('for mp in $(awk'));
    const loop = kept.script.split('\n').slice(start, start + 4).join('\n');
    const table = [
      'tracefs /srv/checkout/mount fuse.tracefs rw 0 0',
      'debugfs /run/emu/debugfs fuse.debugfs rw 0 0',
      'tracefs /srv/late-b fuse.tracefs rw 0 0',
      'emu-proc /run/tracefs-emu/late-b.proc fuse.emu-proc rw 0 0',
      'tracefs /srv/late-c fuse.tracefs rw 0 0',
      'proc /proc proc rw 0 0',
    ].join('\n');
    const script = `umount() { echo "$2"; }\n${loop.replaceAll('/proc/self/mounts', '"$1"')}`;
    const dir = mkdtempSync(join(tmpdir(), 'ns-sweep-'));
    try {
      writeFileSync(join(dir, 'mounts'), `${table}\n`);
      const out = execFileSync('/bin/sh', ['-c', script, 'sh', join(dir, 'mounts')], { encoding: 'utf8' });
      expect(out.trim().split('\n')).toEqual(['/srv/late-b', '/run/tracefs-emu/late-b.proc']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('binds tracefs at /sys/kernel/tracing before anything else, then debugfs and its tracing dir, with a kernel\'s mount flags', () => {
    const mounts = lines.filter((l) => l.startsWith('mount '));
    expect(mounts.slice(0, 6)).toEqual([
      "mount --bind '/srv/checkout/mount' '/sys/kernel/tracing'",
      "mount --bind '/run/emu/debugfs' '/sys/kernel/debug'",
      "mount --bind '/srv/checkout/mount' '/sys/kernel/debug/tracing'",
      "mount -o remount,bind,nosuid,nodev,noexec '/sys/kernel/tracing'",
      "mount -o remount,bind,nosuid,nodev,noexec '/sys/kernel/debug'",
      "mount -o remount,bind,nosuid,nodev,noexec '/sys/kernel/debug/tracing'",
    ]);
    // kept aside for new mounts of them, whatever the command unmounts
    expect(lines).toContain("mount --bind '/sys/kernel/tracing' '/rt/fs/tracefs'");
    expect(lines).toContain("mount --bind '/sys/kernel/debug' '/rt/fs/debugfs'");
    expect(plan.files.find((f) => f.path === 'sbin/mount.tracefs')?.content).toMatch(/ mount --type 'tracefs' --sources '\/rt\/fs' -- "\$@"/);
    expect(lines).toContain("umount -l '/srv/checkout/mount'");
    expect(lines).toContain("umount -l '/run/emu/debugfs'");
  });

  it("shows the daemon's kallsyms and shadows the sysctls, creating the missing ones before any bind", () => {
    expect(lines).toContain("mount --bind '/run/emu/kallsyms' '/proc/kallsyms'");
    expect(lines).toContain("mount --bind '/rt/shadow/proc/sys/kernel/sched_rt_runtime_us' '/proc/sys/kernel/sched_rt_runtime_us'");
    expect(lines).toContain("mount --bind '/rt/shadow/proc/sys/kernel/stack_tracer_enabled' '/proc/sys/kernel/stack_tracer_enabled'");
    expect(plan.files.find((f) => f.path === 'shadow/proc/sys/kernel/sched_rt_runtime_us')?.content).toBe('950000\n');
    // A test taking a CPU offline takes the emulator's, never the host's (cpu0 has no online file).
    expect(lines).toContain("mount --bind '/rt/shadow/sys/devices/system/cpu/cpu1/online' '/sys/devices/system/cpu/cpu1/online'");
    expect(lines.some((l) => l.includes('cpu0/online'))).toBe(false);
    expect(at(/fs_dev '\/sys\/devices\/system\/cpu\/cpu1\/online'.*SYS_DEV/)).toBeGreaterThan(0);
    const lastShadow = Math.max(at(/^shadow_dir '\/proc\/sys\/kernel'$/), at(/^shadow_dir '\/proc\/sys\/debug'$/));
    expect(lastShadow).toBeGreaterThan(0);
    const firstBind = at(/^mount --bind /);
    expect(firstBind).toBeGreaterThan(lastShadow);
    expect(at(/fs_dev '\/proc\/sys\/kernel\/sched_rt_runtime_us'/)).toBeGreaterThan(at(/sched_rt_runtime_us' '\/proc/));
    expect(lines[lines.length - 2]).toBe('exec "$@"');
  });

  it("shows the emulated kernel's CPUs online (not the host's), and live views over the shadows", () => {
    const p4 = planNamespace({ ...spec, cpus: 4, views: { ...spec.views, '/proc/sys/kernel/stack_tracer_enabled': '/run/emu/proc/st' } }, facts(), '/rt', shim);
    const l4 = p4.script.split('\n');
    // every emulated CPU has an online file, cpu0 included (remotes/hotplug.tc takes it offline)
    for (const n of [0, 1, 2, 3]) {
      expect(p4.files.find((f) => f.path === `shadow/sys/devices/system/cpu/cpu${n}/online`)?.content).toBe('1\n');
      expect(l4).toContain(`mount --bind '/rt/shadow/sys/devices/system/cpu/cpu${n}/online' '/sys/devices/system/cpu/cpu${n}/online'`);
    }
    // cpu2 and cpu3 do not exist on this host: the directory is shadowed to make them.
    expect(l4.some((l) => l.startsWith('shadow_dir '))).toBe(true);
    expect(l4).toContain("mkdir -p '/sys/devices/system/cpu/cpu3'");
    expect(l4).toContain("mount --bind '/run/emu/proc/st' '/proc/sys/kernel/stack_tracer_enabled'");
    expect(p4.files.some((f) => f.path.endsWith('stack_tracer_enabled'))).toBe(false);
    // One emulated CPU: the host's cpu1 shows offline.
    const p1 = planNamespace({ ...spec, cpus: 1 }, facts(), '/rt', shim);
    expect(p1.files.find((f) => f.path === 'shadow/sys/devices/system/cpu/cpu1/online')?.content).toBe('0\n');
  });

  it('runs the command under the syscall watcher when the daemon has a FIFO: calls on what it serves are not reported', () => {
    const live = { ...spec, liveViews: '/run/emu/proc', eventsFifo: '/run/emu/events', views: { ...spec.views, '/proc/version': '/run/emu/proc/proc_version' } };
    const p = planNamespace(live, facts(), '/rt', shim, [], '/opt/emu/syscall_watch');
    const l = p.script.split('\n');
    expect(l[l.length - 2]).toBe(
      "exec '/opt/emu/syscall_watch' '/run/emu/events' --served '/sys/kernel/tracing' --served '/sys/kernel/debug/tracing' --served '/sys/kernel/debug' --served '/proc/version' --fs 'tracefs=/rt/fs/tracefs' --fs 'debugfs=/rt/fs/debugfs' " +
        // where the sources given to new mounts of them are noted
        "--mount-sources '/rt/fs/mount-sources' " +
        // the namespace's own mounts, which its mount tables leave out: shadowed directories, views, where mounts come from, the helpers' overlay
        "--hide '/proc/sys/debug' --hide '/proc/sys/kernel' --hide '/proc/kallsyms' --hide '/proc/version' --hide '/proc/sys/kernel/ftrace_enabled' " +
        "--hide '/proc/sys/kernel/stack_tracer_enabled' --hide '/proc/sys/kernel/traceoff_on_warning' --hide '/proc/sys/kernel/ftrace_dump_on_oops' " +
        "--hide '/proc/sys/kernel/tracepoint_printk' --hide '/proc/sys/debug/kprobes-optimization' --hide '/proc/sys/kernel/sched_rt_runtime_us' " +
        "--hide '/sys/devices/system/cpu/cpu1/online' --hide '/rt/fs/tracefs' --hide '/rt/fs/debugfs' --hide '/usr/sbin' --observe '/run/emu/events.observe' -- \"$@\"",
    );
    // pinned by its caller: the watcher shows it the CPUs it had
    const pinned = planNamespace(live, facts(), '/rt', shim, [], '/opt/emu/syscall_watch', '0-1').script;
    expect(pinned).toContain("--hide '/usr/sbin' --cpus-shown '0-1' --observe '/run/emu/events.observe' -- \"$@\"");
    // without a FIFO or without the program: the command itself, with a warning for the missing program
    expect(planNamespace(spec, facts(), '/rt', shim, [], '/opt/emu/syscall_watch').script).toMatch(/\nexec "\$@"\n$/);
    const noProg = planNamespace(live, facts(), '/rt', shim);
    expect(noProg.script).toMatch(/\nexec "\$@"\n$/);
    expect(noProg.warnings.some((w) => /syscall_watch/.test(w))).toBe(true);
  });

  it('puts the helpers over /sbin and first in PATH, with gawk as awk', () => {
    expect(lines.some((l) => l.startsWith("mount -t overlay emu-sbin -o 'lowerdir=/rt/sbin:/usr/sbin' '/usr/sbin'"))).toBe(true);
    expect(lines).toContain('PATH="$R/bin:$PATH"; export PATH');
    const paths = plan.files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['bin/modprobe', 'bin/rmmod', 'bin/lsmod', 'bin/awk', 'sbin/mount.tracefs', 'sbin/mount.fuse.tracefs']));
    expect(plan.files.find((f) => f.path === 'bin/awk')?.symlink).toBe('/usr/bin/gawk');
    expect(plan.warnings).toEqual([]);
  });

  it('adds a non-root user and group only when the host has none, and warns of missing tools', () => {
    const p = planNamespace(spec, facts({ passwd: 'root:x:0:0::/root:/bin/sh\n', group: 'root:x:0:\n', which: (c) => (c === 'chrt' ? undefined : `/usr/bin/${c}`), binSh: '/usr/bin/bash' }), '/rt', shim);
    expect(p.files.find((f) => f.path === 'etc/passwd')?.content).toMatch(/^root:x:0:0::\/root:\/bin\/sh\ntracefs-test:x:61100:61100:/);
    expect(p.files.find((f) => f.path === 'etc/group')?.content).toBe('root:x:0:\ntracefs-test:x:61100:\n');
    expect(p.script).toContain('mount --bind "$R/etc/passwd" /etc/passwd');
    expect(p.warnings.join('\n')).toMatch(/chrt is missing/);
    expect(p.warnings.join('\n')).toMatch(/not dash/);
    expect(plan.script).not.toContain('/etc/passwd');
  });

  it('hides mounts whose /proc/mounts line names tracefs, unless the command needs them', () => {
    const mounts = [
      ...parseMountinfo(MOUNTINFO),
      { mountPoint: '/srv/tracefs-emu', fstype: 'ext4', source: '/dev/vdb' },
      { mountPoint: '/mnt/x', fstype: 'tmpfs', source: 'tracefs-stub' },
    ];
    const p = planNamespace(spec, facts({ mounts }), '/rt', shim, ['/srv/tracefs-emu/repo']);
    expect(p.script).toContain("umount -l '/mnt/x' 2>/dev/null || true");
    expect(p.script).not.toContain("umount -l '/srv/tracefs-emu'");
    expect(p.warnings.join('\n')).toMatch(/\/srv\/tracefs-emu .*stays/);
  });

  it('makes a static debugfs stand-in without a daemon debugfs', () => {
    const p = planNamespace({ tracefs: '/srv/checkout/mount' }, facts(), '/rt', shim);
    expect(p.script).toContain("mount -t tmpfs -o mode=0700 debugfs '/sys/kernel/debug'");
    expect(p.warnings.join('\n')).toMatch(/no debugfs/);
    expect(p.warnings.join('\n')).toMatch(/kallsyms/);
  });
});

describe('the namespace mount helper', () => {
  it('parses what util-linux passes to mount.TYPE', () => {
    expect(parseHelperArgs('tracefs', ['nodev', '/sys/kernel/tracing', '-o', 'rw,remount,gid=5'])).toMatchObject({
      source: 'nodev',
      target: '/sys/kernel/tracing',
      options: ['rw', 'remount', 'gid=5'],
    });
    expect(parseHelperArgs('fuse.tracefs', ['-n', '-v', 'tracefs', '/x', '-o', 'remount', '-t', 'fuse.tracefs'])).toMatchObject({ type: 'fuse.tracefs', verbose: true, target: '/x' });
  });

  it('sends only the tracefs options of a remount to the daemon', () => {
    const opts = 'remount,rw,nosuid,nodev,relatime,user_id=0,group_id=0,default_permissions,allow_other,gid=1000'.split(',');
    expect(filesystemOptions(opts)).toEqual(['gid=1000']);
    expect(planHelper(parseHelperArgs('fuse.tracefs', ['tracefs', '/sys/kernel/tracing', '-o', opts.join(',')]))).toEqual({
      kind: 'remount',
      fs: 'tracefs',
      target: '/sys/kernel/tracing',
      options: ['gid=1000'],
    });
  });

  it('binds the namespace tracefs for a new mount of it', () => {
    expect(planHelper(parseHelperArgs('tracefs', ['nodev', '/mnt/t']))).toEqual({ kind: 'bind', fs: 'tracefs', from: '/sys/kernel/tracing', to: '/mnt/t', options: [] });
    // From the namespace's sources (there whatever was unmounted); debugfs with tracefs on its tracing directory.
    expect(planHelper(parseHelperArgs('tracefs', ['nodev', '/sys/kernel/tracing']), '/rt/fs')).toEqual({ kind: 'bind', fs: 'tracefs', from: '/rt/fs/tracefs', to: '/sys/kernel/tracing', options: [] });
    expect(planHelper(parseHelperArgs('debugfs', ['nodev', '/sys/kernel/debug/']), '/rt/fs')).toEqual({
      kind: 'bind',
      fs: 'debugfs',
      from: '/rt/fs/debugfs',
      to: '/sys/kernel/debug/',
      options: [],
      automount: { from: '/rt/fs/tracefs', to: '/sys/kernel/debug/tracing' },
    });
  });

  it('runs the kmod tools as the small native program, or answers as a kernel without modules when it cannot be built', () => {
    const withTool = binShims({ ...shim, controlSocket: '/run/c.sock', kmodTool: '/cache/kmod_tool-1' });
    expect(withTool.modprobe).toContain("TRACEFS_EMU_CONTROL='/run/c.sock' exec '/cache/kmod_tool-1' modprobe --release '7.2.13+deb14-amd64' -- \"$@\"");
    expect(withTool.lsmod).toContain("exec '/cache/kmod_tool-1' lsmod");
    const without = binShims({ ...shim, controlSocket: '/run/c.sock' });
    expect(without.modprobe).toContain('no loadable modules');
  });

  it('bakes the control socket into the helpers', () => {
    const s = sbinShims({ ...shim, controlSocket: "/run/it's.sock" });
    expect(s['mount.fuse.tracefs']).toContain("TRACEFS_EMU_CONTROL='/run/it'\\''s.sock' exec 'node' 'cli.js' ns-helper mount --type 'fuse.tracefs' -- \"$@\"");
  });
});
