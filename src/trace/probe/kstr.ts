/**
 * The kernel's string primitives the probe parsers are built on, with the
 * kernel's exact semantics: Latin-1 ctype (lib/ctype.c), kstrto*()
 * (lib/kstrtox.c), simple_strtoul(), argv_split() and glob_match().
 *
 * Commands are byte strings: one JS char per byte (decode writes as latin1).
 */
import type { ErrnoName } from '../../kernel/errno.js';

const C = 1, U = 2, L = 4, D = 8, P = 16, S = 32, X = 64, SP = 128;

/** lib/ctype.c's table for 0..255. */
const CTYPE: Uint8Array = (() => {
  const t = new Uint8Array(256);
  for (let i = 0; i < 256; i++) {
    let v = 0;
    if (i < 32 || i === 127 || (i >= 128 && i < 160)) v = C;
    if (i >= 9 && i <= 13) v |= S;
    if (i === 32 || i === 160) v = S | SP;
    else if ((i >= 33 && i <= 47) || (i >= 58 && i <= 64) || (i >= 91 && i <= 96) || (i >= 123 && i <= 126)) v = P;
    else if (i >= 48 && i <= 57) v = D;
    else if (i >= 65 && i <= 90) v = U | (i <= 70 ? X : 0);
    else if (i >= 97 && i <= 122) v = L | (i <= 102 ? X : 0);
    else if (i >= 161 && i <= 191) v = P;
    else if (i >= 192 && i <= 222) v = i === 215 ? P : U;
    else if (i >= 223 && i <= 255) v = i === 247 ? P : L;
    t[i] = v;
  }
  return t;
})();

const ct = (ch: string | undefined): number => (ch === undefined || ch === '' ? 0 : CTYPE[ch.charCodeAt(0) & 0xff]);
const isspace = (ch: string | undefined): boolean => (ct(ch) & S) !== 0;
export const isalpha = (ch: string | undefined): boolean => (ct(ch) & (U | L)) !== 0;
export const isdigit = (ch: string | undefined): boolean => (ct(ch) & D) !== 0;
export const isalnum = (ch: string | undefined): boolean => (ct(ch) & (U | L | D)) !== 0;
const isxdigit = (ch: string | undefined): boolean => (ct(ch) & (D | X)) !== 0;

/** A kstrto*() result: the value, or the errno the kernel function returns. */
type KstrResult = { ok: true; value: bigint } | { ok: false; err: ErrnoName };

const U64_MAX = (1n << 64n) - 1n;

/** _parse_integer_fixup_radix: the base and how many prefix chars to skip. */
function fixupRadix(s: string, base: number): { base: number; skip: number } {
  if (base === 0) {
    if (s[0] === '0') base = s[1]?.toLowerCase() === 'x' && isxdigit(s[2]) ? 16 : 8;
    else base = 10;
  }
  const skip = base === 16 && s[0] === '0' && s[1]?.toLowerCase() === 'x' ? 2 : 0;
  return { base, skip };
}

/** _parse_integer_limit: digits consumed, value, overflow. */
function parseInteger(s: string, base: number): { n: number; value: bigint; overflow: boolean } {
  let value = 0n;
  let overflow = false;
  let n = 0;
  const b = BigInt(base);
  for (; n < s.length; n++) {
    const c = s[n].toLowerCase();
    let v: number;
    if (c >= '0' && c <= '9') v = c.charCodeAt(0) - 48;
    else if (c >= 'a' && c <= 'f') v = c.charCodeAt(0) - 97 + 10;
    else break;
    if (v >= base) break;
    value = value * b + BigInt(v);
    if (value > U64_MAX) {
      overflow = true;
      value &= U64_MAX;
    }
  }
  return { n, value, overflow };
}

function kstrtoullRaw(s: string, base: number): KstrResult {
  const fx = fixupRadix(s, base);
  s = s.slice(fx.skip);
  const r = parseInteger(s, fx.base);
  if (r.overflow) return { ok: false, err: 'ERANGE' };
  if (r.n === 0) return { ok: false, err: 'EINVAL' };
  let rest = s.slice(r.n);
  if (rest[0] === '\n') rest = rest.slice(1);
  if (rest.length) return { ok: false, err: 'EINVAL' };
  return { ok: true, value: r.value };
}

/** kstrtoul / kstrtoull (64-bit). */
export function kstrtoul(s: string, base = 0): KstrResult {
  return kstrtoullRaw(s[0] === '+' ? s.slice(1) : s, base);
}

/** kstrtol / kstrtoll (64-bit), value as a signed bigint. */
export function kstrtol(s: string, base = 0): KstrResult {
  if (s[0] === '-') {
    const r = kstrtoullRaw(s.slice(1), base);
    if (!r.ok) return r;
    if (r.value > 1n << 63n) return { ok: false, err: 'ERANGE' };
    return { ok: true, value: -r.value };
  }
  const r = kstrtoul(s, base);
  if (!r.ok) return r;
  if (r.value >= 1n << 63n) return { ok: false, err: 'ERANGE' };
  return r;
}

/** kstrtouint. */
export function kstrtouint(s: string, base = 0): KstrResult {
  const r = kstrtoul(s, base);
  if (!r.ok) return r;
  if (r.value > 0xffffffffn) return { ok: false, err: 'ERANGE' };
  return r;
}

/** simple_strtoul: the value and the index where parsing stopped. */
export function simpleStrtoul(s: string, base = 0): { value: bigint; end: number } {
  const fx = fixupRadix(s, base);
  const r = parseInteger(s.slice(fx.skip), fx.base);
  return { value: r.value, end: fx.skip + r.n };
}

/** argv_split(): words separated by (kernel) whitespace, no quoting. */
export function argvSplit(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    while (i < s.length && isspace(s[i])) i++;
    if (i >= s.length) break;
    const start = i;
    while (i < s.length && !isspace(s[i])) i++;
    out.push(s.slice(start, i));
  }
  return out;
}

/** skip_spaces(). */
export function skipSpaces(s: string): string {
  let i = 0;
  while (i < s.length && isspace(s[i])) i++;
  return s.slice(i);
}

/** strpbrk(): index of the first char of `s` that is in `set`, or -1. */
export function strpbrk(s: string, set: string): number {
  for (let i = 0; i < s.length; i++) if (set.includes(s[i])) return i;
  return -1;
}

/** __is_good_name(): a C identifier (Latin-1 letters count), `-` allowed for systems. */
function goodName(name: string, hashOk: boolean): boolean {
  if (!name.length) return false;
  if (!isalpha(name[0]) && name[0] !== '_' && (!hashOk || name[0] !== '-')) return false;
  for (let i = 1; i < name.length; i++) {
    const ch = name[i];
    if (!isalpha(ch) && !isdigit(ch) && ch !== '_' && (!hashOk || ch !== '-')) return false;
  }
  return true;
}

export const isGoodName = (name: string): boolean => goodName(name, false);
export const isGoodSystemName = (name: string): boolean => goodName(name, true);

/** sanitize_event_name(): `:`, `.`, `*` become `_`, except in the first char. */
export function sanitizeEventName(name: string): string {
  return name.length ? name[0] + name.slice(1).replace(/[:.*]/g, '_') : name;
}

/** snprintf into a buffer of `size` bytes: at most size-1 chars survive. */
export function truncate(s: string, size: number): string {
  return s.length >= size ? s.slice(0, size - 1) : s;
}
