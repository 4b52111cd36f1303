/**
 * The map behind a hist trigger (tracing_map.c): a fixed pool of elements,
 * one per distinct key, each with its sums (values), its variables and the
 * comm of the task that created it (set by the caller on a new element); `hits` counts every insert or lookup
 * that found or made an element, `drops` the inserts that found the pool
 * empty. Sorting follows the kernel: by the first sort key (a sum, or a key
 * field compared as its type), ties broken by the second.
 */
import type { HistVal } from './hist_field.js';

export const TRACING_MAP_BITS_DEFAULT = 11;
export const TRACING_MAP_BITS_MIN = 7;
export const TRACING_MAP_BITS_MAX = 17;
export const TRACING_MAP_KEYS_MAX = 3;
export const TRACING_MAP_VALS_MAX = 3;
export const TRACING_MAP_VARS_MAX = 16;
export const TRACING_MAP_SORT_KEYS_MAX = 2;

/** How a key field compares (tracing_map_cmp_*). */
export type KeyCmp = { kind: 'num'; size: number; signed: boolean } | { kind: 'string' } | { kind: 'none' };

export interface MapElt {
  readonly key: Buffer;
  /** Sums, by field index (values); key fields keep 0. */
  readonly sums: bigint[];
  readonly vars: HistVal[];
  readonly varSet: boolean[];
  /** The comm of the task whose event created the element (.execname). */
  comm?: string;
}

export interface SortKey {
  /** A field index of the map (0 = hitcount). */
  fieldIdx: number;
  descending: boolean;
}

interface MapField {
  key?: { offset: number; cmp: KeyCmp };
}

export class TracingMap {
  readonly maxElts: number;
  hits = 0n;
  drops = 0n;
  private readonly fields: MapField[] = [];
  private nVars = 0;
  private readonly elts = new Map<string, MapElt>();

  constructor(
    readonly mapBits: number,
    readonly keySize: number,
  ) {
    this.maxElts = 1 << mapBits;
  }

  /** tracing_map_add_sum_field(). */
  addSumField(): number {
    this.fields.push({});
    return this.fields.length - 1;
  }

  /** tracing_map_add_key_field(). */
  addKeyField(offset: number, cmp: KeyCmp): number {
    this.fields.push({ key: { offset, cmp } });
    return this.fields.length - 1;
  }

  /** tracing_map_add_var(). */
  addVar(): number {
    return this.nVars++;
  }

  get size(): number {
    return this.elts.size;
  }

  /** A key as this map hashes and compares it: its first key_size bytes (another trigger's longer key finds its prefix). */
  private id(key: Buffer): string {
    return key.toString('latin1', 0, Math.min(key.length, this.keySize));
  }

  /** tracing_map_insert(). `init` runs on an element it makes (hist_trigger_elt_data_init). */
  insert(key: Buffer, init?: (elt: MapElt) => void): MapElt | undefined {
    const id = this.id(key);
    const found = this.elts.get(id);
    if (found) {
      this.hits++;
      return found;
    }
    if (this.elts.size >= this.maxElts) {
      this.drops++;
      return undefined;
    }
    const elt: MapElt = { key: Buffer.from(key.subarray(0, this.keySize)), sums: new Array<bigint>(this.fields.length).fill(0n), vars: new Array<HistVal>(this.nVars).fill(0n), varSet: new Array<boolean>(this.nVars).fill(false) };
    init?.(elt);
    this.elts.set(id, elt);
    this.hits++;
    return elt;
  }

  /** tracing_map_lookup(): does not count. */
  lookup(key: Buffer): MapElt | undefined {
    return this.elts.get(this.id(key));
  }

  /** tracing_map_clear(). */
  clear(): void {
    this.elts.clear();
    this.hits = 0n;
    this.drops = 0n;
  }

  /** tracing_map_sort_entries(). */
  sorted(keys: readonly SortKey[]): MapElt[] {
    const entries = [...this.elts.values()];
    if (entries.length < 2 || !keys.length) return entries;
    const cmpBy = (k: SortKey) => (a: MapElt, b: MapElt): number => {
      const f = this.fields[k.fieldIdx];
      const r = f?.key ? cmpKey(f.key.cmp, a.key, b.key, f.key.offset) : cmpBig(a.sums[k.fieldIdx] ?? 0n, b.sums[k.fieldIdx] ?? 0n);
      return k.descending ? -r : r;
    };
    const primary = cmpBy(keys[0]!);
    entries.sort(primary);
    if (keys.length > 1) {
      // sort_secondary(): runs equal by the primary key are sorted by the secondary one
      const secondary = cmpBy(keys[1]!);
      let start = 0;
      for (let i = 1; i <= entries.length; i++) {
        if (i < entries.length && primary(entries[start]!, entries[i]!) === 0) continue;
        if (i - start > 1) {
          const run = entries.slice(start, i).sort(secondary);
          entries.splice(start, run.length, ...run);
        }
        start = i;
      }
    }
    return entries;
  }
}

function cmpBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmpKey(cmp: KeyCmp, a: Buffer, b: Buffer, off: number): number {
  switch (cmp.kind) {
    case 'none':
      return 0;
    case 'string': {
      const sa = cstrAt(a, off);
      const sb = cstrAt(b, off);
      return sa < sb ? -1 : sa > sb ? 1 : 0;
    }
    case 'num': {
      const read = (buf: Buffer): bigint => {
        switch (cmp.size) {
          case 1:
            return BigInt(cmp.signed ? buf.readInt8(off) : buf.readUInt8(off));
          case 2:
            return BigInt(cmp.signed ? buf.readInt16LE(off) : buf.readUInt16LE(off));
          case 4:
            return BigInt(cmp.signed ? buf.readInt32LE(off) : buf.readUInt32LE(off));
          default:
            return cmp.signed ? buf.readBigInt64LE(off) : buf.readBigUInt64LE(off);
        }
      };
      return cmpBig(read(a), read(b));
    }
  }
}

function cstrAt(buf: Buffer, off: number): string {
  const z = buf.indexOf(0, off);
  return buf.toString('latin1', off, z < 0 ? buf.length : z);
}
