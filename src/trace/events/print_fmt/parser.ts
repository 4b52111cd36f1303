/** Parses a `print fmt:` line into its format string and C argument expressions. */
import type { CType, Expr, PrintFmt } from './ast.js';
import { PrintFmtSyntaxError, type Token, tokenize } from './lexer.js';

/** Words that start a type name in a cast or sizeof. */
const TYPE_WORDS = new Set([
  'unsigned', 'signed', 'int', 'char', 'short', 'long', 'void', 'const', 'volatile', 'struct', 'enum', 'union',
  'bool', '_Bool', 'u8', 'u16', 'u32', 'u64', 's8', 's16', 's32', 's64', '__u8', '__u16', '__u32', '__u64',
  '__s8', '__s16', '__s32', '__s64', '__le16', '__le32', '__le64', '__be16', '__be32', '__be64', 'float', 'double',
]);

function isTypeStart(tok: Token, next: Token): boolean {
  if (tok.t !== 'id') return false;
  if (TYPE_WORDS.has(tok.v)) return true;
  // typedef names: foo_t, and any identifier directly followed by '*' or ')' in a parenthesis (a cast)
  return /_t$/.test(tok.v) && (next.t === 'op' && (next.v === ')' || next.v === '*'));
}

const BINARY: Array<string[]> = [
  ['||'],
  ['&&'],
  ['|'],
  ['^'],
  ['&'],
  ['==', '!='],
  ['<', '>', '<=', '>='],
  ['<<', '>>'],
  ['+', '-'],
  ['*', '/', '%'],
];

class Parser {
  private pos = 0;
  constructor(private readonly toks: Token[]) {}

  peek(o = 0): Token {
    return this.toks[Math.min(this.pos + o, this.toks.length - 1)];
  }

  next(): Token {
    return this.toks[this.pos++] ?? { t: 'eof' };
  }

  isOp(v: string, o = 0): boolean {
    const t = this.peek(o);
    return t.t === 'op' && t.v === v;
  }

  expectOp(v: string): void {
    if (!this.isOp(v)) throw new PrintFmtSyntaxError(`expected '${v}'`);
    this.pos++;
  }

  top(): PrintFmt {
    let fmt = '';
    if (this.peek().t !== 'str') throw new PrintFmtSyntaxError('no format string');
    while (this.peek().t === 'str') fmt += (this.next() as { v: string }).v;
    const args: Expr[] = [];
    while (this.isOp(',')) {
      this.pos++;
      args.push(this.assign());
    }
    if (this.peek().t !== 'eof') throw new PrintFmtSyntaxError('trailing tokens');
    return { fmt, args };
  }

  /** An argument: a conditional expression, or a brace list. */
  assign(): Expr {
    if (this.isOp('{')) return this.list();
    return this.cond();
  }

  list(): Expr {
    this.expectOp('{');
    const items: Expr[] = [];
    while (!this.isOp('}')) {
      items.push(this.assign());
      if (this.isOp(',')) this.pos++;
      else break;
    }
    this.expectOp('}');
    return { k: 'list', items };
  }

  cond(): Expr {
    const c = this.binary(0);
    if (!this.isOp('?')) return c;
    this.pos++;
    const a = this.assign();
    this.expectOp(':');
    const b = this.assign();
    return { k: 'cond', c, a, b };
  }

  binary(level: number): Expr {
    if (level >= BINARY.length) return this.unary();
    let l = this.binary(level + 1);
    for (;;) {
      const t = this.peek();
      if (t.t === 'op' && BINARY[level].includes(t.v)) {
        this.pos++;
        const r = this.binary(level + 1);
        l = { k: 'bin', op: t.v, l, r };
      } else return l;
    }
  }

  unary(): Expr {
    const t = this.peek();
    if (t.t === 'op' && ['!', '~', '-', '+', '*', '&'].includes(t.v)) {
      this.pos++;
      return { k: 'unary', op: t.v, e: this.unary() };
    }
    if (t.t === 'id' && t.v === 'sizeof') {
      this.pos++;
      if (this.isOp('(') && isTypeStart(this.peek(1), this.peek(2))) {
        this.pos++;
        const type = this.typeName();
        this.expectOp(')');
        return { k: 'sizeof', type };
      }
      return { k: 'sizeof', e: this.unary() };
    }
    if (this.isOp('(') && isTypeStart(this.peek(1), this.peek(2))) {
      this.pos++;
      const type = this.typeName();
      this.expectOp(')');
      return { k: 'cast', type, e: this.unary() };
    }
    return this.postfix();
  }

  typeName(): CType {
    const words: string[] = [];
    let ptr = 0;
    for (;;) {
      const t = this.peek();
      if (t.t === 'id') {
        if (t.v !== 'const' && t.v !== 'volatile') words.push(t.v);
        this.pos++;
      } else if (t.t === 'op' && t.v === '*') {
        ptr++;
        this.pos++;
      } else break;
    }
    return { base: words.join(' '), ptr };
  }

  postfix(): Expr {
    let e = this.primary();
    for (;;) {
      if (this.isOp('[')) {
        this.pos++;
        const index = this.cond();
        this.expectOp(']');
        e = { k: 'index', obj: e, index };
      } else if (this.isOp('->') || this.isOp('.')) {
        this.pos++;
        const n = this.next();
        if (n.t !== 'id') throw new PrintFmtSyntaxError('expected a member name');
        e = e.k === 'id' && e.name === 'REC' ? { k: 'rec', field: n.v } : { k: 'member', obj: e, name: n.v };
      } else if (this.isOp('(') && e.k === 'id') {
        this.pos++;
        const args: Expr[] = [];
        while (!this.isOp(')')) {
          args.push(this.assign());
          if (this.isOp(',')) this.pos++;
          else break;
        }
        this.expectOp(')');
        e = { k: 'call', fn: e.name, args };
      } else return e;
    }
  }

  primary(): Expr {
    const t = this.next();
    switch (t.t) {
      case 'num':
        return { k: 'num', v: t.v, unsigned: t.unsigned, long: t.long };
      case 'str': {
        let v = t.v;
        while (this.peek().t === 'str') v += (this.next() as { v: string }).v;
        return { k: 'str', v };
      }
      case 'id':
        return { k: 'id', name: t.v };
      case 'op':
        if (t.v === '(') {
          if (this.isOp('{')) return this.block();
          const e = this.cond();
          // The comma operator inside parentheses: keep the last value.
          let last = e;
          while (this.isOp(',')) {
            this.pos++;
            last = this.assign();
          }
          this.expectOp(')');
          return last;
        }
        break;
    }
    throw new PrintFmtSyntaxError('unexpected token');
  }

  /** After `({`: declarations with initializers, then the value expression, then `})`. */
  block(): Expr {
    this.expectOp('{');
    const vars: Array<{ name: string; type: CType; e: Expr }> = [];
    for (;;) {
      if (isTypeStart(this.peek(), this.peek(1)) && this.peek(1).t === 'id') {
        const type = this.typeName();
        const last = type.base.split(' ');
        const name = last.pop()!;
        type.base = last.join(' ');
        this.expectOp('=');
        vars.push({ name, type, e: this.cond() });
        this.expectOp(';');
        continue;
      }
      const result = this.cond();
      this.expectOp(';');
      this.expectOp('}');
      this.expectOp(')');
      return { k: 'block', vars, result };
    }
  }
}

export function parsePrintFmt(src: string): PrintFmt {
  return new Parser(tokenize(src)).top();
}
