/**
 * Function-name matching as set_ftrace_filter and friends do it: a word is
 * classified once (full name, prefix*, *suffix, *middle*, a real glob, or a
 * 1-based index into available_filter_functions), then matched against each
 * record's symbol name. Real globs follow lib/glob.c: `*`, `?`, `[...]`
 * classes with ranges and `!` inversion, `\` escapes, no special `/`.
 */

export const enum MatchType {
  Full,
  FrontOnly,
  MiddleOnly,
  EndOnly,
  Glob,
  Index,
}

export interface FtraceGlob {
  type: MatchType;
  /** The text compared (the pattern for Glob; the bare word for the other types). */
  search: string;
}

interface ParsedRegex extends FtraceGlob {
  /** The word started with `!` (remove instead of add). */
  not: boolean;
}

/**
 * Classifies a filter word the way the kernel's filter_parse_regex() does:
 * a leading `*` and/or a trailing `*` give the cheap match types, a `*`
 * inside or any of `[`, `?`, `\` make it a full glob, a leading digit an index.
 */
export function parseFilterRegex(word: string): ParsedRegex {
  let not = false;
  let buff = word;
  if (buff.startsWith('!')) {
    not = true;
    buff = buff.slice(1);
  }
  if (/^[0-9]/.test(buff)) return { type: MatchType.Index, search: buff, not };
  let type = MatchType.Full;
  let end = buff.length;
  for (let i = 0; i < buff.length; i++) {
    const ch = buff[i];
    if (ch === '*') {
      if (i === 0) type = MatchType.EndOnly;
      else if (i === buff.length - 1) {
        type = type === MatchType.EndOnly ? MatchType.MiddleOnly : MatchType.FrontOnly;
        end = i;
        break;
      } else return { type: MatchType.Glob, search: buff, not };
    } else if (ch === '[' || ch === '?' || ch === '\\') {
      return { type: MatchType.Glob, search: buff, not };
    }
  }
  const start = buff.startsWith('*') ? 1 : 0;
  return { type, search: buff.slice(start, Math.max(start, end)), not };
}

/** ftrace_match(): does `str` match the classified word? */
export function ftraceMatch(str: string, g: FtraceGlob): boolean {
  switch (g.type) {
    case MatchType.Full:
      return str === g.search;
    case MatchType.FrontOnly:
      return str.startsWith(g.search);
    case MatchType.MiddleOnly:
      return str.includes(g.search);
    case MatchType.EndOnly:
      return str.endsWith(g.search);
    case MatchType.Glob:
      return globMatch(g.search, str);
    case MatchType.Index:
      return false;
  }
}

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
