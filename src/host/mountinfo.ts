/** /proc/PID/mountinfo: the mounts a process sees (its mount namespace). */

export interface MountInfo {
  /** Its mount id. */
  id: number;
  /** Where it is mounted, as the process sees it. */
  mountPoint: string;
  fstype: string;
  source: string;
  /** Per-mount and superblock options, comma-joined. */
  options: string;
  /** st_dev of its files, `major:minor`. */
  dev: string;
}

/** Octal escapes of mountinfo (\040 for a space, ...). */
export function escapeMount(s: string): string {
  return s.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

export function parseMountinfo(text: string): MountInfo[] {
  const out: MountInfo[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    const sep = f.indexOf('-');
    if (f.length < 7 || sep < 6) continue;
    out.push({
      id: Number(f[0]),
      mountPoint: unescapeMount(f[4]!),
      fstype: f[sep + 1] ?? '',
      source: unescapeMount(f[sep + 2] ?? ''),
      options: `${f[5] ?? ''},${f[sep + 3] ?? ''}`,
      dev: f[2] ?? '',
    });
  }
  return out;
}

/** The mount a path is on: the last-mounted of those whose mount point is the longest prefix of it. */
export function mountOfPath(mounts: readonly MountInfo[], path: string): MountInfo | undefined {
  let best: MountInfo | undefined;
  for (const m of mounts) {
    const p = m.mountPoint;
    const under = p === '/' || path === p || path.startsWith(`${p}/`);
    if (under && (!best || p.length >= best.mountPoint.length)) best = m;
  }
  return best;
}
