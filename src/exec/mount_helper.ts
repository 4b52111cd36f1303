/**
 * The mount helper of the `exec` namespace (/sbin/mount.tracefs,
 * /sbin/mount.fuse.tracefs): util-linux mount runs it as
 * `mount.TYPE [-sfnv] SOURCE TARGET [-o OPTIONS] [-t TYPE]`.
 *
 * - a remount carries the tracefs options (gid=, uid=, mode=) to the
 *   daemon's `remount` command, as the kernel's tracefs_reconfigure() would
 *   apply them; the options that only the VFS or FUSE understand (rw,
 *   relatime, user_id=, allow_other, …: what `mount` shows of a FUSE mount,
 *   and what 00basic/mount_options.tc hands back) are left out;
 * - a new mount of tracefs or debugfs binds the namespace's one (kept
 *   aside, so whatever was unmounted the same filesystem comes back), a
 *   debugfs with tracefs on its tracing directory (the kernel's automount);
 *   on a mount point that already has it, it fails as the kernel's EBUSY;
 *   the source it was given is noted for the mount tables to show.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { controlRequest } from '../daemon/control.js';
import { escapeMount, parseMountinfo } from '../host/mountinfo.js';
import { expectSystemError } from '../host/system_error.js';

interface HelperCall {
  type: string;
  source: string;
  target: string;
  options: string[];
  verbose: boolean;
  fake: boolean;
}

type HelperAction =
  | { kind: 'remount'; fs: 'tracefs' | 'debugfs'; target: string; options: string[] }
  | { kind: 'bind'; fs: 'tracefs' | 'debugfs'; from: string; to: string; options: string[]; automount?: { from: string; to: string } }
  | { kind: 'error'; message: string };

/** Where the namespace has each filesystem (what a new mount of it binds), without a directory of sources. */
const NAMESPACE_MOUNTS = { tracefs: '/sys/kernel/tracing', debugfs: '/sys/kernel/debug' } as const;

export function parseHelperArgs(type: string, argv: string[]): HelperCall {
  const pos: string[] = [];
  const options: string[] = [];
  let verbose = false;
  let fake = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-o') options.push(...(argv[++i] ?? '').split(',').filter(Boolean));
    else if (a === '-t') type = argv[++i] ?? type;
    else if (a === '-N') i++;
    else if (/^-[sfnv]+$/.test(a)) {
      verbose ||= a.includes('v');
      fake ||= a.includes('f');
    } else pos.push(a);
  }
  return { type, source: pos[0] ?? '', target: pos[1] ?? '', options, verbose, fake };
}

/** Mount flags the VFS takes itself, and FUSE's own options: not tracefs's business. */
const GENERIC = new Set([
  'remount', 'rw', 'ro', 'suid', 'nosuid', 'dev', 'nodev', 'exec', 'noexec', 'sync', 'async', 'dirsync',
  'atime', 'noatime', 'diratime', 'nodiratime', 'relatime', 'norelatime', 'strictatime', 'nostrictatime',
  'lazytime', 'nolazytime', 'mand', 'nomand', 'silent', 'loud', 'defaults', 'auto', 'noauto', 'user', 'nouser',
  'users', 'owner', 'group', 'nofail', 'bind', 'rbind',
  'default_permissions', 'allow_other', 'allow_root', 'auto_unmount', 'blkdev',
]);
const GENERIC_KEYS = new Set(['user_id', 'group_id', 'max_read', 'blksize', 'fd', 'rootmode', 'fsname', 'subtype', 'context', 'fscontext', 'defcontext', 'rootcontext']);

export function filesystemOptions(options: string[]): string[] {
  return options.filter((o) => {
    const key = o.split('=', 1)[0];
    return !GENERIC.has(o) && !GENERIC_KEYS.has(key) && !o.startsWith('x-');
  });
}

/**
 * What a call asks. `sources`: the namespace's directory of its tracefs and
 * debugfs (there whatever the command unmounted); a debugfs comes with
 * tracefs on its `tracing` directory, as the kernel's automount puts it there.
 */
