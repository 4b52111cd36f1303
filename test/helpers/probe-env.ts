/**
 * A probe environment for tests: the built-in kernel model of a series
 * (symbols, BTF, kprobe sites of the real kernels), static events from the
 * event catalogue (data/events-SERIES.json, through the event subsystem),
 * eprobe filters from the event filter parser, and a tiny file system for
 * uprobes.
 */
import type { ErrnoName } from '../../src/kernel/errno.js';
import type { Series } from '../../src/kernel/series.js';
import { checkEventFilter, staticEventView } from '../../src/trace/dynevent/dyn_events.js';
import { kernelProbeEnv } from '../../src/trace/probe/kernel_env.js';
import type { ProbeEnv } from '../../src/trace/probe/probe_env.js';
import { testEmulator } from './emulator.js';

/** The guest's files uprobes name: /bin/sh is a link to dash. */
export const TEST_FILES: Record<string, { kind: 'regular' | 'other'; inode: string }> = {
  '/bin/sh': { kind: 'regular', inode: 'dash' },
  '/bin/dash': { kind: 'regular', inode: 'dash' },
  '/': { kind: 'other', inode: 'root' },
  '/bin': { kind: 'other', inode: 'bin' },
  '/sys': { kind: 'other', inode: 'sys' },
  '/tmp': { kind: 'other', inode: 'tmp' },
};

export function testStatPath(name: string): { kind: 'regular' | 'other'; inode: string } | ErrnoName {
  let path = name.replace(/\/+/g, '/');
  const dirOnly = path.length > 1 && path.endsWith('/');
  if (dirOnly) path = path.slice(0, -1);
  // a file named as a directory on the way (`/bin/sh/x`, `/bin/sh/`)
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) if (TEST_FILES[parts.slice(0, i).join('/')]?.kind === 'regular') return 'ENOTDIR';
  const hit = TEST_FILES[path];
  if (!hit) return 'ENOENT';
  return dirOnly && hit.kind === 'regular' ? 'ENOTDIR' : hit;
}

export function testProbeEnv(series: Series, cpus = 2): { env: ProbeEnv; hasEvents: boolean } {
  const { kernel, tracing } = testEmulator({ series, cpus });
  const te = tracing.events;
  const env = kernelProbeEnv(kernel, {
    findEvent: (system, name) => {
      const t = te.find(system, name);
      return t ? staticEventView(t) : undefined;
    },
    statPath: testStatPath,
    checkFilter: (event, filter) => checkEventFilter(te, event, filter),
  });
  return { env, hasEvents: true };
}
