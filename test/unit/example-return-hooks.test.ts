/** The README's laboratory example keeps working on both series. */
import { describe, expect, it } from 'vitest';
import { main } from '../../examples/return_hooks.js';

describe('examples/return_hooks', () => {
  it.each(['7.2', '6.12'] as const)('%s', async (series) => {
    const out = await main(series);
    expect(out).toMatch(/fprobe on 3 functions \(vfs_read seq_read_iter seq_read\)/);
    expect(out).toMatch(/ {2}vfs_read: 20 calls/);
    expect(out).toMatch(new RegExp(`kretprobe vfs_read: 20 returns, 0 missed, callers: ksys_read\\+0x${series === '7.2' ? '7b' : '6f'}`));
    expect(out).toMatch(/vfs_read: (fgraph\(fprobe_return\)|rethook:kretprobe:lab\/vfs_read) \+ /);
  });
});
