/**
 * `tracefs-emu exec`: a command run in a private mount namespace where the
 * emulator is the only tracefs, at the standard paths:
 *
 *   /sys/kernel/tracing, /sys/kernel/debug/tracing   the emulator's tracefs
 *   /sys/kernel/debug                                its debugfs
 *   /proc/kallsyms, tracing sysctls, CPU online     its views (files the daemon gives),
 *                                                    or shadow files: never the host kernel's
 *   /sbin/mount.tracefs, modprobe, …                 helpers answering as the emulated kernel
 *   PATH                                             the same tools, and GNU awk as awk
 *
 * Every other tracefs/debugfs mount is unmounted inside, so the first
 * tracefs in /proc/mounts is /sys/kernel/tracing (ftracetest looks there).
 * Nothing outside the namespace changes: all of it is bind mounts (and one
 * read-only overlay on /sbin) of files in a runtime directory.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { observePath } from '../host/events.js';
import { ownCpuList } from '../host/proc_source.js';
import { type MountInfo, parseMountinfo } from '../host/mountinfo.js';
import { nativeHelper } from '../host/native_helper.js';
import { expectSystemError } from '../host/system_error.js';
import { mountSourcesFile } from './mount_helper.js';
import { binShims, sbinShims, type ShimContext, shq } from './ns_shims.js';

export interface NamespaceSpec {
  /** The emulator's tracefs mount (a directory of this namespace). */
  tracefs: string;
  /** Its debugfs mount; without one, a static stand-in (empty kprobes files). */
  debugfs?: string;
  /** Files the emulator shows at system paths (e.g. '/proc/kallsyms' → the daemon's symbol view). */
  views?: Record<string, string>;
  /** The daemon's mount of live views (views point into it): kept until bound, then hidden like the others. */
  liveViews?: string;
  /** The daemon's control socket (helpers inside send it remount requests). */
  controlSocket?: string;
  /** Kernel release of the emulated kernel (modprobe's messages). */
  release?: string;
  /** The emulated kernel's CPU count: the cpuN/online files shown follow it. */
  cpus?: number;
  /** The daemon's FIFO for system calls the command makes outside the mount (native/seccomp/syscall_watch.c). */
  eventsFifo?: string;
  /** Where the daemon keeps the tracefs's own mount options (",gid=1000"), which the mount tables show. */
  tracefsOptions?: string;
}

/** The emulated kernel's tracing sysctls, shadowed with these defaults unless the daemon serves them. */
const SYSCTL_DEFAULTS: Record<string, string> = {
  '/proc/sys/kernel/ftrace_enabled': '1\n',
  '/proc/sys/kernel/stack_tracer_enabled': '0\n',
  '/proc/sys/kernel/traceoff_on_warning': '0\n',
  '/proc/sys/kernel/ftrace_dump_on_oops': '0\n',
  '/proc/sys/kernel/tracepoint_printk': '0\n',
  '/proc/sys/debug/kprobes-optimization': '1\n',
};

/**
 * Host files that tests write, shadowed with their content (path → text):
 * ftracetest sets sched_rt_runtime_us (the host's value); func_hotplug.tc
 * takes a CPU offline and back, among cpu1…, and remotes/hotplug.tc the
 * first one, cpu0 — the emulated kernel's `cpus` CPUs, online, each with an
 * online file (an x86 cpu0 has none; the emulated one may go offline as an
 * arm64 one may); a host CPU beyond them shows offline. Without `cpus`, the
 * host's CPUs as they are.
 */
