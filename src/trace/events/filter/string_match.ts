/**
 * String predicates of event filters: the kernel's "basic regex" kinds
 * (full, front*, *middle*, *end, glob) over raw bytes with its length rules,
 * so that fixed char arrays, dynamic strings and pointers behave as on the
 * kernel (e.g. "*end" on a char[16] compares the array's last bytes).
 */

type MatchKind = 'full' | 'front' | 'middle' | 'end' | 'glob';

export interface StringPattern {
  kind: MatchKind;
  pattern: Buffer;
  /** A leading '!' in a `~` pattern inverts the match. */
  not: boolean;
}

/** filter_parse_regex(): what kind of match a `~` pattern asks for. */
export function parseGlobPattern(raw: string): StringPattern {
  let buf = raw;
  let not = false;
  if (buf.startsWith('!')) {
    not = true;
    buf = buf.slice(1);
  }
  if (/^[0-9]/.test(buf)) return { kind: 'full', pattern: Buffer.from(buf, 'latin1'), not };
  let kind: MatchKind = 'full';
  let end = buf.length;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (c === '*') {
      if (i === 0) kind = 'end';
      else if (i === buf.length - 1) {
        kind = kind === 'end' ? 'middle' : 'front';
        end = i;
        break;
      } else return { kind: 'glob', pattern: Buffer.from(buf, 'latin1'), not };
    } else if (c === '[' || c === '?' || c === '\\') {
      return { kind: 'glob', pattern: Buffer.from(buf, 'latin1'), not };
    }
  }
  const start = buf.startsWith('*') ? 1 : 0;
  return { kind, pattern: Buffer.from(buf.slice(start, Math.max(start, end)), 'latin1'), not };
}

/** strncmp(a, b, n) === 0 over buffers (out-of-range bytes read as NUL). */
function strnEq(a: Buffer, b: Buffer, n: number): boolean {
  for (let i = 0; i < n; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return false;
    if (x === 0) return true;
  }
  return true;
}

function strlen(b: Buffer): number {
  const z = b.indexOf(0);
  return z < 0 ? b.length : z;
}

/** glob_match_len(): '*', '?', '[...]' and '\' escapes over at most `len` bytes of `str`. */
function globMatch(pat: Buffer, str: Buffer, len: number): boolean {
  let p = 0;
  let s = 0;
  let backPat = -1;
  let backStr = -1;
  const at = (i: number) => (i >= len ? 0 : (str[i] ?? 0));
  for (;;) {
    const c = at(s);
    let d = pat[p++] ?? 0;
    s++;
    let literal = false;
    switch (d) {
      case 0x3f: // ?
        if (c === 0) return false;
        continue;
      case 0x2a: // *
        if ((pat[p] ?? 0) === 0) return true;
        backPat = p;
        backStr = --s;
        continue;
      case 0x5b: {
        // [
        if (c === 0) return false;
        const inverted = pat[p] === 0x21;
        let q = inverted ? p + 1 : p;
        let a = pat[q++] ?? 0;
        let match = false;
        let malformed = false;
        do {
          let b = a;
          if (a === 0) {
            malformed = true;
            break;
          }
          if (pat[q] === 0x2d && pat[q + 1] !== 0x5d) {
            b = pat[q + 1] ?? 0;
            if (b === 0) {
              malformed = true;
              break;
            }
            q += 2;
          }
          if (a <= c && c <= b) match = true;
        } while ((a = pat[q++] ?? 0) !== 0x5d);
        if (malformed) {
          literal = true;
          break;
        }
        if (match === inverted) break; // backtrack
        p = q;
        continue;
      }
      case 0x5c: // backslash
        d = pat[p++] ?? 0;
        literal = true;
        break;
      default:
        literal = true;
    }
    if (literal && c === d) {
      if (d === 0) return true;
      continue;
    }
    // backtrack
    if (c === 0 || backPat < 0) return false;
    p = backPat;
    s = ++backStr;
  }
}

/** Whether `str` (of significant length `len`, 0 for "NUL-terminated") matches. */
export function matchString(pat: StringPattern, str: Buffer, len: number): boolean {
  const r = pat.pattern;
  switch (pat.kind) {
    case 'full':
      if (!len) return strlen(str) === r.length && strnEq(str, r, r.length + 1);
      if (len < r.length) return false;
      return strnEq(str, r, len);
    case 'front':
      if (len && len < r.length) return false;
      return strnEq(str, r, r.length);
    case 'middle': {
      const hay = len ? str.subarray(0, len) : str.subarray(0, strlen(str));
      if (!r.length) return true;
      return hay.indexOf(r) >= 0;
    }
    case 'end': {
      const sl = len - 1;
      return sl >= r.length && str.subarray(sl - r.length, sl).equals(r);
    }
    case 'glob':
      return globMatch(r, str, len || str.length);
  }
}
