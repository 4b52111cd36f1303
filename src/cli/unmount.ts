/** `tracefs-emu unmount [dir]`: stop the daemon serving a mount, or clear a stale mount. */
import { rmdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { isAlive, readState, removeState, statePaths, waitWatcher } from '../daemon/state.js';
import { detach, probe } from '../fuse/mount_table.js';
import { expectSystemError } from '../host/system_error.js';

interface UnmountArgs {
  dir: string;
}

async function waitFor(cond: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

/** The debugfs and /proc views a killed daemon of `mountpoint` left mounted (a live one takes its own down). */
async function clearStaleViews(mountpoint: string): Promise<void> {
  const p = statePaths(mountpoint);
  for (const d of [p.debugfs, p.proc]) {
    const state = await probe(d).catch((e: unknown) => {
      expectSystemError(e);
      return 'absent' as const;
    });
    if (state === 'stale') await detach(d);
    try {
      rmdirSync(d);
    } catch (e) {
      expectSystemError(e); // not there, or still in use
    }
  }
  rmSync(p.views, { recursive: true, force: true });
}

/** Unmounts `dir`: asks its daemon to stop (SIGTERM), else detaches the mount. Returns what it did. */
async function unmount(dir: string): Promise<string> {
  const mountpoint = resolve(dir);
  try {
    return await unmountTracefs(mountpoint);
  } finally {
    await clearStaleViews(mountpoint);
  }
}

async function unmountTracefs(mountpoint: string): Promise<string> {
  const st = readState(mountpoint);
  if (st && isAlive(st.pid)) {
    process.kill(st.pid, 'SIGTERM');
    if (!(await waitFor(() => !isAlive(st.pid), 10_000))) throw new Error(`${mountpoint}: pid ${st.pid} did not stop within 10 s`);
    await waitWatcher(st);
    if ((await probe(mountpoint)) !== 'absent') await detach(mountpoint);
    removeState(mountpoint);
    return `unmounted ${mountpoint} (stopped pid ${st.pid})`;
  }
  if (st) {
    await waitWatcher(st);
    removeState(mountpoint);
  }
  const what = await probe(mountpoint);
  if (what === 'absent') throw new Error(`${mountpoint}: not mounted`);
  if (!(await detach(mountpoint))) throw new Error(`${mountpoint}: could not unmount`);
  return what === 'stale' ? `cleared stale mount at ${mountpoint}` : `unmounted ${mountpoint}`;
}

export const unmountCommand: CommandModule<object, UnmountArgs> = {
  command: 'unmount [dir]',
  aliases: ['umount'],
  describe: 'unmount a tracefs-emu mount (stops its daemon; clears a stale mount)',
  builder: (y: Argv) =>
    y.positional('dir', { type: 'string', default: './mount', describe: 'mount point' }) as unknown as Argv<UnmountArgs>,
  handler: async (a) => {
    console.log(await unmount(a.dir));
  },
};
