/**
 * Where a kprobe event may go, as the real kernel decides it for
 * `p[:name] SYMBOL[+OFFS]` / `p ADDRESS`: the checks of trace_kprobe's
 * registration, register_kprobe() and x86's arch_prepare_kprobe(), in their
 * order, over the emulated kernel's symbols, instruction model and kprobe
 * blacklist. Checked against the real 7.2 and 6.12 kernels on the first 600
 * `t` symbols of kallsyms at +0 and +5 (test/unit/kprobe-site.test.ts).
 *
 * Name resolution (unknown symbol, non-unique symbol, `module:symbol`) is the
 * probe parser's business and is done before this.
 */
import { ENDBR64_LEN, type InsnModel } from './insn_model.js';
import type { KprobeBlacklist } from './kprobe_blacklist.js';
import type { KallsymsTable } from './symbol_table.js';
import type { KernelFunction } from './symbols.js';

interface KprobeSiteOk {
  ok: true;
  /** Where the breakpoint goes: after endbr64 for an entry probe on a function that has one. */
  addr: bigint;
  fn: KernelFunction;
  /** Offset of `addr` in `fn`. */
  offset: number;
  /** The probe is on the function's entry (offset 0, or 4 after endbr64): what kretprobes need. */
  onFuncEntry: boolean;
  /** The address is the function's __fentry__ call: the kprobe runs through ftrace (KPROBE_FLAG_FTRACE). */
  ftrace: boolean;
}

interface KprobeSiteErr {
  ok: false;
  errno: 'EINVAL' | 'EILSEQ' | 'ENOENT';
  /** Which check refused it. */
  why: 'notrace' | 'no-symbol' | 'not-text' | 'blacklist' | 'reserved' | 'cfi-preamble' | 'insn-boundary';
}

export type KprobeSite = KprobeSiteOk | KprobeSiteErr;

interface KprobeSiteDeps {
  symbols: KallsymsTable;
  insns: InsnModel;
  kprobeBlacklist: KprobeBlacklist;
}

/**
 * @param addr the symbol's address plus the offset (what the probe names)
 * @param notraceCheck trace_kprobe refuses functions without an ftrace
 *   location (CONFIG_KPROBE_EVENTS_ON_NOTRACE is off in Debian's kernels);
 *   register_kprobe() alone does not
 */
export function kprobeSite(k: KprobeSiteDeps, addr: bigint, notraceCheck = true): KprobeSite {
  const t = k.symbols;
  const hit = t.lookup(addr);
  if (!hit) return { ok: false, errno: 'ENOENT', why: 'no-symbol' };
  const fn = functionOf(t, hit.sym.name, hit.sym.addr);

  if (notraceCheck && withinNotraceFunc(t, fn, hit.sym.name)) return { ok: false, errno: 'EINVAL', why: 'notrace' };

  // arch_adjust_kprobe_addr(): an entry probe skips endbr64.
  let offset = hit.offset;
  let onFuncEntry = offset === 0;
  if (fn && k.insns.hasEndbr(fn)) {
    onFuncEntry = offset === 0 || offset === ENDBR64_LEN;
    if (onFuncEntry) offset = ENDBR64_LEN;
  }
  const at = hit.sym.addr + BigInt(offset);

  if (!fn || !isText(t, at)) return { ok: false, errno: 'EINVAL', why: 'not-text' };
  if (k.kprobeBlacklist.contains(at)) return { ok: false, errno: 'EINVAL', why: 'blacklist' };
  // jump label, static call and BUG() sites
  if (k.insns.reserved(fn, offset)) return { ok: false, errno: 'EINVAL', why: 'reserved' };
  if (fn.name.startsWith('__pfx_') || fn.name.startsWith('__cfi_')) return { ok: false, errno: 'EINVAL', why: 'cfi-preamble' };
  if (!k.insns.isInsnBoundary(fn, offset)) return { ok: false, errno: 'EILSEQ', why: 'insn-boundary' };
  return { ok: true, addr: at, fn, offset, onFuncEntry, ftrace: fn.traceable && offset === fn.fentryOffset };
}

/** The function object of the symbol at (name, addr), if it is a text symbol. */
function functionOf(t: KallsymsTable, name: string, addr: bigint): KernelFunction | undefined {
  return t.byName(name).find((f) => f.addr === addr);
}

/**
 * No ftrace location in the function: trace_kprobe refuses it. A suffixed
 * local copy (`foo.isra.0`) is allowed when `foo` itself is traceable.
 */
function withinNotraceFunc(t: KallsymsTable, fn: KernelFunction | undefined, name: string): boolean {
  if (fn?.traceable) return false;
  const dot = name.indexOf('.');
  if (dot < 0) return true;
  const base = t.lookupName(name.slice(0, dot));
  if (!base) return true;
  const baseFn = functionOf(t, base.name, base.addr);
  return !baseFn?.traceable;
}

/** core_kernel_text() or a module's text. */
function isText(t: KallsymsTable, addr: bigint): boolean {
  const s = t.lookupName('_stext', '');
  const e = t.lookupName('_etext', '');
  if (s && e && addr >= s.addr && addr < e.addr) return true;
  return t.modules.some((m) => m.regions.some((r) => r.kind === 'text' && addr >= r.start && addr < r.start + BigInt(r.size)));
}
