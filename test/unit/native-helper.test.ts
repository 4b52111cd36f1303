/**
 * The native helpers are built once per version of their sources: a cache
 * shared by checkouts of different versions never hands one another's
 * program out.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nativeHelper } from '../../src/host/native_helper.js';

const hasCc = ['/usr/bin/cc', '/usr/local/bin/cc'].some((p) => existsSync(p));

describe.skipIf(!hasCc)('native helpers', () => {
  const saved = process.env.XDG_CACHE_HOME;
  afterEach(() => {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
  });

  it('are compiled into the cache under a name that carries the hash of their sources, once', () => {
    const cache = mkdtempSync(join(tmpdir(), 'native-cache-'));
    try {
      process.env.XDG_CACHE_HOME = cache;
      const bin = nativeHelper('seccomp', 'syscall_watch');
      expect(bin && basename(bin)).toMatch(/^syscall_watch-[0-9a-f]{16}$/);
      expect(bin!.startsWith(join(cache, 'tracefs-emu'))).toBe(true);
      expect(nativeHelper('seccomp', 'syscall_watch')).toBe(bin);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
