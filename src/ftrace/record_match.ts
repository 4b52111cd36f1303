/**
 * match_records(): which function records a filter word names, by symbol
 * name and (`func:mod:module`) module. The scan over every record is a pure
 * function of the word and of which modules are loaded, so the answers for
 * the last words asked are kept until a module comes or goes.
 */
import { FTRACE_FL_DISABLED, type FtraceRecords } from './dyn_ftrace.js';
import type { FtraceHash } from './ftrace_hash.js';
import { type FtraceGlob, MatchType, filterIndex, ftraceMatch, parseFilterRegex } from './glob.js';

/** Records kept over all remembered answers (a word matching every function is one answer of ~50k). */
const KEPT_RECORDS = 1 << 20;

/** Answers kept (most words match nothing: they cost an entry each). */
const KEPT_ANSWERS = 1024;

export class RecordMatcher {
  /** Matching records by word, oldest first. */
  private readonly answers = new Map<string, Int32Array>();
  private kept = 0;
  /** Records by function name (a whole name needs no scan), made on first use. */
  private byName?: Map<string, number[]>;

  constructor(private readonly records: FtraceRecords) {}

  /** Records were enabled or disabled (a module came or went): every answer is stale. */
  forget(): void {
    this.answers.clear();
    this.kept = 0;
  }

  /** The records (not disabled) of functions named `name`, in record order. */
  private named(name: string): Int32Array {
    if (!this.byName) {
      this.byName = new Map();
      this.records.fns.forEach((f, r) => {
        const l = this.byName!.get(f.name);
        if (l) l.push(r);
        else this.byName!.set(f.name, [r]);
      });
    }
    const flags = this.records.flags;
    return Int32Array.from((this.byName.get(name) ?? []).filter((r) => !(flags[r]! & FTRACE_FL_DISABLED)));
  }

  /** The record on line `k` of available_filter_functions (records of modules not loaded are not listed), -1 past the end. */
  private listedRecord(k: number): number {
    const flags = this.records.flags;
    for (let r = 0; r < flags.length; r++) {
      if (flags[r]! & FTRACE_FL_DISABLED) continue;
      if (k-- === 0) return r;
    }
    return -1;
  }

  /**
   * Adds to `hash` every record whose name matches `func` (and whose module
   * matches `mod`; `!` inverts it), or removes them when `func` starts with
   * `!`. Returns how many matched (0: none).
   */
  match(hash: FtraceHash, func: string | undefined, mod?: string): number {
    const fg = func !== undefined ? parseFilterRegex(func) : { type: MatchType.Full, search: '', not: false };
    const clear = fg.not;
    const { ids } = this.records;
    if (fg.type === MatchType.Index) {
      const n = filterIndex(fg.search);
      const r = n !== undefined ? this.listedRecord(n - 1) : -1;
      if (r < 0) return 0;
      if (clear) hash.delete(ids[r]!);
      else hash.add(ids[r]!);
      return 1;
    }
    const recs = this.matching(fg, mod);
    for (let i = 0; i < recs.length; i++) {
      if (clear) hash.delete(ids[recs[i]!]!);
      else hash.add(ids[recs[i]!]!);
    }
    return recs.length;
  }

  /** The records not disabled whose name matches `fg` (an index matches none) and whose module matches `mod`, in record order. */
  matching(fg: FtraceGlob, mod?: string): Int32Array {
    if (fg.type === MatchType.Index) return NONE;
    const key = `${fg.type}\0${fg.search}${mod === undefined ? '' : `\0${mod}`}`;
    const known = this.answers.get(key);
    if (known) return known;
    const found = this.scan(fg, mod);
    this.answers.set(key, found);
    this.kept += found.length;
    for (const [k, v] of this.answers) {
      if ((this.kept <= KEPT_RECORDS && this.answers.size <= KEPT_ANSWERS) || k === key) break;
      this.answers.delete(k);
      this.kept -= v.length;
    }
    return found;
  }

  private scan(fg: FtraceGlob, mod: string | undefined): Int32Array {
    if (fg.type === MatchType.Full && mod === undefined) return this.named(fg.search);
    const mg = mod !== undefined ? parseFilterRegex(mod) : undefined;
    const { fns, flags } = this.records;
    const out: number[] = [];
    for (let r = 0; r < fns.length; r++) {
      if (flags[r]! & FTRACE_FL_DISABLED) continue;
      const fn = fns[r]!;
      if (mg) {
        const modname = fn.module;
        if (!mg.search.length) {
          // A blank module: `func:mod:` names every module, `func:mod:!` vmlinux.
          if (!mg.not === !modname) continue;
        } else {
          const modMatches = modname ? ftraceMatch(modname, mg) : false;
          if (modMatches === mg.not) continue;
        }
        if (fg.search.length && !ftraceMatch(fn.name, fg)) continue;
      } else if (!ftraceMatch(fn.name, fg)) continue;
      out.push(r);
    }
    return Int32Array.from(out);
  }
}

const NONE = new Int32Array(0);