function hostShadows(facts: HostFacts, cpus?: number): Record<string, string> {
  const out: Record<string, string> = {};
  const rt = facts.read('/proc/sys/kernel/sched_rt_runtime_us');
  if (rt !== undefined) out['/proc/sys/kernel/sched_rt_runtime_us'] = rt;
  const online = (n: number) => `/sys/devices/system/cpu/cpu${n}/online`;
  const host = facts
    .list('/sys/devices/system/cpu')
    .map((n) => /^cpu(\d+)$/.exec(n))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => Number(m[1]))
    .filter((n) => facts.exists(online(n)));
  if (cpus === undefined) {
    for (const n of host) {
      const v = facts.read(online(n));
      if (v !== undefined) out[online(n)] = v;
    }
    return out;
  }
  for (let n = 0; n < cpus; n++) out[online(n)] = '1\n';
  for (const n of host) if (n >= cpus) out[online(n)] = '0\n';
  return out;
}

const TRACEFS_TARGETS = ['/sys/kernel/tracing', '/sys/kernel/debug/tracing'];
/** The filesystem name of a daemon's live views (another daemon's are not to be seen inside either). */
export const LIVE_VIEWS_FS = 'emu-proc';
const DEBUGFS_TARGET = '/sys/kernel/debug';
const KERNEL_MOUNT_FLAGS = 'nosuid,nodev,noexec';
/** The runtime directory's folder of the namespace's tracefs and debugfs (what mounts of them bind). */
const FS_SOURCES = 'fs';

/** A mount as the namespace plan needs it. */
type MountEntry = Pick<MountInfo, 'mountPoint' | 'fstype' | 'source'>;

export { parseMountinfo };

/** A mount a tool could take for tracefs or debugfs: the kernel's, or an emulator's (fuse.tracefs). */
export function isTraceMount(m: MountEntry): boolean {
  const t = m.fstype.replace(/^fuse(blk)?\./, '');
  return t === 'tracefs' || t === 'debugfs' || (m.fstype.startsWith('fuse') && (m.source === 'tracefs' || m.source === 'debugfs'));
}

/** What the plan needs to know of the host (gathered by `hostFacts`, faked in tests). */
export interface HostFacts {
  mounts: MountEntry[];
  exists(path: string): boolean;
  /** Names in a directory ([] if none). */
  list(dir: string): string[];
  which(cmd: string): string | undefined;
  /** realpath of /bin/sh */
  binSh: string;
  /** realpath of /sbin (where mount looks for helpers) */
  sbin: string;
  passwd: string;
  group: string;
  /** A host file's content (undefined if unreadable). */
  read(path: string): string | undefined;
  loopbackUp: boolean;
}

interface NamespacePlan {
  /** Shell script run by /bin/sh inside the new namespace; ends with `exec "$@"`. */
  script: string;
  /** Files to create in the runtime directory (relative path → content; mode 0755 when executable). */
  files: { path: string; content?: string; symlink?: string; mode?: number }[];
  /** What the environment lacks (the command still runs). */
  warnings: string[];
}

/** Tools the selftests run, and why (for the warning when one is missing). */
const NEEDED_TOOLS: [string, string][] = [
  ['gawk', 'trace_marker_raw.tc needs GNU awk (strtonum) as awk'],
  ['ping', 'trigger tests ping 127.0.0.1'],
  ['nice', 'trigger-onchange-action-hist.tc, trigger-snapshot-action-hist.tc'],
  ['chrt', 'tracer/wakeup*.tc'],
  ['lscpu', 'trace_marker_raw.tc reads the byte order from it'],
  ['readelf', 'add_remove_uprobe.tc finds /bin/sh entry point with it'],
];

/** The deepest existing ancestor of a path that does not exist. */
function existingAncestor(path: string, facts: HostFacts): string {
  let d = dirname(path);
  while (d !== '/' && !facts.exists(d)) d = dirname(d);
  return d;
}

/**
 * The set-up script and files of a namespace. `keep`: paths the command needs
 * (its cwd, the CLI), whose mounts are never taken away. `watcher`: the
 * syscall_watch program, which runs the command when the daemon has a FIFO
 * for what it reports.
 */
