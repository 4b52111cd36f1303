/**
 * Twenty shells writing trace_marker a thousand times each, at once, through
 * a real mount: every write is counted (entries-written), and what the
 * buffers hold plus what they overwrote adds up to it exactly.
 */
import { describe, expect, it } from 'vitest';
import { fuseUnavailable, mountedEmulator, sh } from '../helpers/e2e.js';

const skip = fuseUnavailable();
if (skip) console.warn(`e2e-marker-stress: skipped: ${skip}`);

function stat(text: string, key: string): number {
  return Number(new RegExp(`^${key}: (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
}

describe.skipIf(!!skip)(`trace_marker under 20 concurrent shells${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const mnt = mountedEmulator('tfe-marker-');

  it('counts 20,000 markers exactly: entries + overrun = entries-written', async () => {
    // A small buffer, so that some of them are overwritten.
    const r = await sh(
      `cd ${mnt.dir}; echo 64 > buffer_size_kb; echo > trace
       n=0; while [ $n -lt 20 ]; do
         ( i=0; exec 3>trace_marker; while [ $i -lt 1000 ]; do echo "writer $n line $i" >&3; i=$((i+1)); done ) &
         n=$((n+1)); done; wait
       sed -n 3p trace; cat per_cpu/cpu0/stats; echo --; cat per_cpu/cpu1/stats`,
      { timeoutMs: 120_000 },
    );
    expect(r.code).toBe(0);
    const [head, cpu0, cpu1] = r.stdout.split(/\n--\n|(?<=written: \d+\/\d+ +#P:\d+)\n/);
    const hm = /entries-in-buffer\/entries-written: (\d+)\/(\d+)/.exec(head!)!;
    expect(Number(hm[2])).toBe(20000);
    const stats = [cpu0!, cpu1!];
    const entries = stats.reduce((a, s) => a + stat(s, 'entries'), 0);
    const overrun = stats.reduce((a, s) => a + stat(s, 'overrun'), 0);
    expect(stats.every((s) => stat(s, 'dropped events') === 0)).toBe(true);
    expect(overrun).toBeGreaterThan(0);
    expect(entries).toBe(Number(hm[1]));
    expect(entries + overrun).toBe(20000);
  }, 150_000);
});
