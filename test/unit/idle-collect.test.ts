/**
 * The daemon's collection once it goes quiet (src/daemon/idle_collect.ts):
 * one full collection after each busy period, none while requests come,
 * none again while it stays idle.
 */
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
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
