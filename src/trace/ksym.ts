/**
 * Printing kernel addresses the way the trace output does (%ps / %pS with the
 * sym-offset and sym-addr options), through the kernel's symbol table when it
 * has one, else through the few symbols this layer itself records addresses of.
 */
import type { Kernel } from '../kernel/kernel.js';
import type { Series } from '../kernel/series.js';
import type { KernelSymbol, SymbolLookup, SymbolTable } from '../kernel/symbols.js';

/** The symbol table of a kernel, when one is attached (`kernel.symbols`). */
export function symbolTableOf(kernel: Kernel): SymbolTable | undefined {
  return (kernel as unknown as { symbols?: SymbolTable }).symbols;
}

/** Where the writers of ftrace/print and ftrace/raw_data sit when the kernel has no symbol table. */
const FALLBACK: Record<Series, KernelSymbol[]> = {
  '7.2': [
    { name: 'tracing_mark_raw_write', addr: 0xffffffff81555fc0n, size: 0x150, type: 't' },
    { name: 'tracing_mark_write', addr: 0xffffffff81556120n, size: 0x180, type: 't' },
    { name: 'tracing_snapshot_instance_cond', addr: 0xffffffff8155de90n, size: 0x130, type: 't' },
  ],
  '6.12': [
    { name: 'tracing_mark_raw_write', addr: 0xffffffff812375a0n, size: 0x170, type: 't' },
    { name: 'tracing_mark_write', addr: 0xffffffff81237720n, size: 0x280, type: 't' },
    { name: 'tracing_snapshot_instance_cond', addr: 0xffffffff81237b80n, size: 0x160, type: 't' },
  ],
};

/** Offset of the ip tracing_mark_write() records (its _THIS_IP_) from its start. */
const MARK_WRITE_IP_OFFSET: Record<Series, bigint> = { '7.2': 0x81n, '6.12': 0xdfn };

export function lookupSymbol(kernel: Kernel, addr: bigint): SymbolLookup | undefined {
  const table = symbolTableOf(kernel);
  if (table) return table.lookup(addr);
  for (const sym of FALLBACK[kernel.series]) {
    if (addr >= sym.addr && addr < sym.addr + BigInt(sym.size)) return { sym, offset: Number(addr - sym.addr) };
  }
  return undefined;
}

/** Address of a function by name (first match), undefined when unknown. */
export function symbolAddress(kernel: Kernel, name: string): bigint | undefined {
  const table = symbolTableOf(kernel);
  if (table) return table.byName(name)[0]?.addr;
  return FALLBACK[kernel.series].find((s) => s.name === name)?.addr;
}

/** The ip a trace_marker write records. */
export function markWriteIp(kernel: Kernel): bigint {
  return (symbolAddress(kernel, 'tracing_mark_write') ?? 0n) + MARK_WRITE_IP_OFFSET[kernel.series];
}

export interface SymFlags {
  symOffset: boolean;
  symAddr: boolean;
}

/** seq_print_ip_sym(): `name`, `name+0xoff/0xsize`, then ` <addr>` with sym-addr. */
export function printIpSym(kernel: Kernel, ip: bigint, flags: SymFlags): string {
  if (ip === 0n) return '0';
  const hit = lookupSymbol(kernel, ip);
  let s: string;
  if (hit) {
    s = hit.sym.name;
    if (flags.symOffset) {
      s += `+0x${hit.offset.toString(16)}/0x${hit.sym.size.toString(16)}`;
      if (hit.sym.module) s += ` [${hit.sym.module}]`;
    }
  } else {
    s = `0x${ip.toString(16).padStart(8, '0')}`;
  }
  if (flags.symAddr) s += ` <${ip.toString(16).padStart(16, '0')}>`;
  return s;
}
