/**
 * Function-name matching as set_ftrace_filter and friends do it: a word is
 * classified once (full name, prefix*, *suffix, *middle*, a real glob, or a
 * 1-based index into available_filter_functions), then matched against each
 * record's symbol name. Real globs follow lib/glob.c: `*`, `?`, `[...]`
 * classes with ranges and `!` inversion, `\` escapes, no special `/`.
 */

import { globMatch } from '../kernel/glob_match.js';

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

/** The 1-based index an Index word names (kstrtoul() in base 0), or undefined when it does not parse. */
export function filterIndex(search: string): number | undefined {
  const n = /^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/.test(search) ? Number(search) : NaN;
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
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
