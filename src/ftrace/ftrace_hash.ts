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

  constructor(ids?: Iterable<number>) {
    this.ids = new Set(ids);
  }

  get count(): number {
    return this.ids.size;
  }

  /** ftrace_hash_empty(). */
  get empty(): boolean {
    return this.ids.size === 0 && !this.mod;
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
  }

  copy(): FtraceHash {
    const h = new FtraceHash(this.ids);
    h.mod = this.mod;
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

/** The shared, never-modified empty hash (EMPTY_HASH). */
export const EMPTY_HASH: FtraceHash = new FtraceHash();

/** A filter/notrace pair (ftrace_ops_hash). */
export interface FuncHash {
  filter: FtraceHash;
  notrace: FtraceHash;
}

/** hash_contains_ip() / ftrace_ops_test(): in the filter (or no filter) and not in the notrace hash. */
export function hashContains(h: FuncHash, id: number): boolean {
  return (h.filter.empty || h.filter.has(id)) && (h.notrace.empty || !h.notrace.has(id));
}