export function planHelper(call: HelperCall, sources?: string): HelperAction {
  const fs = call.type.replace(/^fuse\./, '');
  if (fs !== 'tracefs' && fs !== 'debugfs') return { kind: 'error', message: `unknown filesystem type '${call.type}'` };
  if (!call.target) return { kind: 'error', message: 'no mount point given' };
  const options = filesystemOptions(call.options);
  if (call.options.includes('remount')) return { kind: 'remount', fs, target: call.target, options };
  const from = (f: 'tracefs' | 'debugfs') => (sources ? `${sources}/${f}` : NAMESPACE_MOUNTS[f]);
  const bind = { kind: 'bind', fs, from: from(fs), to: call.target, options } as const;
  return fs === 'debugfs' && sources ? { ...bind, automount: { from: from('tracefs'), to: `${call.target.replace(/\/+$/, '')}/tracing` } } : bind;
}

/** Where the namespace notes the source each new tracefs or debugfs mount was given ("ID SOURCE" lines: syscall_watch's --mount-sources). */
export function mountSourcesFile(sources: string): string {
  return join(sources, 'mount-sources');
}

/** Notes `source` for the newest mount at `target`, as the kernel keeps the name a mount was given. */
function noteSource(sources: string, target: string, source: string): void {
  try {
    const point = realpathSync(target);
    const mine = parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8')).filter((m) => m.mountPoint === point);
    const id = mine[mine.length - 1]?.id;
    if (id !== undefined) appendFileSync(mountSourcesFile(sources), `${id} ${escapeMount(source || 'none')}\n`);
  } catch (e) {
    expectSystemError(e); // the tables then show the filesystem's own name
  }
}

/** Whether `target` is already the root of the filesystem mounted at `source` (the kernel refuses to stack it there: EBUSY). */
function mountedThere(source: string, target: string): boolean {
  try {
    const a = statSync(source);
    const b = statSync(target);
    return a.dev === b.dev && a.ino === b.ino;
  } catch (e) {
    expectSystemError(e);
    return false;
  }
}

/** Runs the helper; returns mount's exit status (0, or 32 for a failed mount). */
export async function runMountHelper(type: string, argv: string[], opts: { socket?: string; sources?: string } = {}): Promise<number> {
  const { socket = process.env.TRACEFS_EMU_CONTROL, sources } = opts;
  const call = parseHelperArgs(type, argv);
  const action = planHelper(call, sources);
  const name = `mount.${type}`;
  if (action.kind === 'error') {
    process.stderr.write(`${name}: ${action.message}\n`);
    return 32;
  }
  if (call.fake) return 0;
  if (action.kind === 'bind') {
    if (mountedThere(action.from, action.to)) {
      process.stderr.write(`${name}: ${call.target}: ${call.source || action.fs} already mounted on ${call.target}\n`);
      return 32;
    }
    const r = spawnSync('mount', ['--bind', action.from, action.to], { stdio: 'inherit' });
    if (r.status !== 0) return 32;
    if (sources) noteSource(sources, action.to, call.source);
    // (the automount's name is the filesystem's; noted too, as its mount id may have had another's)
    if (action.automount && spawnSync('mount', ['--bind', action.automount.from, action.automount.to], { stdio: 'ignore' }).status === 0 && sources) noteSource(sources, action.automount.to, 'tracefs');
    if (action.options.length === 0) return 0;
  }
  if (action.fs === 'debugfs') {
    if (action.options.length === 0) return 0;
    process.stderr.write(`${name}: ${call.target}: debugfs options are not emulated\n`);
    return 32;
  }
  if (!socket) {
    process.stderr.write(`${name}: ${call.target}: no emulator daemon to remount (TRACEFS_EMU_CONTROL unset)\n`);
    return 32;
  }
  try {
    await controlRequest(socket, 'remount', { options: action.options.join(',') });
    if (call.verbose) process.stderr.write(`${name}: ${call.target}: remounted with ${action.options.join(',') || '(no tracefs options)'}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`${name}: ${call.target}: ${(e as Error).message}\n`);
    return 32;
  }
}
