/**
 * The kernel's vsnprintf() as trace output uses it: integer conversions with
 * flags, width and precision, %s, %c, and the %p extensions events print with.
 */
import { cString, DEFAULT_PRINT_OPTIONS, type PrintEnv, type PrintOptions, toBig, type Val } from './value.js';

const LEFT = 1;
const PLUS = 2;
const SPACE = 4;
const SPECIAL = 8;
const ZEROPAD = 16;
const SMALL = 32;
const SIGN = 64;

interface Spec {
  flags: number;
  width: number; // -1: none
  precision: number; // -1: none
  base: number;
}

/** number() of lib/vsprintf.c. */
export function number(num: bigint, spec: Spec): string {
  let { flags, width, precision } = spec;
  const base = BigInt(spec.base);
  const needPfx = (flags & SPECIAL) !== 0 && spec.base !== 10;
  const isZero = num === 0n;
  if (flags & LEFT) flags &= ~ZEROPAD;
  let sign = '';
  if (flags & SIGN) {
    if (num < 0n) {
      sign = '-';
      num = -num;
      width--;
    } else if (flags & PLUS) {
      sign = '+';
      width--;
    } else if (flags & SPACE) {
      sign = ' ';
      width--;
    }
  }
  if (needPfx) {
    if (spec.base === 16) width -= 2;
    else if (!isZero) width--;
  }
  let digits = num.toString(Number(base));
  digits = flags & SMALL ? digits.toLowerCase() : digits.toUpperCase();
  if (digits.length > precision) precision = digits.length;
  width -= precision;
  let out = '';
  if (!(flags & (ZEROPAD | LEFT)) && width > 0) {
    out += ' '.repeat(width);
    width = 0;
  }
  out += sign;
  if (needPfx) {
    if (spec.base === 16) out += flags & SMALL ? '0x' : '0X';
    else if (!isZero) out += '0';
  }
  if (!(flags & LEFT) && width > 0) {
    out += (flags & ZEROPAD ? '0' : ' ').repeat(width);
    width = 0;
  }
  if (precision > digits.length) out += '0'.repeat(precision - digits.length);
  out += digits;
  if (width > 0) out += ' '.repeat(width);
  return out;
}

/** string() of lib/vsprintf.c: precision cuts, width pads. */
function widen(s: string, spec: Spec): string {
  if (spec.precision >= 0 && s.length > spec.precision) s = s.slice(0, spec.precision);
  if (spec.width > s.length) s = spec.flags & LEFT ? s + ' '.repeat(spec.width - s.length) : ' '.repeat(spec.width - s.length) + s;
  return s;
}

/** A keyed 64-bit mix standing in for the kernel's siphash of pointers: 32 bits out, as %p shows. */
export function pointerHasher(key: bigint): (addr: bigint) => bigint {
  return (addr) => {
    let x = BigInt.asUintN(64, addr ^ key);
    x = BigInt.asUintN(64, (x ^ (x >> 33n)) * 0xff51afd7ed558ccdn);
    x = BigInt.asUintN(64, (x ^ (x >> 33n)) * 0xc4ceb9fe1a85ec53n);
    return (x ^ (x >> 33n)) & 0xffffffffn;
  };
}

/** Without an environment's hasher: a key fixed for the process. */
const defaultPointerHash = pointerHasher(0x5bd1e9955bd1e995n);

function pointerString(v: bigint, spec: Spec): string {
  const s = { ...spec, base: 16, flags: spec.flags | SMALL };
  if (s.width === -1) {
    s.width = 16;
    s.flags |= ZEROPAD;
  }
  return number(BigInt.asUintN(64, v), s);
}

function symbolString(addr: bigint, ext: string, env: PrintEnv): string {
  const backtrace = ext === 'B';
  const look = env.symbols?.lookup(backtrace ? addr - 1n : addr);
  if (!look) return `0x${BigInt.asUintN(64, addr).toString(16)}`;
  const mod = look.sym.module ? ` [${look.sym.module}]` : '';
  if (ext === 's' || ext === 'f') return look.sym.name + mod;
  const off = look.offset + (backtrace ? 1 : 0);
  return `${look.sym.name}+0x${off.toString(16)}/0x${look.sym.size.toString(16)}${mod}`;
}

function bytesOf(arg: Val, len: number, env: PrintEnv): Buffer | undefined {
  if (arg.k === 'mem') return arg.buf.length >= len ? arg.buf.subarray(0, len) : Buffer.concat([arg.buf, Buffer.alloc(len - arg.buf.length)]);
  if (arg.k === 'str') return Buffer.from(arg.s, 'latin1');
  if (arg.k === 'int' && arg.v !== 0n) return env.readKernel?.(arg.v, len);
  return undefined;
}

function hex2(b: number): string {
  return b.toString(16).padStart(2, '0');
}

