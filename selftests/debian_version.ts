/** Debian package version ordering (as `dpkg --compare-versions`), to pick the newest of a series. */

interface Parsed {
  epoch: number;
  upstream: string;
  revision: string;
}

function parse(v: string): Parsed {
  let rest = v.trim();
  let epoch = 0;
  const colon = rest.indexOf(':');
  if (colon >= 0) {
    epoch = Number(rest.slice(0, colon)) || 0;
    rest = rest.slice(colon + 1);
  }
  const dash = rest.lastIndexOf('-');
  return dash >= 0 ? { epoch, upstream: rest.slice(0, dash), revision: rest.slice(dash + 1) } : { epoch, upstream: rest, revision: '' };
}

/** dpkg's character order: `~` before everything (even the end), then letters, then the rest. */
function order(c: string | undefined): number {
  if (c === undefined) return 0;
  if (c === '~') return -1;
  if (/[A-Za-z]/.test(c)) return c.charCodeAt(0);
  return c.charCodeAt(0) + 256;
}

function compareFragment(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let firstDiff = 0;
    while ((i < a.length && !/\d/.test(a[i])) || (j < b.length && !/\d/.test(b[j]))) {
      const ac = i < a.length && !/\d/.test(a[i]) ? a[i] : undefined;
      const bc = j < b.length && !/\d/.test(b[j]) ? b[j] : undefined;
      const d = order(ac) - order(bc);
      if (d) return d;
      i++;
      j++;
    }
    while (a[i] === '0') i++;
    while (b[j] === '0') j++;
    while (i < a.length && /\d/.test(a[i]) && j < b.length && /\d/.test(b[j])) {
      if (!firstDiff) firstDiff = a.charCodeAt(i) - b.charCodeAt(j);
      i++;
      j++;
    }
    if (i < a.length && /\d/.test(a[i])) return 1;
    if (j < b.length && /\d/.test(b[j])) return -1;
    if (firstDiff) return firstDiff;
  }
  return 0;
}

/** <0, 0, >0 as a sorts before, with or after b. */
export function compareDebianVersions(a: string, b: string): number {
  const pa = parse(a);
  const pb = parse(b);
  if (pa.epoch !== pb.epoch) return pa.epoch - pb.epoch;
  return compareFragment(pa.upstream, pb.upstream) || compareFragment(pa.revision, pb.revision);
}

export function newestVersion(versions: Iterable<string>): string | undefined {
  let best: string | undefined;
  for (const v of versions) if (v && (best === undefined || compareDebianVersions(v, best) > 0)) best = v;
  return best;
}
