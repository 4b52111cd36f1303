/** A request may wait as long as its file says (fuse-native used to answer ETIMEDOUT after 15 s). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MountedTracefs, mountTracefs } from '../../src/fuse/mount.js';
import { buildFixture } from '../helpers/mount-fixture.js';
import { fuseUnavailable, sh, tempDir } from '../helpers/e2e.js';

const skip = fuseUnavailable();

describe.skipIf(!!skip)(`no operation timeout${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let m: MountedTracefs;
  beforeAll(async () => {
    m = await mountTracefs(buildFixture().fs, `${tempDir('tfe-slow-')}/mnt`);
  });
  afterAll(async () => {
    await m?.unmount();
  });

  it('completes a read that blocks for 20 s', async () => {
    const r = await sh(`cat ${m.mountpoint}/slow; echo "rc=$?"`, { timeoutMs: 40_000 });
    expect(r.stdout).toBe('slow done\nrc=0\n');
    expect(r.ms).toBeGreaterThanOrEqual(19_500);
  }, 45_000);
});
