/**
 * Which functions an fprobe goes on (fprobe.c get_ips_from_filter() and
 * get_ftrace_locations()): kallsyms names matched with glob_match() — here a
 * filter may hold several globs separated by spaces — keeping the functions
 * that have an ftrace location; or an exact list of names.
 */
import { fail } from '../kernel/errno.js';
import type { Kernel } from '../kernel/kernel.js';
import type { KernelFunction } from '../kernel/symbols.js';

/** lib/glob.c semantics: `*`, `?`, `[...]` with `!` and ranges, `\` escapes. */
function globMatch(pat: string, str: string): boolean {
  let p = 0;
  let s = 0;
  let starP = -1;
  let starS = 0;
  while (s < str.length) {
    if (p < pat.length) {
      const d = pat[p];
      if (d === '*') {
        starP = ++p;
        starS = s;
        continue;
      }
      const n = matchOne(pat, p, str[s]);
      if (n > 0) {
        p += n;
        s++;
        continue;
      }
    }
    if (starP < 0) return false;
    p = starP;
    s = ++starS;
  }
  while (p < pat.length && pat[p] === '*') p++;
  return p === pat.length;
}

/** Length of the pattern element at `p` if it matches `c`, else 0. */
function matchOne(pat: string, p: number, c: string): number {
  const d = pat[p];
  if (d === '?') return 1;
  if (d === '\\' && p + 1 < pat.length) return pat[p + 1] === c ? 2 : 0;
  if (d === '[') {
    let i = p + 1;
    const inv = pat[i] === '!';
    if (inv) i++;
    let hit = false;
    let first = true;
    while (i < pat.length && (first || pat[i] !== ']')) {
      first = false;
      let a = pat[i];
      let b = a;
      if (pat[i + 1] === '-' && i + 2 < pat.length && pat[i + 2] !== ']') {
        b = pat[i + 2];
        i += 2;
      }
      if (a > b) [a, b] = [b, a];
      if (a <= c && c <= b) hit = true;
      i++;
    }
    // A class with no closing bracket is a literal '['.
    if (i >= pat.length) return c === '[' ? 1 : 0;
    return hit !== inv ? i + 1 - p : 0;
  }
  return d === c ? 1 : 0;
}

const splitGlobs = (s: string | undefined): string[] => (s ?? '').split(/\s+/).filter(Boolean);

/**
 * Traceable functions whose name matches one of the globs of `filter` and
 * none of `notFilter`. ENOENT when there is none.
 */
export function functionsFromFilter(kernel: Kernel, filter: string, notFilter?: string): KernelFunction[] {
  const yes = splitGlobs(filter);
  const no = splitGlobs(notFilter);
  if (!yes.length) fail('EINVAL');
  const plain = yes.every((g) => !/[*?[\\]/.test(g));
  let out: KernelFunction[];
  if (plain) {
    out = [];
    for (const name of yes) for (const f of kernel.symbols.byName(name)) if (f.traceable) out.push(f);
  } else {
    out = kernel.symbols.traceable().filter((f) => yes.some((g) => globMatch(g, f.name)));
  }
  if (no.length) out = out.filter((f) => !no.some((g) => globMatch(g, f.name)));
  if (!out.length) fail('ENOENT');
  return [...new Set(out)];
}

/** register_fprobe_syms(): each name must have an ftrace location (ENOENT otherwise). `mod:name` narrows to a module. */
export function functionsFromNames(kernel: Kernel, names: readonly string[]): KernelFunction[] {
  if (!names.length) fail('EINVAL');
  const out: KernelFunction[] = [];
  for (const full of names) {
    const colon = full.indexOf(':');
    const fn = (colon >= 0 ? kernel.symbols.byName(full.slice(colon + 1), full.slice(0, colon)) : kernel.symbols.byName(full)).find((f) => f.traceable);
    if (!fn) fail('ENOENT');
    out.push(fn);
  }
  return [...new Set(out)];
}
