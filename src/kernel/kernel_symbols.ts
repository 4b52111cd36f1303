/**
 * Where an emulated kernel's symbols and types come from: the built-in
 * model of the series (default), or the machine's running kernel.
 */
import type { Btf } from './btf.js';
import { InsnModel } from './insn_model.js';
import { KprobeBlacklist } from './kprobe_blacklist.js';
import type { Series } from './series.js';
import type { KallsymsTable } from './symbol_table.js';
import { builtinBtf, builtinInsnBoundaries, builtinKprobeBlacklist, builtinModuleBtf, builtinSymbols, hasBuiltinSeries } from './symbols_builtin.js';
import { hostBtfDb, hostKprobeBlacklist, hostModuleBtf, hostSymbols } from './symbols_host.js';

export type SymbolSource = 'builtin' | 'host';

export const SYMBOL_SOURCES: readonly SymbolSource[] = ['builtin', 'host'];

/** The series whose data the built-in model uses: its own if shipped, else 7.2's. */
export function modelSeries(series: Series): Series {
  return hasBuiltinSeries(series) ? series : '7.2';
}

export function loadSymbols(source: SymbolSource, series: Series): KallsymsTable {
  return source === 'host' ? hostSymbols() : builtinSymbols(modelSeries(series));
}

export function loadTypes(source: SymbolSource, series: Series): Btf {
  return source === 'host' ? hostBtfDb() : builtinBtf(modelSeries(series));
}

/** The BTF of a loaded module (split on vmlinux's), as /sys/kernel/btf/<module>. */
export function loadModuleTypes(source: SymbolSource, series: Series, module: string): Btf | undefined {
  return source === 'host' ? hostModuleBtf(module) : builtinModuleBtf(modelSeries(series), module);
}

/** Instruction boundaries inside functions (for kprobes at func+offs). */
export function loadInsnModel(source: SymbolSource, series: Series): InsnModel {
  return new InsnModel(source === 'host' ? new Map() : builtinInsnBoundaries(modelSeries(series)));
}

export function loadKprobeBlacklist(source: SymbolSource, series: Series): KprobeBlacklist {
  return new KprobeBlacklist(source === 'host' ? hostKprobeBlacklist() : builtinKprobeBlacklist(modelSeries(series)));
}
