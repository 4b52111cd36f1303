/** traceprobe_update_arg(): resolve `@symbol[+-off]` arguments when a probe registers. */
import type { KRet } from './parse_context.js';
import type { ProbeEnv } from './probe_env.js';
import type { ProbeArg } from './parse_context.js';
import { kstrtol } from './kstr.js';

export function updateSymbolArgs(args: readonly ProbeArg[], env: ProbeEnv): KRet {
  for (const arg of args) {
    const code = arg.code;
    for (let i = 0; i < code.length && code[i].op !== 'END'; i++) {
      if (code[i].op !== 'NOP_SYMBOL') continue;
      if (code[i + 1]?.op !== 'IMM') return 'EINVAL';
      const data = code[i].data ?? '';
      const at = data.search(/[+-]/);
      let offset = 0n;
      if (at >= 0) {
        const r = kstrtol(data.slice(at));
        if (!r.ok) return r.err;
        offset = r.value;
      }
      const sym = env.kallsyms.lookupName(at >= 0 ? data.slice(0, at) : data);
      if (!sym) return 'ENOENT';
      code[i + 1].immediate = BigInt.asUintN(64, sym.addr + offset);
    }
  }
  return 0;
}
