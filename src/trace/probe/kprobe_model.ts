/**
 * Whether a kprobe can be placed (kernel/kprobes.c register_kprobe() and the
 * x86 pieces it calls): address canonicalization, function-entry detection
 * with endbr64, the kprobe blacklist, the ftrace site and instruction
 * boundaries. Also trace_kprobe's notrace-function check.
 */
import type { ErrnoName } from '../../kernel/errno.js';
import type { KfuncView, KsymView, ProbeEnv } from './probe_env.js';

/** x86 `call __fentry__` is 5 bytes. */
const MCOUNT_INSN_SIZE = 5;

export interface KprobeAddr {
  /** The probed address (symbol start + adjusted offset). */
  addr: bigint;
  /** The symbol containing it and the offset in it. */
  sym: KsymView;
  offset: number;
  onFuncEntry: boolean;
}

/** _kprobe_addr(): `sym+off` or an address, re-expressed as function start + offset; endbr64 moves entry to +4. */
export function kprobeAddr(env: ProbeEnv, addr: bigint | undefined, symbol: string | undefined, offset: number): KprobeAddr | ErrnoName {
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
  const endbr = fn !== undefined && fn.addr === sym.addr && fn.fentryOffset === 4;
  let onFuncEntry: boolean;
  if (endbr) {
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

/** x86 can_probe(): is `off` an instruction boundary of `fn`. */
function canProbe(env: ProbeEnv, fn: KfuncView | undefined, off: number): boolean {
  if (!fn || off === 0) return true;
  const f = fn.fentryOffset;
  if (off < f) return false;
  if (off === f) return true;
  if (fn.traceable && off < f + MCOUNT_INSN_SIZE) return false;
  if (fn.traceable && off === f + MCOUNT_INSN_SIZE) return true;
  return env.kprobes.insnBoundary?.(fn, off) ?? true;
}

/** register_kprobe(): 0 or the errno; `probed` receives the canonical address. */
export function registerKprobe(env: ProbeEnv, addr: bigint | undefined, symbol: string | undefined, offset: number): KprobeAddr | ErrnoName {
  const r = kprobeAddr(env, addr, symbol, offset);
  if (typeof r === 'string') return r;
  const { sym } = r;
  // check_kprobe_address_safe(): kernel text only, nothing reserved
  if (!/^[tT]$/.test(sym.type)) return 'EINVAL';
  if (env.kprobes.blacklisted(sym) || sym.name.startsWith('__cfi_') || sym.name.startsWith('__pfx_')) return 'EINVAL';
  const fn = env.kallsyms.functionAt(sym.addr);
  // on the ftrace site the probe rides ftrace and the instruction is not decoded
  const ftraceSite = fn !== undefined && fn.traceable && r.offset === fn.fentryOffset;
  if (!ftraceSite && !canProbe(env, fn, r.offset)) return 'EILSEQ';
  return r;
}

/** register_kretprobe(): the entry check comes first. */
export function registerKretprobe(env: ProbeEnv, addr: bigint | undefined, symbol: string | undefined, offset: number): KprobeAddr | ErrnoName {
  const e = kprobeOnFuncEntry(env, addr, symbol, offset);
  if (e) return e;
  return registerKprobe(env, addr, symbol, offset);
}

/** __within_notrace_func(): the function holding `addr` has no ftrace site. */
function withinNotraceAddr(env: ProbeEnv, addr: bigint): boolean {
  if (!addr) return false;
  const sym = env.kallsyms.lookupAddr(addr);
  if (!sym) return false;
  const fn = env.kallsyms.functionAt(sym.addr);
  return !(fn && fn.addr === sym.addr && fn.traceable);
}

/** within_notrace_func(): a `foo.cold`-style part is judged by `foo`. */
export function withinNotraceFunc(env: ProbeEnv, addr: bigint): boolean {
  if (!withinNotraceAddr(env, addr)) return false;
  const sym = env.kallsyms.lookupAddr(addr);
  if (sym) {
    const dot = sym.name.indexOf('.');
    if (dot < 0) return true;
    const base = env.kallsyms.lookupName(sym.name.slice(0, dot));
    if (base) return withinNotraceAddr(env, base.addr);
  }
  return true;
}
