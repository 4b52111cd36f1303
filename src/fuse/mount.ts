/**
 * Mounting a Tracefs through FUSE: the programmatic entry point.
 *
 *   const m = await mountTracefs(createEmulator().fs, '/tmp/t');
 *   ...
 *   await m.unmount();
 */
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Caller } from '../kernel/caller.js';
import type { Tracefs } from '../tracefs/tracefs.js';
import { watchTree } from '../tracefs/tree_watch.js';
import { FuseAdapter } from './adapter.js';
import { autoUnmountWatcher, detach, mountAt, probe } from './mount_table.js';
import type { RequestStats } from './request_stats.js';
import { FuseSession } from './session.js';

/**
 * The mount options every tracefs mount gets, and why:
 * - fsname/subtype: /proc/mounts shows `tracefs DIR fuse.tracefs ...`;
 * - allow_other, default_permissions: other users reach it, the kernel checks modes;
 * - nonempty: mountable over anything.
 * What the session itself sets (session.ts, tracefs_fuse.c): atomic O_TRUNC
 * (truncate-on-open is the file's business), writes of up to 128 KiB in one
 * request, lookups and attributes cached for CACHE_TIMEOUT_S and invalidated
 * when the tree changes (kernel_cache.ts), no negative lookups cached
 * (instances and events appear without notice), the tree's inode numbers.
 */
const TRACEFS_FUSE_OPTIONS: readonly string[] = ['fsname=tracefs', 'subtype=tracefs', 'allow_other', 'default_permissions', 'nonempty'];

interface MountOptions {
  /** Extra libfuse options, after TRACEFS_FUSE_OPTIONS. */
  fuseOptions?: string[];
  /**
   * Let fusermount unmount the filesystem when this process dies, even by
   * SIGKILL (libfuse `auto_unmount`). Default true.
   */
  autoUnmount?: boolean;
  /** Create the mount point if missing (default true). */
  mkdir?: boolean;
  /** Where bugs and mount events are reported (default: stderr). */
  log?: (msg: string) => void;
  /** What the answer to a request waits for besides the kernel's caches (HostDriver.returning). */
  returning?: (caller: Caller) => Promise<void> | undefined;
  /** Whether a signal pending for a caller will end it (host/pending_signals.ts): opens then wait for its files' release. */
  signalEnds?: (pid: number) => boolean;
}

/** A mounted Tracefs. */
export interface MountedTracefs {
  readonly mountpoint: string;
  readonly fs: Tracefs;
  /** Files currently open through the mount. */
  readonly openFiles: number;
  /** Nodes the kernel holds an id for (looked up and not yet forgotten), the root included. */
  readonly knownNodes: number;
  /** Unmounts (lazily if busy) and closes every open file. Idempotent. */
  unmount(): Promise<void>;
  /**
   * Resolves when the FUSE session has ended: after unmount() once the last
   * open file is closed, or when something else unmounted the filesystem.
   */
  readonly ended: Promise<void>;
  /** The fusermount watching this mount (auto_unmount); stopped by a clean unmount(). */
  readonly autoUnmountPid?: number;
  /** Resolves once the kernel has forgotten every change of the tree made so far (removed entries, changed owners). */
  settled(): Promise<void>;
  /** What its FUSE requests cost so far, by kind. */
  readonly requests: RequestStats;
  /** Requests the native side answered from cached files, by kind. */
  cachedAnswers(): Record<string, number>;
  /** Work that may change the tree's state begins outside FUSE requests (a control command); call the result when it ends. */
  hold(): () => void;
}

/**
 * Whether a mount by this user is theirs alone: fusermount lets a user other
 * than root give allow_other only when /etc/fuse.conf says user_allow_other.
 */
export function userOnlyMount(): boolean {
  return (process.getuid?.() ?? 0) !== 0 && !userAllowOther();
}

function baseOptions(): readonly string[] {
  return userOnlyMount() ? TRACEFS_FUSE_OPTIONS.filter((o) => o !== 'allow_other') : TRACEFS_FUSE_OPTIONS;
}

