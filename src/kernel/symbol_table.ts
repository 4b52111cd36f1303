/**
 * The kernel's symbol table over the columnar symbol data: what kallsyms
 * answers (by name, by address with the symbol's size) and what ftrace
 * knows (traceable functions, their __fentry__ offsets), for vmlinux and
 * loaded modules alike. Shared by the built-in model and the machine's kernel (src/host/symbols.ts).
 */
import type { KernelFunction, KernelSymbol, SymbolLookup, SymbolTable } from './symbols.js';
import { addrDiff, addrOf, cmpAddr, type ModuleInfo, type SymbolColumns } from './symbol_data.js';

/** Addresses lookup() remembers before it starts over (a trace prints the same functions again and again). */
const LOOKUP_MEMO_MAX = 1 << 16;

const isTextType = (c: number): boolean => c === 0x74 /* t */ || c === 0x54 /* T */ || c === 0x77 /* w */ || c === 0x57; /* W */

/**
 * What every view of one symbol data shares (built once per model: 200,000
 * symbols): the columns, sizes, function objects and indexes.
 */
class SymbolCore {
  readonly functions: readonly KernelFunction[];
  /** Number of vmlinux symbols: they come first, sorted by address. */
  readonly nrVmlinux: number;
  readonly sizes: Float64Array;
  /** Function id of each symbol, -1 for data symbols. */
  readonly fnOfSym: Int32Array;
  /** Every traceable function, modules not loaded included, in available_filter_functions order. */
  readonly traceList: readonly KernelFunction[];
  readonly symObjs: (KernelSymbol | undefined)[];
  /** Module index (1-based, as `mods`) of each module that only loads later (`ModuleInfo.loadable`). */
  readonly loadable: readonly number[];
  private nameIndex?: Map<string, number | number[]>;
  /** Per module: its symbol indexes sorted by address. */
  private modSorted?: Uint32Array[];

  constructor(readonly cols: SymbolColumns) {
    const n = cols.names.length;
    let nv = 0;
    while (nv < n && cols.mods[nv] === 0) nv++;
    this.nrVmlinux = nv;
    for (let i = 1; i < nv; i++) {
      if (cmpAddr(cols, i, cols.addrHi[i - 1]!, cols.addrLo[i - 1]!) < 0) throw new Error(`kallsyms: vmlinux symbols not sorted at ${cols.names[i]}`);
    }
    this.sizes = computeSizes(cols, nv);
    this.symObjs = new Array(n);

    const fentry = new Int16Array(n).fill(-1);
    for (let i = 0; i < cols.traceable.length; i++) fentry[cols.traceable[i]!] = cols.fentry[i]!;

    const fns: KernelFunction[] = [];
    this.fnOfSym = new Int32Array(n).fill(-1);
    for (let i = 0; i < n; i++) {
      if (!isTextType(cols.types[i]!)) continue;
      const m = cols.mods[i]!;
      const fe = fentry[i]!;
      const fn = new Func(cols, i, fns.length, this.sizes[i]!, m ? cols.modules[m - 1]!.name : undefined, fe);
      this.fnOfSym[i] = fns.length;
      this.symObjs[i] = fn;
      fns.push(fn);
    }
    this.functions = fns;
    this.traceList = Array.from(cols.traceable, (s) => fns[this.fnOfSym[s]!]!);
    this.loadable = cols.modules.flatMap((m, k) => (m.loadable ? [k + 1] : []));
  }

  index(): Map<string, number | number[]> {
    if (this.nameIndex) return this.nameIndex;
    const m = new Map<string, number | number[]>();
    const names = this.cols.names;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const prev = m.get(name);
      if (prev === undefined) m.set(name, i);
      else if (typeof prev === 'number') m.set(name, [prev, i]);
      else prev.push(i);
    }
    this.nameIndex = m;
    return m;
  }

  moduleSorted(): Uint32Array[] {
    if (this.modSorted) return this.modSorted;
    this.modSorted = moduleIndexes(this.cols, this.nrVmlinux).map((l) => Uint32Array.from(l));
    return this.modSorted;
  }
}

/**
 * One kernel's kallsyms: the shared symbol data seen with that kernel's
 * modules. A module the data holds as `loadable` is there (its functions
 * have ids and ftrace records) but hidden until this kernel loads it.
 */
export class KallsymsTable implements SymbolTable {
  private readonly core: SymbolCore;
  /** Per module (0-based): 1 while a loadable module is not loaded here. */
  private readonly hidden: Uint8Array;
  /** Moves at every load and unload (what renderers cache by). */
  generation = 0;
  private visibleTrace?: readonly KernelFunction[];
  /** lookup()'s answers by address (null: no symbol there), until a module loads or unloads. */
  private readonly lookups = new Map<bigint, SymbolLookup | null>();

  constructor(data: SymbolColumns | KallsymsTable) {
    this.core = data instanceof KallsymsTable ? data.core : new SymbolCore(data);
    this.hidden = new Uint8Array(this.core.cols.modules.length);
    for (const m of this.core.loadable) this.hidden[m - 1] = 1;
  }

