/**
 * print_function_args() (FUNCTION_TRACE_ARGS, 7.x): the argument registers
 * saved with a function or graph-entry record, named and formatted after
 * the function's BTF prototype: `(file=0xff..., count=0x400, ...)`.
 */
import { BtfError } from '../../kernel/btf.js';
import type { Kernel } from '../../kernel/kernel.js';
import { resolveType, type CType } from '../../kernel/ctypes.js';

const MAX_ARGS = 6;

/** `(name=value, ...)` for the arguments `args` of the function at `ip`; `()` when unknown. */
export function printFunctionArgs(kernel: Kernel, args: readonly bigint[], ip: bigint): string {
  let s = '(';
  const hit = kernel.symbols.lookup(ip);
  const proto = hit ? safeProto(kernel, hit.sym.name) : undefined;
  if (!proto) return s + ')';
  let a = 0;
  for (let p = 0; p < proto.params.length; a++, p++) {
    if (p) s += ', ';
    if (a === MAX_ARGS) {
      s += '...';
      break;
    }
    const arg = args[a];
    const param = proto.params[p];
    if (param.name) s += `${param.name}=`;
    const t = resolveType(param.type as CType);
    switch (t.kind) {
      case 'void':
        s += `?0x${arg.toString(16)}`;
        break;
      case 'ptr':
        s += `0x${arg.toString(16)}`;
        break;
      case 'int':
        s += t.signed ? BigInt.asIntN(64, arg).toString() : `0x${arg.toString(16)}`;
        break;
      case 'enum':
        s += BigInt.asIntN(64, arg).toString();
        break;
      default: {
        // Arguments passed by value in several registers.
        const size = 'size' in t ? t.size : 8;
        s += `(${t.kind})[0x${arg.toString(16)}`;
        let cut = false;
        for (let x = 8; x < size; x += 8) {
          s += ':';
          if (++a === MAX_ARGS) {
            s += '...]';
            cut = true;
            break;
          }
          s += `0x${args[a].toString(16)}`;
        }
        if (cut) return s + ')';
        s += ']';
      }
    }
  }
  return s + ')';
}

function safeProto(kernel: Kernel, name: string) {
  try {
    return kernel.types.funcProto(name);
  } catch (e) {
    if (!(e instanceof BtfError)) throw e;
    return undefined;
  }
}