function canOpen(path: string): boolean {
  try {
    accessSync(path, constants.R_OK | constants.W_OK);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EACCES' && (e as NodeJS.ErrnoException).code !== 'EPERM') throw e;
    return false;
  }
}

function userAllowOther(): boolean {
  try {
    return /^\s*user_allow_other\s*$/m.test(readFileSync('/etc/fuse.conf', 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && (e as NodeJS.ErrnoException).code !== 'EACCES') throw e;
    return false;
  }
}

/** Clears a dead FUSE mount left at `dir` by a killed daemon; true if there was one. */
async function clearStaleMount(dir: string): Promise<boolean> {
  const abs = resolve(dir);
  if ((await probe(abs)) !== 'stale') return false;
  if (!(await detach(abs))) throw new Error(`${abs}: stale mount (Transport endpoint is not connected) could not be removed`);
  return true;
}

export async function mountTracefs(fs: Tracefs, dir: string, opts: MountOptions = {}): Promise<MountedTracefs> {
  if (!existsSync('/dev/fuse')) throw new Error('no /dev/fuse: FUSE is not available on this machine (modprobe fuse?)');
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0 && !canOpen('/dev/fuse')) {
    throw new Error(`mount ${resolve(dir)}: /dev/fuse is not open to uid ${uid} (fusermount opens it as the user): as root, chmod 666 /dev/fuse (the mode Debian's udev rule gives it), or mount as root`);
  }
  const mountpoint = resolve(dir);
  const log = opts.log ?? ((m: string) => console.error(`tracefs-emu: ${m}`));

  if (await clearStaleMount(mountpoint)) log(`cleared a stale mount at ${mountpoint}`);
  const m = mountAt(mountpoint);
  if (m && m.fstype === 'fuse.tracefs') throw new Error(`${mountpoint}: a tracefs-emu is already mounted there`);
  if (opts.mkdir !== false) await mkdir(mountpoint, { recursive: true });

  const adapter = new FuseAdapter(fs, { log, returning: opts.returning, signalEnds: opts.signalEnds });
  const cache = adapter.cache;
  const options = [...baseOptions(), ...(opts.autoUnmount === false ? [] : ['auto_unmount']), ...(opts.fuseOptions ?? [])];
  let sessionEnded!: () => void;
  const ended = new Promise<void>((ok) => (sessionEnded = ok));
  const unwatch = watchTree(fs.root, cache);
  let session: FuseSession;
  try {
    session = new FuseSession(mountpoint, options, adapter, () => {
      unwatch();
      cache.notices = undefined;
      adapter.releaseAll();
      sessionEnded();
    });
  } catch (e) {
    unwatch();
    throw new Error(`mount ${mountpoint}: ${e instanceof Error ? e.message : String(e)}`);
  }
  adapter.attach(session, session, session);
  const watcher = opts.autoUnmount === false ? undefined : autoUnmountWatcher(mountpoint);

  let unmounting: Promise<void> | undefined;
  return {
    mountpoint,
    fs,
    ended,
    autoUnmountPid: watcher,
    get openFiles() {
      return adapter.fds.size;
    },
    get knownNodes() {
      return adapter.ids.size;
    },
    settled: () => cache.settled(),
    requests: session.stats,
    cachedAnswers: () => session.nativeAnswered(),
    hold: () => {
      const done = adapter.files.hold();
      return () => {
        done();
        adapter.handled(true);
      };
    },
    unmount() {
      unmounting ??= (async () => {
        // Once the session is over the path may already hold someone else's mount: leave it alone.
        if (!session.ended) {
          session.unmount();
          if (mountAt(mountpoint)?.fstype === 'fuse.tracefs' && !(await detach(mountpoint))) throw new Error(`unmount ${mountpoint}: still mounted`);
        }
        // Unmounted: the watcher has nothing left to do, and must not later
        // unmount a new mount at this path.
        if (watcher !== undefined && autoUnmountWatcher(mountpoint) === watcher) process.kill(watcher, 'SIGKILL');
        adapter.releaseAll();
      })();
      return unmounting;
    },
  };
}
