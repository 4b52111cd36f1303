/**
 * ftrace_hash: a set of function records (keyed by the function's dense id,
 * which stands for its __fentry__ ip). An empty filter hash means "every
 * function"; an empty notrace hash means "none excluded".
 */
export class FtraceHash {
  /**
   * The member ids as a bitset (bit id%32 of word id/32): a hash of every
   * function is a few kilobytes, copied and tested without hashing.
   * Iteration goes by ascending id.
   */
  private words: Uint32Array;
  private n = 0;
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
    this.words = NO_WORDS;
    if (ids) for (const id of ids) this.add(id);
  }

  get count(): number {
    return this.n;
  }

  /** ftrace_hash_empty(). */
  get empty(): boolean {
    return this.n === 0 && !this.mod && this.dead === 0;
  }

  has(id: number): boolean {
    const w = id >>> 5;
    return w < this.words.length && (this.words[w]! & (1 << (id & 31))) !== 0;
  }

  add(id: number): void {
    const w = id >>> 5;
    if (w >= this.words.length) this.grow(w);
    const bit = 1 << (id & 31);
    if (this.words[w]! & bit) return;
    this.words[w]! |= bit;
    this.n++;
  }

  delete(id: number): boolean {
    if (!this.has(id)) return false;
    this.words[id >>> 5]! &= ~(1 << (id & 31));
    this.n--;
    return true;
  }

  clear(): void {
    this.words = NO_WORDS;
    this.n = 0;
    this.dead = 0;
  }

  /** clear_mod_from_hash(): the functions of a module going away stop matching. */
  killIds(ids: Iterable<number>): void {
    for (const id of ids) if (this.delete(id)) this.dead++;
  }

  copy(): FtraceHash {
    const h = new FtraceHash();
    h.words = this.n ? this.words.slice() : NO_WORDS;
    h.n = this.n;
    h.mod = this.mod;
    h.dead = this.dead;
    return h;
  }

  *[Symbol.iterator](): IterableIterator<number> {
    const words = this.words;
    for (let w = 0; w < words.length; w++) {
      let x = words[w]!;
      while (x) {
        const low = x & -x;
        yield (w << 5) + 31 - Math.clz32(low);
        x ^= low;
      }
    }
  }

  /** Same members (ops_equal(): two empty hashes are equal). */
  equals(other: FtraceHash): boolean {
    if (this.empty !== other.empty || this.count !== other.count) return false;
    for (const id of this) if (!other.has(id)) return false;
    return true;
  }

  private grow(w: number): void {
    const next = new Uint32Array(Math.max(w + 1, this.words.length * 2, 64));
    next.set(this.words);
    this.words = next;
  }
}

/** The words of a hash with no members (shared: a hash copies before it writes). */
const NO_WORDS = new Uint32Array(0);

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
