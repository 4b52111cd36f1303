import { describe, expect, it } from 'vitest';
import { compareDebianVersions, newestVersion } from '../../selftests/debian_version.js';

describe('Debian version order', () => {
  it.each([
    ['7.2.13-1', '7.2.12-1', 1],
    ['7.2.13-1', '7.2.13-1~bpo13+1', 1],
    ['6.12.117-1~deb12u1', '6.12.115-2~deb12u1', 1],
    ['6.12.9-1', '6.12.10-1', -1],
    ['1:1.0-1', '2.0-1', 1],
    ['1.0~rc1-1', '1.0-1', -1],
    ['1.0a-1', '1.0-1', 1],
    ['1.0+b1', '1.0', 1],
    ['7.2.13-1', '7.2.13-1', 0],
  ])('%s vs %s', (a, b, sign) => {
    expect(Math.sign(compareDebianVersions(a, b))).toBe(sign);
  });

  it('picks the newest', () => {
    expect(newestVersion(['7.2.12-1', '7.2.13-1~bpo13+1', '7.2.13-1', '7.2.9-2'])).toBe('7.2.13-1');
    expect(newestVersion([])).toBeUndefined();
  });
});
