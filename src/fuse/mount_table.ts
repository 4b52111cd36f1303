/** The host's mount table, as far as mounting over FUSE needs it. */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { type MountInfo, parseMountinfo } from '../host/mountinfo.js';
import { expectSystemError } from '../host/system_error.js';

/** Mounts of this process's mount namespace (/proc/self/mountinfo). */
export function mounts(): MountInfo[] {
  try {
    return parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8'));
  } catch (e) {
    expectSystemError(e);
    return [];
  }
}

/** The topmost mount at `dir` (an absolute, resolved path), if any. */
export function mountAt(dir: string): MountInfo | undefined {
  const all = mounts().filter((m) => m.mountPoint === dir);
  return all[all.length - 1];
}

/** What is at a mount point we want: nothing of ours, a live mount, or a dead FUSE connection. */
export async function probe(dir: string): Promise<'absent' | 'live' | 'stale'> {
  try {
    await stat(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTCONN' || code === 'ECONNABORTED') return 'stale';
    if (code === 'ENOENT') return 'absent';
    throw e;
  }
  const m = mountAt(dir);
  return m && m.fstype.startsWith('fuse') ? 'live' : 'absent';
}

/**
 * The fusermount that `auto_unmount` leaves running for a mount of ours: our
 * child, `fusermount ... -- MOUNTPOINT`. It unmounts whatever FUSE mount is
 * at that path once we are gone.
 */
export function autoUnmountWatcher(mountpoint: string, parent = process.pid): number | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch (e) {
    expectSystemError(e);
    return undefined;
  }
  for (const p of pids) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[1]) !== parent) continue;
      const argv = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (argv[0]?.endsWith('fusermount') && argv[argv.length - 1] === mountpoint) return Number(p);
    } catch (e) {
      expectSystemError(e); // gone meanwhile
    }
  }
  return undefined;
}

function run(cmd: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 10_000 }, (err) => resolve(!err));
  });
}

/** Detaches whatever FUSE mount is at `dir` (fusermount -uz, else umount -l). */
export async function detach(dir: string): Promise<boolean> {
  if (await run('fusermount', ['-uz', dir])) return true;
  return run('umount', ['-l', dir]);
}
