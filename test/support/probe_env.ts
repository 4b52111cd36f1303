/**
 * A probe environment for tests: the built-in kernel model of a series
 * (symbols, BTF, kprobe sites of the real kernels), static events from the
 * census of that kernel when present, and a tiny file system for uprobes.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { ErrnoName } from '../../src/kernel/errno.js';
import type { Series } from '../../src/kernel/series.js';
import { createEmulator } from '../../src/index.js';
import type { EventField } from '../../src/trace/event_type.js';
import { kernelProbeEnv } from '../../src/trace/probe/kernel_env.js';
import type { EventView, ProbeEnv } from '../../src/trace/probe/probe_env.js';

export const CENSUS_DIR = process.env.TRACEFS_CENSUS ?? '/work/census';

/** events/<sys>/<name>/format of the census, as event views (undefined without a census). */
export function censusEvents(series: Series): Map<string, EventView> | undefined {
  const file = `${CENSUS_DIR}/${series}/event-formats`;
  if (!existsSync(file)) return undefined;
  const out = new Map<string, EventView>();
  let cur: EventView | undefined;
  let fields: EventField[] = [];
  for (const line of readFileSync(file, 'latin1').split('\n')) {
    const h = /^== events\/([^/]+)\/([^/]+)\/format$/.exec(line);
    if (h) {
      fields = [];
      cur = { system: h[1], name: h[2], fields, kind: h[1] === 'ftrace' ? 'ftrace' : 'static' };
      out.set(`${h[1]}/${h[2]}`, cur);
      continue;
    }
    const f = /^\tfield:(.*);\toffset:(\d+);\tsize:(\d+);\tsigned:(\d);$/.exec(line);
    if (!f || !cur) continue;
    const decl = f[1];
    const m = /^(.*?)\s*([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?$/.exec(decl);
    if (!m || m[2].startsWith('common_')) continue;
    fields.push({ type: m[1] + (m[3] ?? ''), name: m[2], offset: Number(f[2]), size: Number(f[3]), signed: f[4] === '1' });
  }
  return out;
}

/** The guest's files uprobes name: /bin/sh is a link to dash. */
const FILES: Record<string, { kind: 'regular' | 'other'; inode: string }> = {
  '/bin/sh': { kind: 'regular', inode: 'dash' },
  '/bin/dash': { kind: 'regular', inode: 'dash' },
  '/sys': { kind: 'other', inode: 'sys' },
  '/tmp': { kind: 'other', inode: 'tmp' },
};

export function testProbeEnv(series: Series, cpus = 2): { env: ProbeEnv; hasEvents: boolean } {
  const kernel = createEmulator({ series, cpus }).kernel;
  const events = censusEvents(series);
  const env = kernelProbeEnv(kernel, {
    findEvent: (system, name) => events?.get(`${system}/${name}`),
    statPath: (path): { kind: 'regular' | 'other'; inode: string } | ErrnoName => FILES[path] ?? 'ENOENT',
  });
  return { env, hasEvents: events !== undefined };
}