export function planNamespace(spec: NamespaceSpec, facts: HostFacts, runtime: string, shim: Omit<ShimContext, 'gawk' | 'sources'>, keep: string[] = [], watcher?: string, cpusShown?: string): NamespacePlan {
  const warnings: string[] = [];
  const files: NamespacePlan['files'] = [];
  const sh: string[] = [
    'set -e',
    `R=${shq(runtime)}`,
    // Covers a directory with a tmpfs holding binds of all it had, so that files can be added.
    'n=0',
    'shadow_dir() {',
    '  n=$((n + 1)); o="$R/orig/$n"; mkdir -p "$o"',
    '  mount --bind "$1" "$o"',
    '  mount -t tmpfs -o mode=0755 emu-shadow "$1"',
    '  for e in "$o"/* "$o"/.[!.]*; do',
    '    [ -e "$e" ] || [ -L "$e" ] || continue',
    '    t="$1/${e##*/}"',
    '    if [ -d "$e" ] && [ ! -L "$e" ]; then mkdir "$t"; else : > "$t"; fi',
    '    mount --bind "$e" "$t" 2>/dev/null || true',
    '  done',
    '  umount -l "$o"',
    '}',
  ];
  // Phases: other trace mounts away; every missing target created (shadowing a
  // directory binds what it had, so no bind may come before it); then the binds.
  const prepare: string[] = [];
  const binds: string[] = [];
  const shadowed = new Set<string>();
  /** Makes `path` exist inside the namespace (a dir or a file) by shadowing its nearest existing ancestor. */
  const ensure = (path: string, kind: 'dir' | 'file') => {
    if (facts.exists(path)) return;
    const anc = existingAncestor(path, facts);
    if (!shadowed.has(anc)) {
      shadowed.add(anc);
      prepare.push(`shadow_dir ${shq(anc)}`);
    }
    if (dirname(path) !== anc) prepare.push(`mkdir -p ${shq(dirname(path))}`);
    prepare.push(kind === 'dir' ? `mkdir -p ${shq(path)}` : `[ -e ${shq(path)} ] || : > ${shq(path)}`);
  };

  const own = new Set([spec.tracefs, spec.debugfs, spec.liveViews].filter((p): p is string => !!p));
  // Other tracefs/debugfs mounts (and other daemons' views) go first, deepest first (a bind on top of them would be hidden by their
  // removal); and any mount whose /proc/mounts line names tracefs, which would come before ours for
  // `grep tracefs /proc/mounts | head -1`, unless the command needs what it holds.
  const names = (m: MountEntry) => /tracefs/.test(`${m.source} ${m.mountPoint} ${m.fstype}`);
  const needed = (m: MountEntry) => keep.some((k) => k === m.mountPoint || k.startsWith(m.mountPoint === '/' ? '/' : `${m.mountPoint}/`));
  for (const m of facts.mounts) {
    if (!isTraceMount(m) && names(m) && !own.has(m.mountPoint) && needed(m)) {
      warnings.push(`${m.mountPoint} (${m.source}, ${m.fstype}) names tracefs in /proc/mounts and stays: tools looking for tracefs there may pick it`);
    }
  }
  const others = facts.mounts
    .filter((m) => !own.has(m.mountPoint) && (isTraceMount(m) || m.fstype === `fuse.${LIVE_VIEWS_FS}` || (names(m) && !needed(m))))
    .map((m) => m.mountPoint)
    .filter((p, i, a) => a.indexOf(p) === i)
    .sort((a, b) => b.split('/').length - a.split('/').length || (a < b ? 1 : -1));
  for (const p of others) sh.push(`umount -l ${shq(p)} 2>/dev/null || true`);
  // An emulator that mounted between the reading of the host's mounts and the unshare (a second
  // `selftests` series starting beside this one) is in the namespace too: its mounts go the same way.
  const spared = [...own, ...keep].map(shq).join(' ');
  sh.push(
    `for mp in $(awk '$3 == "fuse.tracefs" || $3 == "fuse.debugfs" || $3 == "fuse.${LIVE_VIEWS_FS}" { print $2 }' /proc/self/mounts); do`,
    `  for k in ${spared || "''"}; do case "$k" in "$mp"|"$mp"/*) continue 2 ;; esac; done`,
    '  umount -l "$mp" 2>/dev/null || true',
    'done',
  );

  // tracefs at /sys/kernel/tracing first: it must be the first tracefs line of /proc/mounts.
  const [tracingTarget, debugTracingTarget] = TRACEFS_TARGETS;
  ensure(tracingTarget, 'dir');
  ensure(DEBUGFS_TARGET, 'dir');
  if (spec.tracefs !== tracingTarget) binds.push(`mount --bind ${shq(spec.tracefs)} ${shq(tracingTarget)}`);
  if (spec.debugfs) {
    if (spec.debugfs !== DEBUGFS_TARGET) binds.push(`mount --bind ${shq(spec.debugfs)} ${shq(DEBUGFS_TARGET)}`);
  } else {
    warnings.push('the daemon serves no debugfs: /sys/kernel/debug is a static stand-in (empty kprobes files)');
    binds.push(
      `mount -t tmpfs -o mode=0700 debugfs ${shq(DEBUGFS_TARGET)}`,
      `mkdir -m 0555 ${shq(`${DEBUGFS_TARGET}/tracing`)}`,
      `mkdir -m 0755 ${shq(`${DEBUGFS_TARGET}/kprobes`)}`,
      `: > ${shq(`${DEBUGFS_TARGET}/kprobes/list`)}; chmod 0400 ${shq(`${DEBUGFS_TARGET}/kprobes/list`)}`,
      `: > ${shq(`${DEBUGFS_TARGET}/kprobes/blacklist`)}; chmod 0400 ${shq(`${DEBUGFS_TARGET}/kprobes/blacklist`)}`,
      `echo 1 > ${shq(`${DEBUGFS_TARGET}/kprobes/enabled`)}; chmod 0600 ${shq(`${DEBUGFS_TARGET}/kprobes/enabled`)}`,
    );
  }
  binds.push(`mount --bind ${shq(spec.tracefs)} ${shq(debugTracingTarget)}`);
  // The flags a kernel's tracefs and debugfs mounts have (systemd's sys-kernel-tracing.mount and sys-kernel-debug.mount).
  for (const target of [tracingTarget, ...(spec.debugfs ? [DEBUGFS_TARGET] : []), debugTracingTarget]) binds.push(`mount -o remount,bind,${KERNEL_MOUNT_FLAGS} ${shq(target)}`);
  // Where a new mount of tracefs or debugfs comes from, whatever the command unmounts (debugfs without its tracing).
  const sources = join(runtime, FS_SOURCES);
  for (const [fs, from] of [['tracefs', tracingTarget], ['debugfs', DEBUGFS_TARGET]] as const) {
    binds.push(`mkdir -p ${shq(`${sources}/${fs}`)}`, `mount --bind ${shq(from)} ${shq(`${sources}/${fs}`)}`);
  }
  // The mounts at their daemon's places are not to be seen inside (once everything is bound from them).
  const mounted = new Set(facts.mounts.map((m) => m.mountPoint));
  const hide = [...own].filter((p) => mounted.has(p) && ![...TRACEFS_TARGETS, DEBUGFS_TARGET].includes(p)).map((p) => `umount -l ${shq(p)}`);

  // The emulator's views (/proc/kallsyms, …), and shadows of what tests write that belongs to the kernel.
  const views = new Map<string, string>(Object.entries(spec.views ?? {}));
  const shadow = (path: string, content: string) => {
    const rel = `shadow${path}`;
    files.push({ path: rel, content });
    views.set(path, join(runtime, rel));
  };
  for (const [p, content] of Object.entries(SYSCTL_DEFAULTS)) if (!views.has(p)) shadow(p, content);
  for (const [p, v] of Object.entries(hostShadows(facts, spec.cpus))) if (!views.has(p)) shadow(p, v);
  if (!views.has('/proc/kallsyms')) warnings.push("the daemon gives no symbol view: /proc/kallsyms is the host kernel's");
  // /proc itself cannot be shadowed: a view of a /proc file the host kernel has not (/proc/modules without CONFIG_MODULES) is left out.
  for (const target of [...views.keys()]) {
    if (dirname(target) === '/proc' && !facts.exists(target)) views.delete(target);
  }
  for (const [target, source] of [...views].sort(([a], [b]) => (a < b ? -1 : 1))) {
    ensure(target, 'file');
    binds.push(`mount --bind ${shq(source)} ${shq(target)}`);
  }
  sh.push(...prepare, ...binds, ...hide);
  // The namespace's own mounts, which the mount tables it shows leave out (what is mounted on them goes too).
  const ownMounts = [...shadowed, ...views.keys(), `${sources}/tracefs`, `${sources}/debugfs`];
  // Never let a write meant for the emulator reach the host kernel: each view must now be a bind from elsewhere.
  sh.push('fs_dev() { stat -c %d "$1"; }', 'PROC_DEV=$(fs_dev /proc) SYS_DEV=$(fs_dev /sys)');
  for (const target of [...views.keys()].sort()) {
    const dev = target.startsWith('/sys/') ? '$SYS_DEV' : '$PROC_DEV';
    sh.push(`[ "$(fs_dev ${shq(target)})" != "${dev}" ] || { echo "tracefs-emu exec: ${target} is still the host's" >&2; exit 125; }`);
  }

  // Users: the ownership tests pick a non-root user and group from the end of these files.
  const nonRoot = (text: string) => text.split('\n').some((l) => /^[^:#]+:[^:]*:\d+:/.test(l) && l.split(':')[2] !== '0');
  for (const [name, text, line] of [
    ['passwd', facts.passwd, 'tracefs-test:x:61100:61100:tracefs-emu test user:/nonexistent:/usr/sbin/nologin'],
    ['group', facts.group, 'tracefs-test:x:61100:'],
  ] as const) {
    if (nonRoot(text)) continue;
    files.push({ path: `etc/${name}`, content: `${text.replace(/\n?$/, '\n')}${line}\n` });
    sh.push(`mount --bind "$R/etc/${name}" /etc/${name}`);
    ownMounts.push(`/etc/${name}`);
  }

  // Tools.
  if (basename(facts.binSh) !== 'dash') warnings.push(`/bin/sh is ${facts.binSh}, not dash: some selftests see the shell's path (install dash as /bin/sh)`);
  for (const [tool, why] of NEEDED_TOOLS) if (!facts.which(tool)) warnings.push(`${tool} is missing (${why}): run scripts/setup.sh`);
  if (!facts.loopbackUp) warnings.push('loopback is down: ping 127.0.0.1 fails (trigger tests)');
  const ctx: ShimContext = { ...shim, gawk: facts.which('gawk'), sources };
  for (const [name, content] of Object.entries(binShims(ctx))) files.push({ path: `bin/${name}`, content, mode: 0o755 });
  if (ctx.gawk) files.push({ path: 'bin/awk', symlink: ctx.gawk });
  for (const [name, content] of Object.entries(sbinShims(ctx))) files.push({ path: `sbin/${name}`, content, mode: 0o755 });
  sh.push(
    `mount -t overlay emu-sbin -o ${shq(`lowerdir=${runtime}/sbin:${facts.sbin}`)} ${shq(facts.sbin)} 2>/dev/null ||`,
    `  echo "tracefs-emu exec: no overlay on ${facts.sbin}: mount -o remount of tracefs will not reach the emulator" >&2`,
    'PATH="$R/bin:$PATH"; export PATH',
    'unset n o e t R PROC_DEV SYS_DEV',
  );
  if (watcher && spec.eventsFifo) {
    // What the daemon serves is seen as FUSE requests: only calls elsewhere are reported (and every chdir).
    const served = [...TRACEFS_TARGETS, DEBUGFS_TARGET, ...[...views].filter(([, src]) => spec.liveViews && src.startsWith(`${spec.liveViews}/`)).map(([t]) => t)];
    // A mount(2) of tracefs or debugfs binds ours instead; its mount tables show ours as the kernel's filesystems.
    const fs = [`tracefs=${sources}/tracefs`, `debugfs=${sources}/debugfs`];
    ownMounts.push(facts.sbin);
    // Every other call is traced while the daemon says something can see it.
    const observe = `--observe ${shq(observePath(spec.eventsFifo))}`;
    const own = spec.tracefsOptions ? [`--fs-options ${shq(`tracefs=${spec.tracefsOptions}`)}`] : [];
    const args = [
      ...served.map((p) => `--served ${shq(p)}`),
      ...fs.map((f) => `--fs ${shq(f)}`),
      ...own,
      `--mount-sources ${shq(mountSourcesFile(sources))}`,
      ...ownMounts.map((p) => `--hide ${shq(p)}`),
      // Pinned to a CPU by its caller, the command still sees (sched_getaffinity) the CPUs it had.
      ...(cpusShown ? [`--cpus-shown ${shq(cpusShown)}`] : []),
      observe,
    ];
    sh.push(`exec ${shq(watcher)} ${shq(spec.eventsFifo)} ${args.join(' ')} -- "$@"`);
  } else {
    if (spec.eventsFifo) warnings.push('no syscall_watch program (a C compiler builds it): system calls outside the mount are not seen');
    sh.push('exec "$@"');
  }
  return { script: sh.join('\n') + '\n', files, warnings };
}

/** Where `cmd` is in this process's PATH (undefined when it is nowhere). */
export function which(cmd: string): string | undefined {
  for (const d of (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin').split(':')) {
    const p = join(d || '.', cmd);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch (e) {
      expectSystemError(e); // next
    }
  }
  return undefined;
}

function readOr(path: string, dflt = ''): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    expectSystemError(e);
    return dflt;
  }
}

/** native/seccomp/syscall_watch.c, built if needed. */
export function syscallWatcher(): string | undefined {
  return nativeHelper('seccomp', 'syscall_watch');
}

function hostFacts(): HostFacts {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch (e) {
      expectSystemError(e);
      return p;
    }
  };
  return {
    mounts: parseMountinfo(readOr('/proc/self/mountinfo')),
    exists: (p) => existsSync(p),
    which,
    binSh: real('/bin/sh'),
    sbin: real('/sbin'),
    passwd: readOr('/etc/passwd'),
    group: readOr('/etc/group'),
    list: (d) => {
      try {
        return readdirSync(d);
      } catch (e) {
        expectSystemError(e);
        return [];
      }
    },
    read: (p) => {
      try {
        return readFileSync(p, 'utf8');
      } catch (e) {
        expectSystemError(e);
        return undefined;
      }
    },
    loopbackUp: (parseInt(readOr('/sys/class/net/lo/flags', '0x1'), 16) & 1) === 1,
  };
}

