/**
 * The probe parsers' environment over the emulated kernel: kallsyms and the
 * ftrace function list, kprobe sites, BTF, tracepoints (from their
 * `__tracepoint_*` symbols). Events, paths and filters come from the layers
 * that own them.
 */
import { BtfError } from '../../kernel/btf.js';
import type { Kernel } from '../../kernel/kernel.js';
import { kprobeSite } from '../../kernel/kprobe_site.js';
import type { TypeDb } from '../../kernel/ctypes.js';
import type { KernelFunction, KernelSymbol } from '../../kernel/symbols.js';
import { globMatch } from '../../kernel/glob_match.js';
import { filterIndex, ftraceMatch, MatchType, parseFilterRegex } from '../../ftrace/glob.js';
import type { EventView, KallsymsEnv, KfuncView, KsymView, ProbeEnv } from './probe_env.js';

interface ProbeEnvExtras {
  /** Static and ftrace events (the event catalogue). */
  findEvent?(system: string, name: string): EventView | undefined;
  statPath?: ProbeEnv['statPath'];
  checkFilter?: ProbeEnv['checkFilter'];
}

const symView = (s: KernelSymbol): KsymView => s;

function fnView(f: KernelFunction, kernel: Kernel): KfuncView {
  return { name: f.name, addr: f.addr, size: f.size, type: f.type, module: f.module, traceable: f.traceable, fentryOffset: f.fentryOffset, endbr: kernel.insns.hasEndbr(f) };
}

/** Glob characters of glob_match(); a plain name is looked up directly. */
const GLOB = /[*?[\\]/;

function kernelKallsymsEnv(kernel: Kernel): KallsymsEnv {
  const t = kernel.symbols;
  // is_ksym_addr(): with KALLSYMS_ALL, vmlinux addresses between _stext and _end (per-cpu offsets are not)
  const start = t.lookupName('_stext', '')?.addr ?? 0n;
  const end = t.lookupName('_end', '')?.addr ?? (1n << 64n) - 1n;
  /** How many traceable functions have this exact name (one per module that has it). */
  const traceableNamed = (name: string): number => t.byName(name).filter((f) => f.traceable).length;
  return {
    lookupName(name) {
      const colon = name.indexOf(':');
      if (colon >= 0) {
        const mod = name.slice(0, colon);
        return t.hasModule(mod) ? t.lookupName(name.slice(colon + 1), mod) : undefined;
      }
      return t.lookupName(name);
    },
    lookupAddr(addr) {
      const hit = t.lookup(addr);
      if (!hit || (hit.sym.module === undefined && (addr < start || addr >= end))) return undefined;
      return symView(hit.sym);
    },
    countName(name, module) {
      if (module === '*') return t.symbolsByName(name).filter((s) => s.module !== undefined).length;
      return t.symbolsByName(name, module ?? '').length;
    },
    functionAt(addr) {
      const hit = t.lookup(addr);
      if (!hit || hit.offset !== 0) return undefined;
      const f = t.byName(hit.sym.name, hit.sym.module ?? '').find((x) => x.addr === addr);
      return f ? fnView(f, kernel) : undefined;
    },
    moduleLoaded: (name) => t.hasModule(name),
    countTraceable(glob) {
      if (!GLOB.test(glob)) return traceableNamed(glob);
      let n = 0;
      for (const f of t.traceable()) if (globMatch(glob, f.name)) n++;
      return n;
    },
    countFtraceFilter(word) {
      const g = parseFilterRegex(word);
      if (g.type === MatchType.Full) return traceableNamed(g.search);
      const fns = t.traceable();
      if (g.type === MatchType.Index) {
        const i = filterIndex(g.search);
        return i !== undefined && i <= fns.length ? 1 : 0;
      }
      let n = 0;
      for (const f of fns) if (ftraceMatch(f.name, g)) n++;
      return n;
    },
  };
}

/** bpf_find_btf_id(): vmlinux's BTF first, then each loaded module's. */
function kernelTypeDb(kernel: Kernel): TypeDb {
  const find = <T>(get: (db: TypeDb) => T | undefined): T | undefined => {
    const own = get(kernel.types);
    if (own !== undefined) return own;
    for (const m of kernel.modules.loaded) {
      const db = kernel.moduleTypes(m.def.name);
      const t = db && get(db);
      if (t !== undefined) return t;
    }
    return undefined;
  };
  return { funcProto: (name) => find((db) => db.funcProto(name)), struct: (name, kind) => find((db) => db.struct(name, kind)) };
}

export function kernelProbeEnv(kernel: Kernel, extras: ProbeEnvExtras = {}): ProbeEnv {
  const kallsyms = kernelKallsymsEnv(kernel);
  return {
    profile: kernel.profile,
    possibleCpus: kernel.nrCpus,
    kallsyms,
    kprobeSite: (addr, notraceCheck) => kprobeSite(kernel, addr, notraceCheck),
    btf: kernelTypeDb(kernel),
    btfTypeById(id) {
      try {
        return kernel.types.type(id);
      } catch (e) {
        if (!(e instanceof BtfError)) throw e;
        return undefined;
      }
    },
    findTracepoint(name) {
      const tp = kernel.symbols.lookupName(`__tracepoint_${name}`);
      return tp ? { name, probestub: `__probestub_${name}`, module: tp.module } : undefined;
    },
    findEvent: (system, name) => extras.findEvent?.(system, name),
    statPath: (path) => extras.statPath?.(path) ?? 'ENOENT',
    checkFilter: extras.checkFilter,
  };
}