  /** A view of the same symbols for another kernel: its loadable modules not loaded. */
  view(): KallsymsTable {
    return new KallsymsTable(this);
  }

  /** Every function, modules not loaded included: ids never change. */
  get functions(): readonly KernelFunction[] {
    return this.core.functions;
  }

  /** Loaded modules. */
  get modules(): readonly ModuleInfo[] {
    return this.core.cols.modules.filter((_, k) => !this.hidden[k]);
  }

  get nrVmlinux(): number {
    return this.core.nrVmlinux;
  }

  /** Names of the loadable modules the data holds. */
  loadableModules(): string[] {
    return this.core.loadable.map((m) => this.core.cols.modules[m - 1]!.name);
  }

  /** Shows (or hides again) the symbols of a loadable module. */
  setLoaded(name: string, loaded: boolean): void {
    const m = this.core.loadable.find((k) => this.core.cols.modules[k - 1]!.name === name);
    if (m === undefined) throw new Error(`kallsyms: ${name} is not a loadable module`);
    this.hidden[m - 1] = loaded ? 0 : 1;
    this.visibleTrace = undefined;
    this.lookups.clear();
    this.generation++;
  }

  /** Whether symbol i is shown (vmlinux, or a module that is loaded). */
  visible(i: number): boolean {
    const m = this.core.cols.mods[i]!;
    return m === 0 || !this.hidden[m - 1];
  }

  /** Which loadable modules are loaded, as a key for what renders them. */
  get loadedKey(): string {
    return this.core.loadable.filter((m) => !this.hidden[m - 1]).join(',');
  }

  /** The shared data, for caches that hold across kernels. */
  get shared(): object {
    return this.core;
  }

  /** Number of symbols of every kind (kallsyms lines). */
  get nrSymbols(): number {
    return this.core.cols.names.length;
  }

  /** Traceable functions of vmlinux and the loaded modules. */
  traceable(): readonly KernelFunction[] {
    if (this.core.loadable.length === 0) return this.core.traceList;
    return (this.visibleTrace ??= this.core.traceList.filter((f) => this.isLoaded(f)));
  }

  /** Every traceable function, loadable modules' included: what ftrace keeps records of. */
  allTraceable(): readonly KernelFunction[] {
    return this.core.traceList;
  }

  /** Whether a function's module is loaded (always, for vmlinux). */
  isLoaded(fn: KernelSymbol): boolean {
    if (fn.module === undefined) return true;
    const k = this.core.cols.modules.findIndex((m) => m.name === fn.module);
    return k < 0 || !this.hidden[k];
  }

  /** The i-th kallsyms symbol (any type). */
  symbolAt(i: number): KernelSymbol {
    const core = this.core;
    let s = core.symObjs[i];
    if (!s) {
      const m = core.cols.mods[i]!;
      s = new Sym(core.cols, i, core.sizes[i]!, m ? core.cols.modules[m - 1]!.name : undefined);
      core.symObjs[i] = s;
    }
    return s;
  }

  /** The function at kallsyms index `i`, if that symbol is a text symbol. */
  functionAtSymbol(i: number): KernelFunction | undefined {
    const f = this.core.fnOfSym[i];
    return f === undefined || f < 0 ? undefined : this.core.functions[f];
  }

  /** Raw columns, for renderers that walk every symbol (skipping those not `visible`). */
  get columns(): Readonly<SymbolColumns> {
    return this.core.cols;
  }

  private symIndexes(name: string, module?: string): number[] {
    const hit = this.core.index().get(name);
    if (hit === undefined) return [];
    const all = (typeof hit === 'number' ? [hit] : hit).filter((i) => this.visible(i));
    if (module === undefined) return all;
    const cols = this.core.cols;
    return all.filter((i) => {
      const m = cols.mods[i]!;
      return module === '' ? m === 0 : m !== 0 && cols.modules[m - 1]!.name === module;
    });
  }

  byName(name: string, module?: string): KernelFunction[] {
    const out: KernelFunction[] = [];
    for (const i of this.symIndexes(name, module)) {
      const f = this.core.fnOfSym[i]!;
      if (f >= 0) out.push(this.core.functions[f]!);
    }
    return out;
  }

  /** Every symbol of this name, data symbols included (for `@sym` fetches). */
  symbolsByName(name: string, module?: string): KernelSymbol[] {
    return this.symIndexes(name, module).map((i) => this.symbolAt(i));
  }

  /** What kallsyms_lookup_name answers: the first symbol of that name, vmlinux before modules. */
  lookupName(name: string, module?: string): KernelSymbol | undefined {
    let i: number | undefined;
    const hit = module === undefined ? this.core.index().get(name) : undefined;
    if (typeof hit === 'number' && this.visible(hit)) i = hit;
    else i = this.symIndexes(name, module)[0];
    return i === undefined ? undefined : this.symbolAt(i);
  }

  /** The module that owns `name` as `mod:name` syntax names it, if loaded. */
  hasModule(name: string): boolean {
    return this.core.cols.modules.some((m, k) => m.name === name && !this.hidden[k]);
  }