function writeRuntime(runtime: string, plan: NamespacePlan): void {
  for (const f of plan.files) {
    const p = join(runtime, f.path);
    mkdirSync(dirname(p), { recursive: true });
    if (f.symlink) symlinkSync(f.symlink, p);
    else writeFileSync(p, f.content ?? '', { mode: f.mode ?? 0o644 });
  }
}

export interface ExecOptions {
  /** Command line that runs `tracefs-emu ns-helper` (shell-quoted). */
  nsHelper: string;
  /** Print the plan's warnings (default: to stderr). */
  warn?: (msg: string) => void;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Called with the child once it runs (e.g. for a watchdog). */
  onSpawn?: (pid: number) => void;
  /** Paths the command needs besides its cwd (their mounts stay). */
  keep?: string[];
  /** The syscall_watch program, or false to leave the command's system calls outside the mount unseen. */
  watcher?: string | false;
  /** stdio of the command (default inherit); 'pipe' hands stdout and stderr to the callbacks. */
  stdio?: 'inherit' | 'pipe';
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  /**
   * The host CPU the command and its watcher run on (taskset), shown by
   * sched_getaffinity the CPUs this process may run on: the selftests keep
   * each emulator and its tests on one CPU (on a virtual machine a FUSE
   * round trip within a CPU costs a fraction of one between CPUs). Needs
   * the watcher.
   */
  cpu?: number;
}

