/** Helpers for the common shapes of tracefs files (seq_file text, numeric attributes). */
import { fail } from '../kernel/errno.js';
import type { FileOps, OpenFile } from './node.js';

interface SeqState {
  text?: Buffer;
}

/** Slice of a generated text at a file position. */
export function sliceAt(text: Buffer, size: number, pos: number): Buffer {
  return pos >= text.length ? Buffer.alloc(0) : text.subarray(pos, Math.min(text.length, pos + size));
}

/**
 * A read-only text file generated on the first read of each open (seq_file):
 * later reads continue in the same text, so `cat` sees one consistent copy.
 */
export function seqRead(show: (f: OpenFile) => string): Pick<FileOps, 'read'> {
  return {
    read(f, size, pos) {
      const st = ((f.private as SeqState | undefined) ??= {}) as SeqState;
      if (!st.text || pos === 0) st.text = Buffer.from(show(f), 'latin1');
      return sliceAt(st.text, size, pos);
    },
  };
}

/** Parses what kstrtoul_from_user() accepts: an unsigned integer (base 0 rules) and one optional newline. */
export function parseUlong(data: Buffer | string, base = 10): number {
  let s = typeof data === 'string' ? data : data.toString('latin1');
  if (s.endsWith('\n')) s = s.slice(0, -1);
  let re = /^\d+$/;
  let radix = 10;
  if (base === 16) {
    s = s.replace(/^0[xX]/, '');
    re = /^[0-9a-fA-F]+$/;
    radix = 16;
  } else if (base === 0) {
    if (/^0[xX]/.test(s)) {
      s = s.slice(2);
      re = /^[0-9a-fA-F]+$/;
      radix = 16;
    } else if (/^0[0-7]/.test(s)) {
      re = /^[0-7]+$/;
      radix = 8;
    }
  }
  if (!re.test(s)) fail('EINVAL');
  const v = parseInt(s, radix);
  if (!Number.isSafeInteger(v)) fail('ERANGE');
  return v;
}

/** kstrtoull_from_user() in base 10: an unsigned 64-bit integer and one optional newline (EINVAL; ERANGE past 64 bits). */
export function parseU64(data: Buffer | string): bigint {
  let s = typeof data === 'string' ? data : data.toString('latin1');
  if (s.endsWith('\n')) s = s.slice(0, -1);
  if (!/^\+?\d+$/.test(s)) fail('EINVAL');
  const v = BigInt(s);
  if (v >= 1n << 64n) fail('ERANGE');
  return v;
}

/** A file showing one number, and setting it from a write (tracing_on and the like). */
export function ulongFile(get: () => number, set: (v: number, f: OpenFile) => void): FileOps {
  return {
    ...seqRead(() => `${get()}\n`),
    write(f, data) {
      set(parseUlong(data), f);
      return data.length;
    },
  };
}
