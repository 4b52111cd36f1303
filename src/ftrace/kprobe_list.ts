/**
 * /sys/kernel/debug/kprobes/list (kprobes.c show_kprobe_addr()): one line per
 * probe, in kprobe hash-table order, the probes of an aggregate newest first:
 * `ADDRESS  TYPE  SYMBOL+0xOFFS  MODULE FLAGS`, where TYPE is `k` or `r`
 * (kretprobe), the module column is a space for vmlinux, and the flags are
 * [GONE], [DISABLED], [OPTIMIZED], [FTRACE].
 */
import type { KallsymsTable } from '../kernel/symbol_table.js';
import { AggrKprobe, KPROBE_FLAG_DISABLED, KPROBE_FLAG_FTRACE, KPROBE_FLAG_GONE, KPROBE_FLAG_OPTIMIZED, type Kprobe, type KprobeSlot } from './kprobe.js';

function line(symbols: KallsymsTable, p: Kprobe, pp: KprobeSlot): string {
  const addr = p.addr.toString(16).padStart(16, '0');
  const type = p.kretprobe ? 'r' : 'k';
  const l = symbols.lookup(p.addr);
  let s = l ? `${addr}  ${type}  ${l.sym.name}+0x${l.offset.toString(16)}  ${l.sym.module ?? ' '} ` : `${addr}  ${type}  0x${p.addr.toString(16)} `;
  if (p.flags & KPROBE_FLAG_GONE) s += '[GONE]';
  if (p.flags & KPROBE_FLAG_DISABLED && !(p.flags & KPROBE_FLAG_GONE)) s += '[DISABLED]';
  if (pp.flags & KPROBE_FLAG_OPTIMIZED) s += '[OPTIMIZED]';
  if (pp.flags & KPROBE_FLAG_FTRACE) s += '[FTRACE]';
  return s + '\n';
}

export function renderKprobeList(symbols: KallsymsTable, slots: Iterable<KprobeSlot>): string {
  let out = '';
  for (const s of slots) {
    if (s instanceof AggrKprobe) for (const p of s.list) out += line(symbols, p, s);
    else out += line(symbols, s, s);
  }
  return out;
}
