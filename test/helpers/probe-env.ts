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
  '/sys': { kind: 'other', inode: 'sys' },
  '/tmp': { kind: 'other', inode: 'tmp' },
};

export const testStatPath = (path: string): { kind: 'regular' | 'other'; inode: string } | ErrnoName => TEST_FILES[path] ?? 'ENOENT';

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
