/** lib/glob.c: the one glob matcher ftrace filters and probe arguments share. */

/**
 * lib/glob.c's glob_match(): whole-string match of `str` against `pat`.
 * A failed match after a `*` retries one character further into the string;
 * one level of backtracking is enough because `*` matches anything.
 */
export function globMatch(pat: string, str: string): boolean {
  let p = 0;
  let s = 0;
  let backPat = -1;
  let backStr = -1;
  const at = (t: string, i: number): string => (i < t.length ? t[i] : '\0');
  for (;;) {
    const c = at(str, s++);
    const d = at(pat, p++);
    let ok: boolean;
    switch (d) {
      case '?':
        if (c === '\0') return false;
        continue;
      case '*':
        if (at(pat, p) === '\0') return true;
        backPat = p;
        backStr = --s;
        continue;
      case '[': {
        if (c === '\0') return false;
        const cls = classMatch(pat, p, c);
        if (cls) {
          if (cls.matched) {
            p = cls.next;
            continue;
          }
          ok = false;
          break;
        }
        // Malformed class: the `[` is an ordinary character.
        ok = c === d;
        break;
      }
      default: {
        // `\` escapes the next character; anything else is a literal.
        const lit = d === '\\' ? at(pat, p++) : d;
        ok = c === lit;
        if (ok && lit === '\0') return true;
      }
    }
    if (ok) continue;
    if (c === '\0' || backPat < 0) return false;
    p = backPat;
    s = ++backStr;
  }
}

/**
 * A `[...]` class starting at pat[p] (just after the `[`): whether `c` is in
 * it and where the pattern continues, or undefined when the class is not
 * closed (then `[` is literal).
 */
function classMatch(pat: string, p: number, c: string): { matched: boolean; next: number } | undefined {
  const inverted = pat[p] === '!';
  let i = inverted ? p + 1 : p;
  let matched = false;
  let a = pat[i++];
  // The first span may be `]` itself.
  for (;;) {
    if (a === undefined) return undefined;
    let b = a;
    if (pat[i] === '-' && pat[i + 1] !== ']') {
      b = pat[i + 1];
      if (b === undefined) return undefined;
      i += 2;
    }
    if (a <= c && c <= b) matched = true;
    a = pat[i++];
    if (a === ']') break;
  }
  return { matched: matched !== inverted, next: i };
}
