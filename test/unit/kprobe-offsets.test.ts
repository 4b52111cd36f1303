/**
 * Every offset of a sample of functions, as the real kernels answered
 * `echo "p:kp FUNC+OFF" > kprobe_events` and `echo "r:kr FUNC+4" >
 * kprobe_events` (tools/probe-defs/offset-scan.sh, extracted by offsets.mjs
 * into test/fixtures/kprobe-offsets-SERIES.txt): instruction boundaries
 * (EILSEQ) of the text as it runs (paravirt calls patched at boot), code
 * the kernel will not patch — jump label, static call and BUG() sites,
 * notrace functions (EINVAL) — and return probes at the entry after
 * endbr64. Every answer agrees.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Series } from '../../src/kernel/series.js';
import { DynEventRegistry } from '../../src/trace/dynevent/trace_dynevent.js';
import { testProbeEnv } from '../helpers/probe-env.js';

const RESULT: Record<string, string> = {
  'Probe point is not an instruction boundary': 'EILSEQ',
  'Failed to register probe event': 'EINVAL',
  'Retprobe address must be an function entry': 'BAD_RETPROBE',
};

describe.each(['7.2', '6.12'] as Series[])('kprobe offsets on %s', (series) => {
  const lines = readFileSync(new URL(`../fixtures/kprobe-offsets-${series}.txt`, import.meta.url), 'latin1').trim().split('\n');
  const { env } = testProbeEnv(series);

  it('gives the real kernel\'s answer at every offset scanned', () => {
    expect(lines.length).toBeGreaterThan(4000);
    const wrong: string[] = [];
    for (const l of lines) {
      const [fn, where, expected] = l.split(' ') as [string, string, string];
      const def = where === 'r+4' ? `r:kr ${fn}+4` : `p:kp ${fn}+${where.slice(2)}`;
      const r = new DynEventRegistry(env).write('kprobe_events', def);
      const got = r.errno === 0 ? 'ok' : (RESULT[r.log[r.log.length - 1]?.message ?? ''] ?? `${r.errno} ${r.log.map((e) => e.message).join('; ')}`);
      if (got !== expected) wrong.push(`${def}: real ${expected}, here ${got}`);
    }
    expect(wrong).toEqual([]);
  });
});
