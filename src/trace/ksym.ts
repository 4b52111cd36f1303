/**
 * Printing kernel addresses the way the trace output does (seq_print_ip_sym()
 * with the sym-offset and sym-addr options), through the kernel's symbols.
 */
import type { Kernel } from '../kernel/kernel.js';
import type { SymbolLookup } from '../kernel/symbols.js';

/** Address of a function by name (first match), undefined when unknown. */
export function symbolAddress(kernel: Kernel, name: string): bigint | undefined {
  return kernel.symbols.byName(name)[0]?.addr;
}

/** The ip a trace_marker write records: tracing_mark_write()'s _THIS_IP_. */
export function markWriteIp(kernel: Kernel): bigint {
  return (symbolAddress(kernel, 'tracing_mark_write') ?? 0n) + kernel.profile.markWriteIpOffset;
}

interface SymFlags {
  symOffset: boolean;
  symAddr: boolean;
}

/**
 * seq_print_ip_sym(): `name` (no module), or `name+0xoff/0xsize [module]`
 * with sym-offset, then ` <address>` with sym-addr; `0x…` when no symbol
 * holds the address, `0` for a null one.
 */
export function printIpSym(kernel: Kernel, ip: bigint, flags: SymFlags): string {
  if (ip === 0n) return '0';
  return printSymbolHit(kernel.symbols.lookup(ip), ip, flags.symOffset, flags.symAddr);
}

/** printIpSym() of a non-null address already looked up. */
export function printSymbolHit(hit: SymbolLookup | undefined, ip: bigint, symOffset: boolean, symAddr: boolean): string {
  let s: string;
  if (hit) {
    s = hit.sym.name;
    if (symOffset) {
      s += `+0x${hit.offset.toString(16)}/0x${hit.sym.size.toString(16)}`;
      if (hit.sym.module) s += ` [${hit.sym.module}]`;
    }
  } else {
    s = `0x${ip.toString(16).padStart(8, '0')}`;
  }
  if (symAddr) s += ` <${ip.toString(16).padStart(16, '0')}>`;
  return s;
}