function ip4(b: Buffer, leadingZeros: boolean): string {
  return [...b.subarray(0, 4)].map((x) => (leadingZeros ? String(x).padStart(3, '0') : String(x))).join('.');
}

function ip6(b: Buffer, compressed: boolean): string {
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push(b.readUInt16BE(i));
  if (!compressed) return words.map((w) => w.toString(16).padStart(4, '0')).join(':');
  // IPv4-mapped / compatible addresses print the last 32 bits dotted
  const v4mapped = words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff;
  const tail = v4mapped ? 6 : 8;
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < tail; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < tail && words[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const part = (ws: number[]) => ws.map((w) => w.toString(16)).join(':');
  let s: string;
  if (best >= 0) s = `${part(words.slice(0, best))}::${part(words.slice(best + bestLen, tail))}`;
  else s = part(words.slice(0, tail));
  if (v4mapped) s += (s.endsWith(':') ? '' : ':') + ip4(b.subarray(12, 16), false);
  return s;
}

function sockaddr(b: Buffer, ext: string): string {
  const family = b.readUInt16LE(0);
  const port = b.readUInt16BE(2);
  const wantPort = ext.includes('p');
  if (family === 2) return ip4(b.subarray(4, 8), false) + (wantPort ? `:${port}` : '');
  if (family === 10) {
    const a = ip6(b.subarray(8, 24), ext.includes('c'));
    return wantPort ? `[${a}]:${port}` : a;
  }
  return '(invalid address)';
}

function uuid(b: Buffer, ext: string): string {
  const le = ext.includes('l') || ext.includes('L');
  const upper = ext.includes('B') || ext.includes('L');
  const order = le ? [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15] : [...Array(16).keys()];
  let s = '';
  order.forEach((idx, i) => {
    s += hex2(b[idx]);
    if (i === 3 || i === 5 || i === 7 || i === 9) s += '-';
  });
  return upper ? s.toUpperCase() : s;
}

/** %*pb: hex in 32-bit chunks, most significant first; %*pbl: a range list. */
export function bitmapString(b: Buffer, nbits: number, list: boolean): string {
  const bit = (i: number) => (b[i >> 3] >> (i & 7)) & 1;
  if (list) {
    const parts: string[] = [];
    for (let i = 0; i < nbits; ) {
      if (!bit(i)) {
        i++;
        continue;
      }
      let j = i;
      while (j + 1 < nbits && bit(j + 1)) j++;
      parts.push(i === j ? `${i}` : `${i}-${j}`);
      i = j + 1;
    }
    return parts.join(',');
  }
  const chunks: string[] = [];
  let chunk = nbits & 31 || 32;
  for (let i = Math.ceil(nbits / 32) * 32 - 32; i >= 0; i -= 32) {
    let v = 0;
    for (let k = 0; k < chunk; k++) v |= bit(i + k) << k;
    chunks.push((v >>> 0).toString(16).padStart(Math.ceil(chunk / 4), '0'));
    chunk = 32;
  }
  return chunks.join(',');
}

function hexString(b: Buffer, ext: string): string {
  const sep = ext.includes('C') ? ':' : ext.includes('D') ? '-' : ext.includes('N') ? '' : ' ';
  return [...b].map(hex2).join(sep);
}

function pointer(ext: string, arg: Val, spec: Spec, env: PrintEnv, opts: PrintOptions): string {
  const v = arg.k === 'int' ? BigInt.asUintN(64, arg.v) : 0n;
  const c = ext[0] ?? '';
  switch (c) {
    case 'S':
    case 's':
    case 'B':
    case 'F':
    case 'f':
      return widen(symbolString(v, c === 'F' ? 'S' : c, env), spec);
    case 'x':
      return pointerString(v, spec);
    case 'I':
    case 'i': {
      if (ext[1] === 'S') {
        const b = bytesOf(arg, 28, env);
        return b ? widen(sockaddr(b, ext.slice(2)), spec) : '(null)';
      }
      const is6 = ext[1] === '6';
      const b = bytesOf(arg, is6 ? 16 : 4, env);
      if (!b) return '(null)';
      if (!is6) return widen(ip4(b, c === 'i'), spec);
      if (c === 'i') return widen([...b.subarray(0, 16)].map(hex2).join(''), spec);
      return widen(ip6(b, ext[2] === 'c'), spec);
    }
    case 'M':
    case 'm': {
      const b = bytesOf(arg, 6, env);
      if (!b) return '(null)';
      const sep = c === 'm' ? '' : ext[1] === 'F' ? '-' : ':';
      const bytes = ext[1] === 'R' ? [...b.subarray(0, 6)].reverse() : [...b.subarray(0, 6)];
      return bytes.map(hex2).join(sep);
    }
    case 'U': {
      const b = bytesOf(arg, 16, env);
      return b ? uuid(b, ext.slice(1)) : '(null)';
    }
    case 'h': {
      const n = spec.width < 0 ? 1 : Math.min(spec.width, 64);
      const b = bytesOf(arg, n, env);
      return b ? hexString(b, ext.slice(1)) : '(null)';
    }
    case 'b': {
      const nbits = spec.width < 0 ? 0 : spec.width;
      const b = bytesOf(arg, Math.ceil(nbits / 8), env);
      return b ? bitmapString(b, nbits, ext[1] === 'l') : '(null)';
    }
    case 'K':
    default: {
      if (arg.k === 'str' && c === '') return pointerString(1n, spec);
      if (!opts.hashPtr || v === 0n || v >= 0xfffffffffffff001n) return pointerString(v, spec);
      return pointerString((env.hashPointer ?? defaultPointerHash)(v), spec);
    }
  }
}

/** The string a %s argument stands for. */
function stringArg(arg: Val, env: PrintEnv): string {
  switch (arg.k) {
    case 'str':
      return arg.s;
    case 'mem':
      return cString(arg.buf);
    case 'int': {
      if (arg.v === 0n) return '(null)';
      const s = env.readKernelString?.(BigInt.asUintN(64, arg.v));
      return s ?? '(efault)';
    }
    default:
      return '';
  }
}

/** vsnprintf(fmt, args) as trace_seq_printf() does it. */
export function vsprintf(fmt: string, args: readonly Val[], env: PrintEnv = {}, opts: PrintOptions = DEFAULT_PRINT_OPTIONS): string {
  let out = '';
  let ai = 0;
  const nextArg = (): Val => args[ai++] ?? { k: 'int', v: 0n, bits: 32, signed: true };
  let i = 0;
  const n = fmt.length;
  while (i < n) {
    const pct = fmt.indexOf('%', i);
    if (pct < 0) {
      out += fmt.slice(i);
      break;
    }
    out += fmt.slice(i, pct);
    i = pct + 1;
    const spec: Spec = { flags: 0, width: -1, precision: -1, base: 10 };
    for (;;) {
      const f = fmt[i];
      if (f === '-') spec.flags |= LEFT;
      else if (f === '+') spec.flags |= PLUS;
      else if (f === ' ') spec.flags |= SPACE;
      else if (f === '#') spec.flags |= SPECIAL;
      else if (f === '0') spec.flags |= ZEROPAD;
      else break;
      i++;
    }
    if (fmt[i] === '*') {
      i++;
      const w = Number(BigInt.asIntN(32, toBig(nextArg())));
      if (w < 0) {
        spec.flags |= LEFT;
        spec.width = -w;
      } else spec.width = w;
    } else {
      const m = /^\d+/.exec(fmt.slice(i));
      if (m) {
        spec.width = Number(m[0]);
        i += m[0].length;
      }
    }
    if (fmt[i] === '.') {
      i++;
      if (fmt[i] === '*') {
        i++;
        spec.precision = Math.max(0, Number(BigInt.asIntN(32, toBig(nextArg()))));
      } else {
        const m = /^\d+/.exec(fmt.slice(i));
        spec.precision = m ? Number(m[0]) : 0;
        if (m) i += m[0].length;
      }
    }
    let qual = '';
    const qm = /^(hh|h|ll|l|L|z|Z|t|j)/.exec(fmt.slice(i));
    if (qm) {
      qual = qm[0];
      i += qual.length;
    }
    const conv = fmt[i++];
    switch (conv) {
      case '%':
        out += '%';
        break;
      case 'c': {
        const ch = String.fromCharCode(Number(BigInt.asUintN(8, toBig(nextArg()))));
        out += widen(ch, { ...spec, precision: -1 });
        break;
      }
      case 's':
        out += widen(stringArg(nextArg(), env), spec);
        break;
      case 'p': {
        const m = /^[A-Za-z0-9]*/.exec(fmt.slice(i))![0];
        i += m.length;
        out += pointer(m, nextArg(), spec, env, opts);
        break;
      }
      case 'd':
      case 'i':
      case 'u':
      case 'x':
      case 'X':
      case 'o': {
        const bits = qual === 'hh' ? 8 : qual === 'h' ? 16 : qual === '' ? 32 : 64;
        const signed = conv === 'd' || conv === 'i';
        const raw = toBig(nextArg());
        const v = signed ? BigInt.asIntN(bits, raw) : BigInt.asUintN(bits, raw);
        if (signed) spec.flags |= SIGN;
        if (conv === 'x') {
          spec.base = 16;
          spec.flags |= SMALL;
        } else if (conv === 'X') spec.base = 16;
        else if (conv === 'o') spec.base = 8;
        out += number(v, spec);
        break;
      }
      case undefined:
        break;
      default:
        // An unknown conversion ends the output, as the kernel's vsnprintf does.
        return out;
    }
  }
  return out;
}