  lookup(addr: bigint): SymbolLookup | undefined {
    let hit = this.lookups.get(addr);
    if (hit === undefined) {
      const i = this.lookupIndex(addr);
      hit = i === undefined ? null : { sym: this.symbolAt(i), offset: Number(addr - addrOf(this.core.cols, i)) };
      if (this.lookups.size >= LOOKUP_MEMO_MAX) this.lookups.clear();
      this.lookups.set(addr, hit);
    }
    return hit ?? undefined;
  }

  /** Index of the symbol containing `addr` (the first of aliases), as kallsyms_lookup picks it. */
  lookupIndex(addr: bigint): number | undefined {
    const c = this.core.cols;
    const hi = Number(addr >> 32n);
    const lo = Number(addr & 0xffffffffn);
    const nv = this.core.nrVmlinux;
    if (nv && cmpAddr(c, 0, hi, lo) <= 0 && cmpAddr(c, nv - 1, hi, lo) >= 0) {
      let l = 0;
      let h = nv - 1;
      while (l < h) {
        const mid = (l + h + 1) >>> 1;
        if (cmpAddr(c, mid, hi, lo) <= 0) l = mid;
        else h = mid - 1;
      }
      while (l > 0 && cmpAddr(c, l - 1, c.addrHi[l]!, c.addrLo[l]!) === 0) l--;
      return l;
    }
    return this.lookupModule(addr, hi, lo);
  }

  private lookupModule(addr: bigint, hi: number, lo: number): number | undefined {
    const cols = this.core.cols;
    const mods = cols.modules;
    for (let m = 0; m < mods.length; m++) {
      if (this.hidden[m]) continue;
      const region = mods[m]!.regions.find((r) => addr >= r.start && addr < r.start + BigInt(r.size));
      if (!region) continue;
      let best: number | undefined;
      for (const i of this.core.moduleSorted()[m]!) {
        if (cmpAddr(cols, i, hi, lo) > 0) break;
        if (best === undefined || cmpAddr(cols, i, cols.addrHi[best]!, cols.addrLo[best]!) > 0) best = i;
      }
      return best;
    }
    return undefined;
  }
}

/** A function of the table; its bigint address is made on first use. */
class Func implements KernelFunction {
  readonly name: string;
  readonly type: string;
  readonly traceable: boolean;
  readonly fentryOffset: number;
  readonly #cols: SymbolColumns;
  readonly #sym: number;
  #addr?: bigint;
  constructor(
    cols: SymbolColumns,
    sym: number,
    readonly id: number,
    readonly size: number,
    readonly module: string | undefined,
    fentry: number,
  ) {
    this.#cols = cols;
    this.#sym = sym;
    this.name = cols.names[sym]!;
    this.type = String.fromCharCode(cols.types[sym]!);
    this.traceable = fentry >= 0;
    this.fentryOffset = fentry >= 0 ? fentry : 0;
  }
  get addr(): bigint {
    return (this.#addr ??= addrOf(this.#cols, this.#sym));
  }
}

class Sym implements KernelSymbol {
  readonly name: string;
  readonly type: string;
  readonly addr: bigint;
  constructor(
    cols: SymbolColumns,
    sym: number,
    readonly size: number,
    readonly module: string | undefined,
  ) {
    this.name = cols.names[sym]!;
    this.type = String.fromCharCode(cols.types[sym]!);
    this.addr = addrOf(cols, sym);
  }
}

/** Per module: its symbol indexes, sorted by address. */
function moduleIndexes(cols: SymbolColumns, nv: number): number[][] {
  const per: number[][] = cols.modules.map(() => []);
  for (let i = nv; i < cols.names.length; i++) per[cols.mods[i]! - 1]?.push(i);
  for (const l of per) l.sort((x, y) => cmpAddr(cols, x, cols.addrHi[y]!, cols.addrLo[y]!) || x - y);
  return per;
}

/**
 * Symbol sizes as kallsyms reports them: up to the next higher symbol
 * address (vmlinux), or within a module up to its next higher symbol or the
 * end of the module region that holds the symbol.
 */
function computeSizes(cols: SymbolColumns, nv: number): Float64Array {
  const sizes = new Float64Array(cols.names.length);
  let next = -1;
  for (let i = nv - 1; i >= 0; i--) {
    if (i + 1 < nv && cmpAddr(cols, i + 1, cols.addrHi[i]!, cols.addrLo[i]!) > 0) next = i + 1;
    sizes[i] = next >= 0 ? addrDiff(cols, next, i) : 0;
  }
  moduleIndexes(cols, nv).forEach((idx, m) => {
    const regions = cols.modules[m]!.regions;
    for (let k = 0; k < idx.length; k++) {
      const i = idx[k]!;
      const a = addrOf(cols, i);
      const region = regions.find((r) => a >= r.start && a < r.start + BigInt(r.size));
      let end = region ? Number(region.start + BigInt(region.size) - a) : 0;
      for (let j = k + 1; j < idx.length; j++) {
        const d = addrDiff(cols, idx[j]!, i);
        if (d > 0) {
          if (!region || d < end) end = d;
          break;
        }
      }
      sizes[i] = end;
    }
  });
  return sizes;
}
