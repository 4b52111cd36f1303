/**
 * What a daemon serves besides its tracefs, for `exec` namespaces: the
 * emulated debugfs as a second FUSE mount, and the files shown at system
 * paths (the emulator's kallsyms, …), all next to the mount's state files.
 * The control command `namespace` tells `exec` where they are.
 */
import { mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Emulator } from '../index.js';
import { procVersion } from '../kernel/banner.js';
import { kallsymsText } from '../kernel/kallsyms.js';
import { registerControlCommand } from './control.js';
import type { DaemonInfo } from './exec.js';
import { type MountedTracefs, mountTracefs } from './mount.js';
import { statePaths } from './state.js';

/**
 * Files the emulator shows in place of the host kernel's (/proc, /sys), by path.
 * Each returns the file's text, or undefined when the emulated kernel has no
 * such view (the namespace then keeps the host's file, with a warning).
 * /proc/version is the kernel's banner (kprobe_args_symbol.tc compares it
 * with linux_proc_banner read through a probe).
 */
export const SYSTEM_VIEWS: Record<string, (emu: Emulator) => Buffer | string | undefined> = {
  '/proc/kallsyms': (e) => kallsymsText(e.kernel.symbols),
  '/proc/version': (e) => procVersion(e.kernel.series),
};

export interface NamespaceViews {
  info: DaemonInfo;
  debugfs: MountedTracefs;
  stop(): Promise<void>;
}

let served: DaemonInfo | undefined;

registerControlCommand('namespace', 'what `exec` binds in its namespace: the debugfs mount, system file views, this socket', (_args, ctx) => ({
  ...served,
  controlSocket: ctx.state.socket,
}));

/** Mounts the debugfs and writes the system file views of a daemon's mount. */
export async function serveNamespaceViews(
  emulator: Emulator,
  mountpoint: string,
  opts: { log?: (m: string) => void; autoUnmount?: boolean } = {},
): Promise<NamespaceViews> {
  const base = statePaths(mountpoint).socket.replace(/\.sock$/, '');
  const debugDir = `${base}.debugfs`;
  const viewDir = `${base}.views`;
  const debugfs = await mountTracefs(emulator.debugfs, debugDir, {
    fuseOptions: ['fsname=debugfs', 'subtype=debugfs'],
    autoUnmount: opts.autoUnmount,
    log: opts.log,
  });
  const views: Record<string, string> = {};
  try {
    mkdirSync(viewDir, { recursive: true });
    for (const [path, view] of Object.entries(SYSTEM_VIEWS)) {
      const text = view(emulator);
      if (text === undefined) continue;
      const file = join(viewDir, path.slice(1).replace(/\//g, '_'));
      writeFileSync(file, text);
      views[path] = file;
    }
  } catch (e) {
    await debugfs.unmount().catch(() => {});
    throw e;
  }
  const info: DaemonInfo = { debugfs: debugfs.mountpoint, views };
  served = info;
  return {
    info,
    debugfs,
    async stop() {
      served = undefined;
      try {
        await debugfs.unmount();
      } finally {
        rmSync(viewDir, { recursive: true, force: true });
        try {
          rmdirSync(debugDir); // only once unmounted and empty
        } catch {
          /* still busy: left for the next mount to clear */
        }
      }
    },
  };
}
