/**
 * C declarations of BTF types, as a C programmer (and the kernel's BTF
 * dumpers) would write them: `struct file *file`, `char *(*fn)(int)`,
 * `const char *const *argv`.
 */
import type { CType, FuncProto } from './ctypes.js';

/** The declaration of `name` with type `t` ('' for an abstract declarator: just the type). */
export function declText(t: CType, name = ''): string {
  return decl(t, name).trim();
}

/** A prototype written as `ret name(type a, type b)`. */
export function protoText(proto: FuncProto, name: string): string {
  return declText(proto.ret, `${name}(${paramsText(proto)})`);
}

function paramsText(p: FuncProto): string {
  const parts = p.params.map((x) => declText(x.type, x.name));
  if (p.variadic) parts.push('...');
  return parts.length ? parts.join(', ') : 'void';
}

function decl(t: CType, inner: string): string {
  switch (t.kind) {
    case 'void':
      return join('void', inner);
    case 'int':
    case 'float':
      return join(t.name, inner);
    case 'struct':
    case 'union':
    case 'enum':
      return join(`${t.kind} ${t.name || '(anon)'}`, inner);
    case 'typedef':
      return join(t.name, inner);
    case 'ptr': {
      const target = t.target;
      const star = `*${inner}`;
      return decl(target, needsParens(target) ? `(${star})` : star);
    }
    case 'array':
      return decl(t.elem, `${inner}[${t.len}]`);
    case 'func':
      return decl(t.proto.ret, `${inner}(${paramsText(t.proto)})`);
    case 'type_tag':
      return decl(t.target, inner);
    case 'const':
    case 'volatile':
    case 'restrict': {
      // A qualified pointer is written after its star; anything else before its type.
      if (t.target.kind === 'ptr') return decl(t.target, ` ${t.kind}${inner ? ` ${inner.trimStart()}` : ''}`);
      return `${t.kind} ${decl(t.target, inner)}`;
    }
  }
}

function needsParens(target: CType): boolean {
  let t = target;
  while (t.kind === 'type_tag') t = t.target;
  return t.kind === 'array' || t.kind === 'func';
}

function join(base: string, inner: string): string {
  return inner ? `${base} ${inner}` : base;
}
