import { describe, expect, it } from 'vitest';
import { CallSites } from '../../src/kernel/call_sites.js';
import { sprintSymbol } from '../../src/kernel/kallsyms.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { testEmulator } from '../helpers/emulator.js';

/** Where ksys_read's call of vfs_read returns, as the real kernels' samples show it. */
const KRETPROBE_CALLER: Record<Series, string> = {
  '7.2': 'ksys_read+0x7b/0x110',
  '7.3': 'ksys_read+0x6b/0xe0',
  '6.12': 'ksys_read+0x6f/0xf0',
};

describe.each(SERIES)('call sites of the real %s', (series) => {
  const kretprobeCaller = KRETPROBE_CALLER[series];
  const k = testEmulator({ series }).kernel;
  const t = k.symbols;
  const fn = (name: string) => t.byName(name)[0]!;

  it('gives the return address the samples show after ksys_read calls vfs_read', () => {
    const t0 = performance.now();
    const cs = k.callSites;
    const off = cs.returnOffset(fn('ksys_read'), fn('vfs_read'));
    console.log(`call sites ${series}: ${cs.size} loaded in ${(performance.now() - t0).toFixed(0)} ms`);
    expect(cs.size).toBeGreaterThan(200_000);
    expect(sprintSymbol(t, fn('ksys_read').addr + BigInt(off))).toBe(kretprobeCaller);
    expect(cs.isRealCall(fn('ksys_read'), fn('vfs_read'))).toBe(true);
    // ksys_read calls vfs_read on two paths; the first is the default.
    expect(cs.returnOffset(fn('ksys_read'), fn('vfs_read'), 1)).toBeGreaterThan(off);
  });

  it('knows the calls along the paths the emulated kernel runs', () => {
    const cs = k.callSites;
    for (const [a, b] of [
      ['ksys_write', 'vfs_write'],
      ['__x64_sys_openat', 'do_sys_openat2'],
      ['path_openat', 'vfs_open'],
      ['__fput', 'dput'],
      ['schedule', '__schedule'],
    ] as const) {
      expect(cs.isRealCall(fn(a), fn(b)), `${a} -> ${b}`).toBe(true);
    }
    expect(cs.callsFrom(fn('vfs_read')).length).toBeGreaterThan(3);
  });

  it('models a call the real kernel does not make on an instruction boundary, stably', () => {
    const cs = k.callSites;
    const caller = fn('vfs_read');
    const callee = fn('kfree');
    expect(cs.isRealCall(caller, callee)).toBe(false);
    const off = cs.returnOffset(caller, callee);
    expect(off).toBeGreaterThan(9);
    expect(off).toBeLessThan(caller.size);
    expect(k.insns.isInsnBoundary(caller, off)).toBe(true);
    expect(new CallSites(t, k.insns).returnOffset(caller, callee)).toBe(off);
  });
});
