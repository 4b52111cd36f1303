/**
 * ftrace_hash: a set of function records (keyed by the function's dense id,
 * which stands for its __fentry__ ip). An empty filter hash means "every
 * function"; an empty notrace hash means "none excluded".
 */
export class FtraceHash {
  private readonly ids: Set<number>;
  /**
   * FTRACE_HASH_FL_MOD: `:mod:` filters wait for a module to load, so the
   * hash is not "all functions" even with no entries yet.
   */
  mod = false;
  /**
   * Entries of functions whose module went away: the kernel zeroes their ip
   * rather than removing them, so they match nothing (a reloaded module's
   * functions are new) but keep the hash from meaning "all functions".
   */
  dead = 0;

  constructor(ids?: Iterable<number>) {
    this.ids = new Set(ids);
  }

  get count(): number {
    return this.ids.size;
  }

  /** ftrace_hash_empty(). */
  get empty(): boolean {
    return this.ids.size === 0 && !this.mod && this.dead === 0;
  }

  has(id: number): boolean {
    return this.ids.has(id);
  }

  add(id: number): void {
    this.ids.add(id);
  }

  delete(id: number): boolean {
    return this.ids.delete(id);
  }

  clear(): void {
    this.ids.clear();
    this.dead = 0;
  }

  /** clear_mod_from_hash(): the functions of a module going away stop matching. */
  killIds(ids: Iterable<number>): void {
    for (const id of ids) if (this.ids.delete(id)) this.dead++;
  }

  copy(): FtraceHash {
    const h = new FtraceHash(this.ids);
    h.mod = this.mod;
    h.dead = this.dead;
    return h;
  }

  [Symbol.iterator](): IterableIterator<number> {
    return this.ids.values();
  }

  /** Same members (ops_equal(): two empty hashes are equal). */
  equals(other: FtraceHash): boolean {
    if (this.empty !== other.empty || this.count !== other.count) return false;
    for (const id of this.ids) if (!other.has(id)) return false;
    return true;
  }
}

/** A filter/notrace pair (ftrace_ops_hash). */
export interface FuncHash {
  filter: FtraceHash;
  notrace: FtraceHash;
}

/** hash_contains_ip() / ftrace_ops_test(): in the filter (or no filter) and not in the notrace hash. */
export function hashContains(h: FuncHash, id: number): boolean {
  return (h.filter.empty || h.filter.has(id)) && (h.notrace.empty || !h.notrace.has(id));
}

/** rebuild_hashes(): what a manager traces for its sub-ops (union of filters, intersection of notraces). */
export function composeSubopsHash(subops: readonly { readonly funcHash: FuncHash }[]): FuncHash {
  let filter = new FtraceHash();
  let notrace = new FtraceHash();
  subops.forEach((sub, i) => {
    const h = sub.funcHash;
    if (i === 0) {
      if (!h.filter.empty) {
        filter = h.filter.copy();
        for (const id of h.notrace) filter.delete(id);
      } else notrace = h.notrace.copy();
      return;
    }
    if (filter.empty || h.filter.empty) {
      filter = new FtraceHash();
    } else {
      const next = h.filter.copy();
      for (const id of h.notrace) next.delete(id);
      for (const id of filter) next.add(id);
      filter = next;
    }
    if (filter.empty) {
      const both = new FtraceHash();
      if (!notrace.empty && !h.notrace.empty) for (const id of notrace) if (h.notrace.has(id)) both.add(id);
      notrace = both;
    }
  });
  return { filter, notrace };
}
