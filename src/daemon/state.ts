/**
 * Where a running mount leaves its traces: one state directory, and per
 * mount point `<key>.json` (what is mounted), `<key>.pid`, `<key>.sock`
 * (the control socket) and `<key>.log` (a daemon's output).
 *
 * State dir: $TRACEFS_EMU_STATE_DIR, else /run/tracefs-emu as root, else
 * $XDG_RUNTIME_DIR/tracefs-emu (or /tmp/tracefs-emu-UID).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { expectSystemError } from '../host/system_error.js';

export interface MountState {
  mountpoint: string;
  /** The process serving the mount. */
  pid: number;
  series: string;
  cpus: number;
  seed: number;
  /** tracefs mount options as given (`gid=...`). */
  options: string;
  socket: string;
  daemon: boolean;
  /** fusermount's auto_unmount watcher of the mount, if any. */
  watcherPid?: number;
  log?: string;
  startedAt: string;
}

function stateDir(): string {
  const env = process.env.TRACEFS_EMU_STATE_DIR;
  if (env) return resolve(env);
  const uid = process.getuid?.() ?? 0;
  if (uid === 0) return '/run/tracefs-emu';
  return join(process.env.XDG_RUNTIME_DIR ?? tmpdir(), process.env.XDG_RUNTIME_DIR ? 'tracefs-emu' : `tracefs-emu-${uid}`);
}

/** A file-name-safe key for a mount point: readable, unique, short enough for a socket path. */
function mountKey(mountpoint: string): string {
  const abs = resolve(mountpoint);
  const name = basename(abs).replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 24) || 'root';
  return `${name}-${createHash('sha256').update(abs).digest('hex').slice(0, 12)}`;
}

interface StatePaths {
  json: string;
  pid: string;
  socket: string;
  log: string;
  /** The FIFO watched processes report their system calls to (`exec`). */
  events: string;
  /** The daemon's other mounts, for `exec`: its debugfs, and its live /proc views; and the fixed views' directory. */
  debugfs: string;
  proc: string;
  views: string;
  /** The tracefs's own mount options as /proc/mounts shows them (",gid=1000"): kept by the daemon, read by `exec`'s mount tables. */
  options: string;
}

export function statePaths(mountpoint: string, dir = stateDir()): StatePaths {
  const k = join(dir, mountKey(mountpoint));
  return { json: `${k}.json`, pid: `${k}.pid`, socket: `${k}.sock`, log: `${k}.log`, events: `${k}.events`, debugfs: `${k}.debugfs`, proc: `${k}.proc`, views: `${k}.views`, options: `${k}.options` };
}

/**
 * The state directory, made if needed and checked writable, so that a mount
 * fails at once with the reason (a file in the way, no permission, a full
 * disk) rather than later, half made.
 */
export function ensureStateDir(dir = stateDir()): string {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    const probe = join(dir, `.write-test-${process.pid}`);
    // A page's worth: a full disk refuses it (an empty file takes no space).
    writeFileSync(probe, Buffer.alloc(4096));
    rmSync(probe, { force: true });
  } catch (e) {
    expectSystemError(e);
    const why = (e as NodeJS.ErrnoException).code === 'EEXIST' || (e as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'not a directory' : (e as Error).message;
    throw new Error(`state directory ${dir}: ${why} (set TRACEFS_EMU_STATE_DIR to a writable directory)`);
  }
  return dir;
}

export function writeState(st: MountState, pidFile?: string): void {
  const p = statePaths(st.mountpoint);
  ensureStateDir();
  writeFileSync(p.json, `${JSON.stringify(st, null, 2)}\n`);
  writeFileSync(p.pid, `${st.pid}\n`);
  if (pidFile && resolve(pidFile) !== p.pid) writeFileSync(pidFile, `${st.pid}\n`);
}

/** Removes a mount's state files (not its log). */
export function removeState(mountpoint: string, pidFile?: string): void {
  const p = statePaths(mountpoint);
  for (const f of [p.json, p.pid, p.socket, p.events, p.options, pidFile]) if (f) rmSync(f, { force: true });
}

/** The tracefs's own options as the kernel shows them after its flags (",gid=1000"; '' for the defaults), for `exec`'s mount tables. */
export function writeMountOptions(mountpoint: string, shown: string): void {
  writeFileSync(statePaths(mountpoint).options, `${shown}\n`, { mode: 0o644 });
}

export function readState(mountpoint: string): MountState | undefined {
  try {
    return JSON.parse(readFileSync(statePaths(mountpoint).json, 'utf8')) as MountState;
  } catch (e) {
    if (!(e instanceof SyntaxError)) expectSystemError(e); // none, or one being written
    return undefined;
  }
}

/** Every mount with a state file, alive or not. */
export function readStates(): MountState[] {
  let names: string[];
  try {
    names = readdirSync(stateDir());
  } catch (e) {
    expectSystemError(e);
    return [];
  }
  const out: MountState[] = [];
  for (const n of names) {
    if (!n.endsWith('.json')) continue;
    try {
      out.push(JSON.parse(readFileSync(join(stateDir(), n), 'utf8')) as MountState);
    } catch (e) {
      if (!(e instanceof SyntaxError)) expectSystemError(e); // a file being written, or not ours
    }
  }
  return out;
}

/** Waits (up to 5 s) until a dead mount's auto_unmount watcher has done its job. */
export async function waitWatcher(st: MountState): Promise<void> {
  const pid = st.watcherPid;
  if (pid === undefined || isAlive(st.pid)) return;
  for (let i = 0; i < 100 && isAlive(pid) && isWatcher(pid, st.mountpoint); i++) await new Promise((r) => setTimeout(r, 50));
}

function isWatcher(pid: number, mountpoint: string): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return !!argv[0]?.endsWith('fusermount') && argv[argv.length - 1] === mountpoint;
  } catch (e) {
    expectSystemError(e);
    return false;
  }
}

/** True while `pid` runs (a zombie waiting to be reaped counts as gone). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch (e) {
    expectSystemError(e);
    return true;
  }
}
