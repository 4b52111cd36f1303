/**
 * What a daemon serves besides its tracefs, for `exec` namespaces: the
 * emulated debugfs as a second FUSE mount, and the files shown at system
 * paths (kallsyms and /proc/modules, which follow module loads, sysctls,
 * /proc/version, /proc/interrupts), live through a third FUSE mount — both
 * next to the mount's state files.
 * The control command `namespace` tells `exec` where they are.
 */
import { rmdirSync } from 'node:fs';
import { registerControlCommand } from '../daemon/control.js';
import { statePaths } from '../daemon/state.js';
import { type MountedTracefs, mountTracefs } from '../fuse/mount.js';
import { hostInterrupts } from '../host/interrupts.js';
import { expectSystemError } from '../host/system_error.js';
import type { Emulator } from '../index.js';
import type { Caller } from '../kernel/caller.js';
import { procInterrupts, procKallsyms, procModules, procStackTracerEnabled, procVersion } from '../tracefs/files/proc_files.js';
import { Dir, File, type FileOps } from '../tracefs/node.js';
import { Tracefs } from '../tracefs/tracefs.js';
import type { DaemonInfo } from './exec.js';
import { LIVE_VIEWS_FS } from './namespace.js';

/** A file the daemon serves live (each read and write through the emulated kernel). */
interface LiveView {
  perm: number;
  fops: FileOps;
}

/**
 * Files the emulator shows in place of the host kernel's (/proc, /sys), by
 * path; undefined when the emulated kernel has no such view (the namespace
 * then keeps a shadow or the host's file, with a warning).
 */
const SYSTEM_VIEWS: Record<string, (emu: Emulator) => LiveView | undefined> = {
  '/proc/kallsyms': (e) => ({ perm: 0o444, fops: procKallsyms(e.kernel) }),
  '/proc/modules': (e) => ({ perm: 0o444, fops: procModules(e.kernel) }),
  '/proc/version': (e) => ({ perm: 0o444, fops: procVersion(e.kernel) }),
  '/proc/interrupts': () => ({ perm: 0o444, fops: procInterrupts(hostInterrupts) }),
  '/proc/sys/kernel/stack_tracer_enabled': (e) => ({ perm: 0o644, fops: procStackTracerEnabled(e.ftrace) }),
};

/** The file name a view's path gets in the views directory or mount. */
function viewName(path: string): string {
  return path.slice(1).replace(/\//g, '_');
}

interface NamespaceViews {
  info: DaemonInfo;
  debugfs: MountedTracefs;
  stop(): Promise<void>;
}

let served: DaemonInfo | undefined;

registerControlCommand('namespace', 'what `exec` binds in its namespace: the debugfs mount, system file views, this socket, the FIFO its processes report system calls to', (_args, ctx) => ({
  ...served,
  controlSocket: ctx.state.socket,
  eventsFifo: ctx.host?.fifo,
  tracefsOptions: statePaths(ctx.state.mountpoint).options,
}));

/** Mounts the debugfs and writes the system file views of a daemon's mount. */
export async function serveNamespaceViews(
  emulator: Emulator,
  mountpoint: string,
  opts: { log?: (m: string) => void; autoUnmount?: boolean; returning?: (caller: Caller) => Promise<void> | undefined } = {},
): Promise<NamespaceViews> {
  const { debugfs: debugDir, proc: liveDir } = statePaths(mountpoint);
  const debugfs = await mountTracefs(emulator.debugfs, debugDir, {
    fuseOptions: ['fsname=debugfs', 'subtype=debugfs'],
    autoUnmount: opts.autoUnmount,
    log: opts.log,
    returning: opts.returning,
  });
  const views: Record<string, string> = {};
  let live: MountedTracefs | undefined;
  try {
    const liveRoot = new Dir('', 0o755);
    for (const [path, make] of Object.entries(SYSTEM_VIEWS)) {
      const view = make(emulator);
      if (view === undefined) continue;
      liveRoot.add(new File(viewName(path), view.perm, view.fops));
      views[path] = `${liveDir}/${viewName(path)}`;
    }
    if (liveRoot.children.size > 0) {
      live = await mountTracefs(new Tracefs(liveRoot, emulator.kernel, undefined, emulator.taskOf), liveDir, {
        fuseOptions: [`fsname=${LIVE_VIEWS_FS}`, `subtype=${LIVE_VIEWS_FS}`],
        autoUnmount: opts.autoUnmount,
        log: opts.log,
        returning: opts.returning,
      });
    }
  } catch (e) {
    await debugfs.unmount().catch(() => {});
    throw e;
  }
  const info: DaemonInfo = { debugfs: debugfs.mountpoint, views, cpus: emulator.kernel.nrCpus, liveViews: live?.mountpoint };
  served = info;
  return {
    info,
    debugfs,
    async stop() {
      served = undefined;
      try {
        await Promise.all([debugfs.unmount(), live?.unmount()]);
      } finally {
        for (const d of [debugDir, liveDir]) {
          try {
            rmdirSync(d); // only once unmounted and empty
          } catch (e) {
            expectSystemError(e); // still busy: left for the next mount to clear
          }
        }
      }
    },
  };
}
