import { mkdtempSync, mkdirSync, copyFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { machineArchive, parseDeb822, parseOneLine, readAptSources, releaseCodename } from '../../selftests/apt_sources.js';
import { aptOptions, parseMadison, privateSourcesList } from '../../selftests/fetch.js';
import { readFileSync } from 'node:fs';

const fixtures = join(import.meta.dirname, '../fixtures/apt');

describe('apt sources (deb822)', () => {
  const sources = parseDeb822(readFileSync(join(fixtures, 'debian.sources'), 'utf8'), 'debian.sources');

  it('keeps enabled deb entries with their suites and keyring', () => {
    expect(sources.map((s) => s.uri)).toEqual([
      'http://mirror.example.org/debian',
      'http://security.example.org/debian-security',
      'http://inline.example.org/debian',
    ]);
    expect(sources[0]).toMatchObject({
      suites: ['bookworm', 'bookworm-updates'],
      components: ['main', 'contrib'],
      signedBy: '/usr/share/keyrings/debian-archive-keyring.gpg',
    });
  });

  it('has no keyring file for an inline key', () => {
    expect(sources[2].signedBy).toBeUndefined();
  });

  it('finds the archive of the release itself, not -security or -updates', () => {
    expect(machineArchive(sources, 'bookworm')?.uri).toBe('http://mirror.example.org/debian');
    expect(machineArchive(sources, 'bookworm-security')?.uri).toBe('http://security.example.org/debian-security');
    expect(machineArchive(sources, 'bullseye')).toBeUndefined();
  });
});

describe('apt sources (one-line)', () => {
  const sources = parseOneLine(readFileSync(join(fixtures, 'sources.list'), 'utf8'));

  it('reads deb lines with options, ignoring deb-src and comments', () => {
    expect(sources.map((s) => [s.uri, s.suites[0]])).toEqual([
      ['http://oneline.example.net/debian', 'bookworm'],
      ['http://plain.example.net/debian', 'bookworm-updates'],
      ['http://indented.example.net/debian', 'trixie'],
    ]);
    expect(sources[0].signedBy).toBe('/etc/apt/keyrings/example.gpg');
    expect(sources[0].components).toEqual(['main', 'non-free-firmware']);
    expect(sources[1].signedBy).toBeUndefined();
  });
});

describe('the machine apt configuration', () => {
  it('reads sources.list first, then sources.list.d in name order', () => {
    const etc = mkdtempSync(join(tmpdir(), 'apt-'));
    mkdirSync(join(etc, 'sources.list.d'));
    copyFileSync(join(fixtures, 'sources.list'), join(etc, 'sources.list'));
    copyFileSync(join(fixtures, 'debian.sources'), join(etc, 'sources.list.d', 'debian.sources'));
    writeFileSync(join(etc, 'sources.list.d', 'other.list.disabled'), 'deb http://ignored.example/ bookworm main\n');
    const all = readAptSources(etc);
    expect(all[0].uri).toBe('http://oneline.example.net/debian');
    expect(all.some((s) => s.uri.includes('ignored'))).toBe(false);
    expect(machineArchive(all, 'bookworm')?.uri).toBe('http://oneline.example.net/debian');
  });

  it('reads the release codename from os-release', () => {
    const f = join(mkdtempSync(join(tmpdir(), 'osr-')), 'os-release');
    writeFileSync(f, 'NAME="Debian GNU/Linux"\nVERSION_CODENAME=bookworm\n');
    expect(releaseCodename(f)).toBe('bookworm');
  });

  it('writes a private sources.list for the newer suites on the machine archive', () => {
    expect(privateSourcesList({ uri: 'http://m.example/debian', signedBy: '/k.gpg' })).toBe(
      'deb [signed-by=/k.gpg] http://m.example/debian sid main\ndeb [signed-by=/k.gpg] http://m.example/debian trixie-backports main\n',
    );
    expect(privateSourcesList({ uri: 'http://m.example/debian' }, ['sid'])).toBe('deb http://m.example/debian sid main\n');
  });

  it('points apt at private dirs only for the private configuration', () => {
    const priv = aptOptions('private', '/c').join(' ');
    expect(priv).toContain('Dir::Etc::sourcelist=/c/apt/sources.list');
    expect(priv).toContain('Dir::State::Lists=/c/apt/lists');
    expect(priv).toContain('Dir::Cache=/c/apt/cache');
    expect(aptOptions('system', '/c').join(' ')).not.toContain('Dir::');
  });

  it('parses apt-cache madison', () => {
    const out = ' linux-source-6.12 | 6.12.117-1~deb12u1 | http://x bookworm-security/main amd64 Packages\n linux-source-6.12 | 6.12.115-2~deb12u1 | http://x bookworm-security/main amd64 Packages\n';
    expect(parseMadison(out, 'linux-source-6.12')).toEqual(['6.12.117-1~deb12u1', '6.12.115-2~deb12u1']);
  });
});
