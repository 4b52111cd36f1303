/**
 * The fuzzer (`tracefs-emu fuzz`) through a real mount, briefly: every
 * write gets an answer, none an internal error, and the resets between
 * rounds (`echo > dynamic_events` among them) never fail with EIO.
 */
import { describe, expect, it } from 'vitest';
import { runFuzz } from '../../bench/fuzz.js';
import { fuseUnavailable } from '../helpers/e2e.js';

const skip = fuseUnavailable();
if (skip) console.warn(`e2e-fuzz: skipped: ${skip}`);

describe.skipIf(!!skip)(`tracefs-emu fuzz${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('writes 600 inputs with no internal error', async () => {
    const res = await runFuzz({ writes: 600, seed: 1, writers: 4, series: '7.2', resetEvery: 100, events: 20 }, () => {});
    expect(res.samples).toEqual([]);
    expect(res.internalErrors).toBe(0);
    const counted = [...res.byFile.values()].reduce((a, s) => a + [...s.errnos.values()].reduce((x, y) => x + y, 0), 0);
    expect(counted).toBe(600);
    const probe = res.byFile.get('dynamic_events')!;
    expect([...probe.errnos.values()].reduce((x, y) => x + y, 0)).toBeGreaterThan(0);
    expect([...res.resets.keys()].filter((k) => k.endsWith('=EIO'))).toEqual([]);
  }, 180_000);
});
