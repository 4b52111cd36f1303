/** `tracefs-emu status`: what is mounted where, by which pid, as which kernel. */
import type { Argv, CommandModule } from 'yargs';
import { controlRequest } from '../daemon/control.js';
import { isAlive, type MountState, readStates } from '../daemon/state.js';
import { mounts, probe } from '../fuse/mount_table.js';

interface MountStatus {
  mountpoint: string;
  pid?: number;
  series?: string;
  cpus?: number;
  options?: string;
  daemon?: boolean;
  /** running: served and answering; stale: the serving process is gone; unknown: a tracefs FUSE mount without state here. */
  state: 'running' | 'stale' | 'unknown';
  openFiles?: number;
}

async function statusOf(st: MountState): Promise<MountStatus> {
  const base = { mountpoint: st.mountpoint, pid: st.pid, series: st.series, cpus: st.cpus, options: st.options, daemon: st.daemon };
  if (!isAlive(st.pid)) return { ...base, state: 'stale' };
  try {
    const r = (await controlRequest(st.socket, 'status', {}, 3000)) as { openFiles?: number; options?: string };
    return { ...base, options: r.options ?? st.options, openFiles: r.openFiles, state: 'running' };
  } catch {
    // Whatever kept the daemon from answering (no socket, a timeout, its error), the mount itself tells.
    return { ...base, state: (await probe(st.mountpoint)) === 'live' ? 'running' : 'stale' };
  }
}

async function status(): Promise<MountStatus[]> {
  const out = await Promise.all(readStates().map(statusOf));
  const known = new Set(out.map((s) => s.mountpoint));
  for (const m of mounts()) {
    if (m.fstype !== 'fuse.tracefs' || known.has(m.mountPoint)) continue;
    known.add(m.mountPoint);
    out.push({ mountpoint: m.mountPoint, state: 'unknown' });
  }
  return out.sort((a, b) => a.mountpoint.localeCompare(b.mountpoint));
}

function formatStatus(list: MountStatus[]): string {
  if (list.length === 0) return 'no tracefs-emu mounts';
  return list
    .map((s) => {
      const parts = [s.mountpoint, s.state];
      if (s.pid) parts.push(`pid ${s.pid}`);
      if (s.series) parts.push(`kernel ${s.series}`);
      if (s.cpus) parts.push(`${s.cpus} cpus`);
      if (s.daemon !== undefined) parts.push(s.daemon ? 'daemon' : 'foreground');
      if (s.options) parts.push(`options ${s.options}`);
      if (s.openFiles !== undefined) parts.push(`${s.openFiles} open files`);
      return parts.join('  ');
    })
    .join('\n');
}

export const statusCommand: CommandModule<object, { json: boolean }> = {
  command: 'status',
  describe: 'show tracefs-emu mounts: mount point, state, pid, kernel series',
  builder: (y: Argv) =>
    y.option('json', { type: 'boolean', default: false, describe: 'print JSON' }) as unknown as Argv<{ json: boolean }>,
  handler: async (a) => {
    const list = await status();
    console.log(a.json ? JSON.stringify(list, null, 2) : formatStatus(list));
  },
};
