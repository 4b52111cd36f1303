/**
 * The fuzzer (`tracefs-emu fuzz`) through a real mount, briefly: every
 * write gets an answer, none an internal error, and the resets between
 * rounds (`echo > dynamic_events` among them) never fail with EIO.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFuzz } from '../../bench/fuzz.js';
import { fuseUnavailable, REPO } from '../helpers/e2e.js';

// The writers are processes running the compiled writer.
const skip = fuseUnavailable() ?? (existsSync(join(REPO, 'dist', 'bench', 'fuzz_writer.js')) ? undefined : 'not built (npm run build)');
if (skip) console.warn(`e2e-fuzz: skipped: ${skip}`);

describe.skipIf(!!skip)(`tracefs-emu fuzz${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('writes 600 inputs with no internal error', async () => {
    const res = await runFuzz({ writes: 600, seed: 1, writers: 4, series: '7.2', resetEvery: 100, events: 20 }, () => {});
    expect(res.samples).toEqual([]);
    expect(res.internalErrors).toBe(0);
    expect(res.hung).toBeUndefined();
    const counted = [...res.byFile.values()].reduce((a, s) => a + [...s.errnos.values()].reduce((x, y) => x + y, 0), 0);
    expect(counted).toBe(600);
    const probe = res.byFile.get('dynamic_events')!;
    expect([...probe.errnos.values()].reduce((x, y) => x + y, 0)).toBeGreaterThan(0);
    expect(res.resets.get('dynamic_events=0')).toBe(6);
    expect([...res.resets.keys()].filter((k) => k.endsWith('=EIO'))).toEqual([]);
  }, 180_000);
});