/** Runs argv in a new namespace set up after `spec`; resolves to its exit status (128+N for a signal). */
export async function execInNamespace(spec: NamespaceSpec, argv: string[], opts: ExecOptions): Promise<number> {
  if (argv.length === 0) throw new Error('exec: no command');
  const runtime = mkdtempSync(join(process.env.TRACEFS_EMU_RUNTIME || tmpdir(), 'emu-exec-'));
  try {
    const facts = hostFacts();
    const warn = opts.warn ?? ((m: string) => process.stderr.write(`tracefs-emu exec: ${m}\n`));
    // Mount points are compared as mountinfo shows them; never stat them here (a hung daemon would block).
    const resolved: NamespaceSpec = { ...spec, tracefs: resolve(spec.tracefs), debugfs: spec.debugfs && resolve(spec.debugfs) };
    const real = (p: string) => realpathSync(p);
    const watcher = opts.watcher === false ? undefined : (opts.watcher ?? syscallWatcher());
    // Without a watcher to answer sched_getaffinity, the command would see the pin: it runs where it would.
    const pin = opts.cpu !== undefined && watcher !== undefined && which('taskset') !== undefined;
    const plan = planNamespace(
      resolved,
      facts,
      runtime,
      { release: spec.release ?? readOr('/proc/sys/kernel/osrelease').trim(), nsHelper: opts.nsHelper, controlSocket: spec.controlSocket, kmodTool: nativeHelper('kmod', 'kmod_tool') },
      [real(opts.cwd ?? process.cwd()), runtime, ...(opts.keep ?? [])],
      watcher,
      pin ? ownCpuList() : undefined,
    );
    if (/tracefs|debugfs/.test(runtime)) warn(`the runtime directory ${runtime} names tracefs: set TRACEFS_EMU_RUNTIME elsewhere`);
    for (const w of plan.warnings) warn(w);
    writeRuntime(runtime, plan);
    return await new Promise<number>((resolve, reject) => {
      const unshare = ['unshare', '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', plan.script, 'tracefs-emu-exec', ...argv];
      const cmd = pin ? ['taskset', '-c', String(opts.cpu), ...unshare] : unshare;
      const child = spawn(cmd[0]!, cmd.slice(1), {
        stdio: opts.stdio === 'pipe' ? ['inherit', 'pipe', 'pipe'] : 'inherit',
        cwd: opts.cwd,
        env: opts.env ?? process.env,
      });
      if (opts.stdio === 'pipe') {
        child.stdout?.on('data', (d: Buffer) => opts.onStdout?.(d));
        child.stderr?.on('data', (d: Buffer) => opts.onStderr?.(d));
      }
      const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
      const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((s) => [s, forward(s)] as const);
      for (const [s, h] of handlers) process.on(s, h);
      child.on('spawn', () => child.pid && opts.onSpawn?.(child.pid));
      child.on('error', (e) => {
        for (const [s, h] of handlers) process.off(s, h);
        reject(new Error(`exec: cannot run unshare: ${e.message}`));
      });
      child.on('close', (code, signal) => {
        for (const [s, h] of handlers) process.off(s, h);
        resolve(code ?? 128 + (signal ? (osSignals[signal] ?? 0) : 0));
      });
    });
  } finally {
    rmSync(runtime, { recursive: true, force: true });
  }
}

const osSignals: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
