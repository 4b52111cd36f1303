/**
 * Where a `sym+offs` / address kprobe lands, as the parser asks before
 * registration (_kprobe_addr(), kprobe_on_func_entry()): the containing
 * function and whether the probe is on its entry (endbr64 moves the entry
 * to +4). Registration itself is kernel/kprobe_site.ts's.
 */
import type { ErrnoName } from '../../kernel/errno.js';
import type { KsymView, ProbeEnv } from './probe_env.js';

interface KprobeAddr {
  /** The probed address (symbol start + adjusted offset). */
  addr: bigint;
  sym: KsymView;
  offset: number;
  onFuncEntry: boolean;
}

/** _kprobe_addr(): `sym+off` or an address, as function start + offset. */
function kprobeAddr(env: ProbeEnv, addr: bigint | undefined, symbol: string | undefined, offset: number): KprobeAddr | ErrnoName {
  const hasAddr = addr !== undefined && addr !== 0n;
  if ((symbol && hasAddr) || (!symbol && !hasAddr)) return 'EINVAL';
  let a: bigint;
  if (symbol) {
    const s = env.kallsyms.lookupName(symbol);
    if (!s) return 'ENOENT';
    a = s.addr;
  } else {
    a = addr!;
  }
  a = BigInt.asUintN(64, a + BigInt(offset));
  const sym = env.kallsyms.lookupAddr(a);
  if (!sym) return 'ENOENT';
  let off = Number(a - sym.addr);
  const fn = env.kallsyms.functionAt(sym.addr);
  let onFuncEntry: boolean;
  if (fn?.endbr) {
    onFuncEntry = off === 0 || off === 4;
    if (onFuncEntry) off = 4;
  } else {
    onFuncEntry = off === 0;
  }
  return { addr: sym.addr + BigInt(off), sym, offset: off, onFuncEntry };
}

/** kprobe_on_func_entry(): 0, EINVAL (not at the entry) or ENOENT. */
export function kprobeOnFuncEntry(env: ProbeEnv, addr: bigint | undefined, symbol: string | undefined, offset: number): 0 | ErrnoName {
  const r = kprobeAddr(env, addr, symbol, offset);
  if (typeof r === 'string') return r;
  return r.onFuncEntry ? 0 : 'EINVAL';
}
