/** Tokens of an event's `print fmt:` (a C format string and C argument expressions). */

export type Token =
  | { t: 'str'; v: string }
  | { t: 'num'; v: bigint; unsigned: boolean; long: boolean }
  | { t: 'id'; v: string }
  | { t: 'op'; v: string }
  | { t: 'eof' };

const OPS = ['->', '<<', '>>', '<=', '>=', '==', '!=', '&&', '||', '(', ')', '{', '}', '[', ']', ',', '?', ':', '.', '+', '-', '*', '/', '%', '<', '>', '&', '|', '^', '!', '~', '=', ';'];

const ESC: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", a: '\x07', b: '\b', f: '\f', v: '\v', '0': '\0', e: '\x1b' };

export class PrintFmtSyntaxError extends Error {}

export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let s = '';
      i++;
      while (i < n && src[i] !== c) {
        if (src[i] === '\\' && i + 1 < n) {
          const e = src[i + 1];
          if (e === 'x') {
            const m = /^[0-9a-fA-F]{1,2}/.exec(src.slice(i + 2));
            s += String.fromCharCode(m ? parseInt(m[0], 16) : 0);
            i += 2 + (m ? m[0].length : 0);
            continue;
          }
          if (e >= '0' && e <= '7') {
            const m = /^[0-7]{1,3}/.exec(src.slice(i + 1))!;
            s += String.fromCharCode(parseInt(m[0], 8));
            i += 1 + m[0].length;
            continue;
          }
          s += ESC[e] ?? e;
          i += 2;
          continue;
        }
        s += src[i++];
      }
      if (i >= n) throw new PrintFmtSyntaxError('unterminated string');
      i++;
      if (c === "'") out.push({ t: 'num', v: BigInt(s.charCodeAt(0) || 0), unsigned: false, long: false });
      else out.push({ t: 'str', v: s });
      continue;
    }
    if (c >= '0' && c <= '9') {
      const m = /^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([uUlL]*)/.exec(src.slice(i))!;
      let text = m[1];
      let v: bigint;
      if (/^0[xX]/.test(text)) v = BigInt(text);
      else if (text.length > 1 && text[0] === '0') v = BigInt('0o' + text.slice(1));
      else v = BigInt(text);
      const suf = m[2].toLowerCase();
      out.push({ t: 'num', v, unsigned: suf.includes('u'), long: suf.includes('l') });
      i += m[0].length;
      text = '';
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_]/.test(src[j])) j++;
      out.push({ t: 'id', v: src.slice(i, j) });
      i = j;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new PrintFmtSyntaxError(`unexpected '${c}'`);
    out.push({ t: 'op', v: op });
    i += op.length;
  }
  out.push({ t: 'eof' });
  return out;
}
