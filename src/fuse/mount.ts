/**
 * Mounting a Tracefs through FUSE: the programmatic entry point.
 *
 *   const m = await mountTracefs(createEmulator().fs, '/tmp/t');
 *   ...
 *   await m.unmount();
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Tracefs } from '../tracefs/tracefs.js';
import { watchTree } from '../tracefs/tree_watch.js';
import { FuseAdapter } from './adapter.js';
import { KernelCache } from './kernel_cache.js';
import { autoUnmountWatcher, detach, mountAt, probe } from './mount_table.js';
import { type FuseInstance, loadFuse } from './native.js';

/**
 * The libfuse options every tracefs mount gets, and why:
 * - fsname/subtype: /proc/mounts shows `tracefs DIR fuse.tracefs ...`;
 * - allow_other, default_permissions: other users reach it, the kernel checks modes;
 * - atomic_o_trunc: O_TRUNC reaches open (truncate-on-open is the file's business);
 * - big_writes, max_write: one write(2) of up to 128 KiB is one write op;
 * - entry_timeout, attr_timeout: the kernel keeps lookups and attributes
 *   (CACHE_TIMEOUT_S) and is told when they change behind its back
 *   (kernel_cache.ts); negative_timeout=0: a name that did not exist is
 *   looked up again (instances and events appear without notice);
 * - use_ino: the inode numbers the tree gives; nonempty: mountable over anything.
 */
/**
 * How long the kernel may keep a lookup or attributes without asking again.
 * Every change is invalidated explicitly, so this only bounds the damage of
 * a change that was not (a bug); long enough that ftracetest's per-test walk
 * of every event directory (initialize_system) is served from the cache
 * from one test to the next.
 */
export const CACHE_TIMEOUT_S = 3600;

export const TRACEFS_FUSE_OPTIONS: readonly string[] = [
  'fsname=tracefs',
  'subtype=tracefs',
  'allow_other',
  'default_permissions',
  'atomic_o_trunc',
  'big_writes',
  'max_write=131072',
  `entry_timeout=${CACHE_TIMEOUT_S}`,
  `attr_timeout=${CACHE_TIMEOUT_S}`,
  'negative_timeout=0',
  'use_ino',
  'nonempty',
];

export interface MountOptions {
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
}

/** A mounted Tracefs. */
export interface MountedTracefs {
  readonly mountpoint: string;
  readonly fs: Tracefs;
  /** Files currently open through the mount. */
  readonly openFiles: number;
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
  /** The kernel's cache of the tree (node ids learned, notices). */
  readonly cache: KernelCache;
}

/** Clears a dead FUSE mount left at `dir` by a killed daemon; true if there was one. */
export async function clearStaleMount(dir: string): Promise<boolean> {
  const abs = resolve(dir);
  if ((await probe(abs)) !== 'stale') return false;
  if (!(await detach(abs))) throw new Error(`${abs}: stale mount (Transport endpoint is not connected) could not be removed`);
  return true;
}

export async function mountTracefs(fs: Tracefs, dir: string, opts: MountOptions = {}): Promise<MountedTracefs> {
  if (!existsSync('/dev/fuse')) throw new Error('no /dev/fuse: FUSE is not available on this machine (modprobe fuse?)');
  const Fuse = loadFuse();
  const mountpoint = resolve(dir);
  const log = opts.log ?? ((m: string) => console.error(`tracefs-emu: ${m}`));

  if (await clearStaleMount(mountpoint)) log(`cleared a stale mount at ${mountpoint}`);
  const m = mountAt(mountpoint);
  if (m && m.fstype === 'fuse.tracefs') throw new Error(`${mountpoint}: a tracefs-emu is already mounted there`);
  if (opts.mkdir !== false) await mkdir(mountpoint, { recursive: true });

  const cache = new KernelCache(fs.root);
  const adapter = new FuseAdapter(fs, { log, cache });
  const options = [...TRACEFS_FUSE_OPTIONS, ...(opts.autoUnmount === false ? [] : ['auto_unmount']), ...(opts.fuseOptions ?? [])];
  let sessionEnded!: () => void;
  const ended = new Promise<void>((ok) => (sessionEnded = ok));
  const fuse: FuseInstance = new Fuse(mountpoint, adapter.ops(), {
    options,
    onSessionEnd: () => {
      unwatch();
      cache.notifier = undefined;
      adapter.releaseAll();
      sessionEnded();
    },
  });
  adapter.notifyPoll = (fh) => {
    fuse.notifyPoll(fh);
  };
  cache.notifier = fuse;
  const unwatch = watchTree(fs.root, cache);
  try {
    await new Promise<void>((ok, ko) => fuse.mount((err) => (err ? ko(new Error(`mount ${mountpoint}: ${err.message}`)) : ok())));
  } catch (e) {
    unwatch();
    throw e;
  }
  const watcher = opts.autoUnmount === false ? undefined : autoUnmountWatcher(mountpoint);
  let over = false;
  void ended.then(() => (over = true));

  let unmounting: Promise<void> | undefined;
  return {
    mountpoint,
    fs,
    ended,
    autoUnmountPid: watcher,
    get openFiles() {
      return adapter.fds.size;
    },
    cache,
    settled: () => cache.settled(),
    unmount() {
      unmounting ??= (async () => {
        // Once the session is over the path may already hold someone else's mount: leave it alone.
        const err = over ? null : await new Promise<Error | null>((ok) => fuse.unmount(ok));
        if (err && mountAt(mountpoint)?.fstype === 'fuse.tracefs' && !(await detach(mountpoint))) {
          throw new Error(`unmount ${mountpoint}: ${err.message}`);
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
