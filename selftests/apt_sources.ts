/**
 * The machine's own apt sources, read (never written) to find the Debian
 * archive it uses: the private apt configuration that reaches newer suites
 * points at the same mirror with the same keyring, so no host name is ever
 * written into the repository.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One `deb` source: where, which suites, signed by which keyring. */
export interface AptSource {
  uri: string;
  suites: string[];
  components: string[];
  /** Keyring file of Signed-By (an inline key is not a file: undefined). */
  signedBy?: string;
  /** The file it was read from. */
  file: string;
}

/** deb822 (`*.sources`): paragraphs of `Key: value` fields. Only enabled `deb` entries are kept. */
export function parseDeb822(text: string, file = ''): AptSource[] {
  const out: AptSource[] = [];
  const paragraphs = text.split(/\n[ \t]*\n/);
  for (const para of paragraphs) {
    const fields = new Map<string, string>();
    let last: string | undefined;
    for (const raw of para.split('\n')) {
      if (raw.startsWith('#')) continue;
      if (/^[ \t]/.test(raw)) {
        // A continuation line (a multi-line field, e.g. an inline Signed-By key).
        if (last) fields.set(last, `${fields.get(last)}\n${raw.trim()}`);
        continue;
      }
      const m = /^([A-Za-z0-9-]+):[ \t]*(.*?)[ \t]*$/.exec(raw);
      if (!m) continue;
      last = m[1].toLowerCase();
      fields.set(last, m[2]);
    }
    const words = (k: string) => (fields.get(k) ?? '').split(/\s+/).filter(Boolean);
    if (!words('types').includes('deb')) continue;
    if (/^(no|false|0)$/i.test(fields.get('enabled') ?? '')) continue;
    const uris = words('uris');
    if (uris.length === 0) continue;
    const signed = (fields.get('signed-by') ?? '').trim();
    for (const uri of uris) {
      out.push({
        uri,
        suites: words('suites'),
        components: words('components'),
        signedBy: signed.startsWith('/') && !signed.includes('\n') ? signed : undefined,
        file,
      });
    }
  }
  return out;
}

/** One-line format (`sources.list`, `*.list`): `deb [opts] URI suite comp…`. */
export function parseOneLine(text: string, file = ''): AptSource[] {
  const out: AptSource[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    const m = /^deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)(?:\s+(.*))?$/.exec(line);
    if (!m) continue;
    const opts = m[1] ?? '';
    const signed = /(?:^|\s)signed-by=(\S+)/.exec(opts)?.[1];
    out.push({
      uri: m[2],
      suites: [m[3]],
      components: (m[4] ?? '').split(/\s+/).filter(Boolean),
      signedBy: signed?.startsWith('/') ? signed : undefined,
      file,
    });
  }
  return out;
}

/** Every `deb` source of an apt configuration directory (default /etc/apt). */
export function readAptSources(etcApt = '/etc/apt'): AptSource[] {
  const out: AptSource[] = [];
  const read = (f: string): string | undefined => {
    try {
      return readFileSync(f, 'utf8');
    } catch {
      return undefined;
    }
  };
  const main = read(join(etcApt, 'sources.list'));
  if (main !== undefined) out.push(...parseOneLine(main, join(etcApt, 'sources.list')));
  let parts: string[] = [];
  try {
    parts = readdirSync(join(etcApt, 'sources.list.d')).sort();
  } catch {
    /* no sources.list.d */
  }
  for (const name of parts) {
    const f = join(etcApt, 'sources.list.d', name);
    const text = name.endsWith('.sources') || name.endsWith('.list') ? read(f) : undefined;
    if (text === undefined) continue;
    out.push(...(name.endsWith('.sources') ? parseDeb822(text, f) : parseOneLine(text, f)));
  }
  return out;
}

/** VERSION_CODENAME of an os-release file (e.g. bookworm). */
export function releaseCodename(osRelease = '/etc/os-release'): string | undefined {
  try {
    const m = /^VERSION_CODENAME=["']?([^"'\n]*)/m.exec(readFileSync(osRelease, 'utf8'));
    return m?.[1] || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The archive the machine uses for its own release: the first source whose
 * suites include the release codename itself (not -updates or -security,
 * which live in other archives). Its URI and keyring serve the newer suites.
 */
export function machineArchive(sources: AptSource[], release: string): AptSource | undefined {
  return sources.find((s) => s.suites.includes(release));
}
