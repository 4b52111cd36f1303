/**
 * Where an emulated kernel's symbols and types come from: the built-in
 * model of the series (default), or a provider (the machine's running
 * kernel: src/host/symbols.ts).
 */
import type { Btf } from './btf.js';
import { CallSites } from './call_sites.js';
import { InsnModel } from './insn_model.js';
import { KprobeBlacklist } from './kprobe_blacklist.js';
import { profileOf, type Series } from './series.js';
import type { KallsymsTable } from './symbol_table.js';
import { builtinBtf, builtinCallSites, builtinText, builtinKprobeBlacklist, builtinModuleBtf, builtinSymbols } from './symbols_builtin.js';

/** Symbols and types of another kernel than the built-in models (the machine's: `hostSymbolSource`). */
export interface SymbolProvider {
  symbols(): KallsymsTable;
  types(): Btf;
  /** A loaded module's BTF (split on vmlinux's), if it has one. */
  moduleTypes(module: string): Btf | undefined;
  /** The kprobe blacklist's text (debugfs kprobes/blacklist), '' if unknown. */
  kprobeBlacklist(): string;
}

export type SymbolSource = 'builtin' | SymbolProvider;

/** The series whose data the built-in model uses (its profile's dataSeries). */
function modelSeries(series: Series): Series {
  return profileOf(series).dataSeries;
}

export function loadSymbols(source: SymbolSource, series: Series): KallsymsTable {
  return source === 'builtin' ? builtinSymbols(modelSeries(series)) : source.symbols();
}

export function loadTypes(source: SymbolSource, series: Series): Btf {
  return source === 'builtin' ? builtinBtf(modelSeries(series)) : source.types();
}

/** The BTF of a loaded module (split on vmlinux's), as /sys/kernel/btf/<module>. */
export function loadModuleTypes(source: SymbolSource, series: Series, module: string): Btf | undefined {
  return source === 'builtin' ? builtinModuleBtf(modelSeries(series), module) : source.moduleTypes(module);
}

const insnModels = new Map<string | SymbolProvider, InsnModel>();
/** Per symbol data (shared by every kernel's view of it). */
const callSites = new WeakMap<object, CallSites>();

/** Instruction boundaries inside functions (for kprobes at func+offs); one per model, shared. */
export function loadInsnModel(source: SymbolSource, series: Series): InsnModel {
  const key = source === 'builtin' ? modelSeries(series) : source;
  let m = insnModels.get(key);
  if (!m) {
    const load = source === 'builtin' ? builtinText(modelSeries(series)) : undefined;
    const start = load && builtinSymbols(modelSeries(series)).lookupName('_stext', '')?.addr;
    insnModels.set(key, (m = new InsnModel(load && start !== undefined ? { start, load } : undefined)));
  }
  return m;
}

const blacklists = new Map<string | SymbolProvider, KprobeBlacklist>();

export function loadKprobeBlacklist(source: SymbolSource, series: Series): KprobeBlacklist {
  const key = source === 'builtin' ? modelSeries(series) : source;
  let b = blacklists.get(key);
  if (!b) blacklists.set(key, (b = new KprobeBlacklist(source === 'builtin' ? builtinKprobeBlacklist(modelSeries(series)) : source.kprobeBlacklist())));
  return b;
}

/** Return offsets of calls: the real kernel's for the built-in model, modelled for a provider's. */
export function loadCallSites(source: SymbolSource, series: Series, symbols: KallsymsTable, insns: InsnModel): CallSites {
  let c = callSites.get(symbols.shared);
  if (!c) callSites.set(symbols.shared, (c = new CallSites(symbols, insns, source === 'builtin' ? builtinCallSites(modelSeries(series)) : undefined)));
  return c;
}
