/** The README's laboratory example keeps working on both series. */
import { describe, expect, it } from 'vitest';
import { main } from '../../examples/return_hooks.js';
import { SERIES, type Series } from '../../src/kernel/series.js';

/** Where ksys_read's call of vfs_read returns (the real kernels' samples). */
const CALLER: Record<Series, string> = { '7.2': '7b', '7.3': '6b', '6.12': '6f' };

describe('examples/return_hooks', () => {
  it.each(SERIES)('%s', async (series) => {
    const out = await main(series);
    expect(out).toMatch(/fprobe on 3 functions \(vfs_read seq_read_iter seq_read\)/);
    expect(out).toMatch(/ {2}vfs_read: 20 calls/);
    expect(out).toMatch(new RegExp(`kretprobe vfs_read: 20 returns, 0 missed, callers: ksys_read\\+0x${CALLER[series]}`));
    expect(out).toMatch(/vfs_read: (fgraph\(fprobe_return\)|rethook:kretprobe:lab\/vfs_read) \+ /);
  });
});
