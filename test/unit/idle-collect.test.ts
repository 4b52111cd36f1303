/**
 * The daemon's collection once it goes quiet (src/daemon/idle_collect.ts):
 * one full collection after each busy period, none while requests come,
 * none again while it stays idle.
 */
import { describe, expect, it } from 'vitest';
import { collectWhenIdle } from '../../src/daemon/idle_collect.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('collection when idle', () => {
  it('collects once after a busy period, not while busy, and not again while idle', async () => {
    let served = 0;
    let collections = 0;
    const stop = collectWhenIdle(() => served, () => collections++, 60, 10);
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
});
