/**
 * Where an emulated kernel's symbols and types come from: the built-in
 * model of the series (default), or the machine's running kernel.
 */
import type { Btf } from './btf.js';
import { CallSites } from './call_sites.js';
import { InsnModel } from './insn_model.js';
import { KprobeBlacklist } from './kprobe_blacklist.js';
import { profileOf, type Series } from './series.js';
import type { KallsymsTable } from './symbol_table.js';
import { builtinBtf, builtinCallSites, builtinInsnBoundaries, builtinKprobeBlacklist, builtinModuleBtf, builtinSymbols } from './symbols_builtin.js';
import { hostBtfDb, hostKprobeBlacklist, hostModuleBtf, hostSymbols } from './symbols_host.js';

export type SymbolSource = 'builtin' | 'host';

export const SYMBOL_SOURCES: readonly SymbolSource[] = ['builtin', 'host'];

/** The series whose data the built-in model uses (its profile's dataSeries). */
export function modelSeries(series: Series): Series {
  return profileOf(series).dataSeries;
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

const insnModels = new Map<string, InsnModel>();
const callSites = new WeakMap<KallsymsTable, CallSites>();

/** Instruction boundaries inside functions (for kprobes at func+offs); one per model, shared. */
export function loadInsnModel(source: SymbolSource, series: Series): InsnModel {
  const key = source === 'host' ? 'host' : modelSeries(series);
  let m = insnModels.get(key);
  if (!m) insnModels.set(key, (m = new InsnModel(source === 'host' ? new Map() : builtinInsnBoundaries(modelSeries(series)))));
  return m;
}

const blacklists = new Map<string, KprobeBlacklist>();

export function loadKprobeBlacklist(source: SymbolSource, series: Series): KprobeBlacklist {
  const key = source === 'host' ? 'host' : modelSeries(series);
  let b = blacklists.get(key);
  if (!b) blacklists.set(key, (b = new KprobeBlacklist(source === 'host' ? hostKprobeBlacklist() : builtinKprobeBlacklist(modelSeries(series)))));
  return b;
}

/** Return offsets of calls: the real kernel's for the built-in model, modelled for the host. */
export function loadCallSites(source: SymbolSource, series: Series, symbols: KallsymsTable, insns: InsnModel): CallSites {
  let c = callSites.get(symbols);
  if (!c) callSites.set(symbols, (c = new CallSites(symbols, insns, source === 'host' ? undefined : builtinCallSites(modelSeries(series)))));
  return c;
}
