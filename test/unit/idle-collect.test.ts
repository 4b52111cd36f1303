/**
 * The daemon's collection once it goes quiet (src/daemon/idle_collect.ts):
 * one full collection after each busy period, none while requests come,
 * none again while it stays idle.
 */
import { readFileSync } from 'node:fs';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { collectWhenIdle } from '../../src/daemon/idle_collect.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
setFlagsFromString('--expose-gc');

describe('collection when idle', () => {
  it('collects once after a busy period, not while busy, and not again while idle', async () => {
    let served = 0;
    let collections = 0;
    const stop = collectWhenIdle(() => served, { gc: () => collections++, idleMs: 60, checkMs: 10 });
    try {
      await sleep(150);
      expect(collections).toBe(0); // nothing was served: nothing to give back
      for (let i = 0; i < 10; i++) {
        served++;
        await sleep(15);
      }
      expect(collections).toBe(0); // busy all along
      await sleep(150);
      expect(collections).toBe(1);
      await sleep(150);
      expect(collections).toBe(1);
      served++;
      await sleep(150);
      expect(collections).toBe(2);
    } finally {
      stop();
    }
  });

  it('can have a full collection in this process', () => {
    let served = 0;
    const stop = collectWhenIdle(() => served++);
    stop();
    expect(served).toBe(1); // it started watching: gc was available
  });

  it('trims the C heap after its collection', async () => {
    const order: string[] = [];
    let served = 0;
    const stop = collectWhenIdle(() => (served < 2 ? ++served : served), { gc: () => order.push('gc'), trim: () => order.push('trim'), idleMs: 30, checkMs: 5 });
    try {
      for (let i = 0; i < 40 && order.length < 2; i++) await sleep(10);
    } finally {
      stop();
    }
    expect(order).toEqual(['gc', 'trim']);
  });

  it('its collection compacts: the old space shrinks to what lives, not just its objects', async () => {
    // Fragment the old space: millions of small objects, one in twenty kept.
    let all: { a: number; b: string }[] = [];
    for (let i = 0; i < 2e6; i++) all.push({ a: i, b: `x${i}` });
    const kept = all.filter((_, i) => i % 20 === 0);
    all = [];
    let collections = 0;
    let served = 0;
    const gcOnce = (): void => void (runInNewContext('gc') as () => void)();
    /** Bytes of the old space that hold nothing. */
    const slack = (): number => {
      const old = getHeapSpaceStatistics().find((x) => x.space_name === 'old_space')!;
      return old.space_size - old.space_used_size;
    };
    gcOnce();
    const plain = slack();
    const stop = collectWhenIdle(() => (served < 2 ? ++served : served), { trim: () => collections++, idleMs: 30, checkMs: 5 });
    try {
      for (let i = 0; i < 100 && !collections; i++) await sleep(10);
    } finally {
      stop();
    }
    expect(collections).toBe(1);
    expect(kept.length).toBe(1e5);
    // A plain collection left the emptied pages in the heap; the idle one gave nearly all of them back.
    expect(plain).toBeGreaterThan(50e6);
    expect(slack()).toBeLessThan(plain / 10);
  });

  it('a trim gives back the pages of freed buffers that malloc kept between live ones', async () => {
    const { nativeAddon } = await import('../../src/host/native_addon.js');
    const addon = nativeAddon();
    const gc = runInNewContext('gc') as () => void;
    const rss = () => Number(readFileSync('/proc/self/statm', 'latin1').split(' ')[1]) * 4096;
    // 160 MB of 8 KB buffers, one in eight kept: the freed ones sit between live chunks, where free() cannot give them back.
    let all: Buffer[] = [];
    for (let i = 0; i < 20000; i++) all.push(Buffer.alloc(8192, 1));
    const kept = all.filter((_, i) => i % 8 === 0);
    all = [];
    gc();
    gc();
    const before = rss();
    expect(addon.trimHeap()).toBe(true);
    const after = rss();
    expect(before - after).toBeGreaterThan(64 * 1024 * 1024);
    expect(addon.heapStats().inUse!).toBeGreaterThan(kept.length * 8192);
  });
});
