/**
 * Emulated kernel objects laid out as the kernel's BTF says: a field path
 * (`f_path.dentry`, `d_name.name`, `comm`) resolves to its offset and size in
 * the real struct, so probes that fetch `file->f_path.dentry->d_name.name`
 * or `+16(%di)` read what the kernel would have there.
 */
import { resolveType, sizeOfType, type CType, type TypeDb } from './ctypes.js';
import { memberPath } from './ctype_member.js';
import type { AddressSpace } from './memory.js';

interface FieldLayout {
  /** Byte offset from the start of the struct. */
  offset: number;
  /** Byte size of the field (for arrays: of the whole array). */
  size: number;
  kind: 'int' | 'ptr' | 'array' | 'struct' | 'other';
  /** Bitfield: bit offset inside the byte at `offset`, and width. */
  bitShift?: number;
  bitSize?: number;
}

export class KStructs {
  private readonly cache = new Map<string, FieldLayout | null>();
  private readonly sizes = new Map<string, number>();

  constructor(
    private readonly types: TypeDb | undefined,
    private readonly mem: AddressSpace,
  ) {}

  /** sizeof(struct name), or `fallback` when the BTF has no such struct. */
  sizeOf(struct: string, fallback = 256): number {
    let n = this.sizes.get(struct);
    if (n === undefined) {
      n = this.types?.struct(struct)?.size ?? fallback;
      this.sizes.set(struct, n);
    }
    return n;
  }

  has(struct: string): boolean {
    return this.types?.struct(struct) !== undefined;
  }

  /** Where `path` (dotted) lives in `struct`; undefined when the BTF lacks it (another kernel version). */
  field(struct: string, path: string): FieldLayout | undefined {
    const key = `${struct}:${path}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit ?? undefined;
    const st = this.types?.struct(struct);
    const ref = st ? memberPath(st, path.split('.')) : undefined;
    let out: FieldLayout | null = null;
    if (ref) {
      const t = resolveType(ref.member.type);
      const kind = t.kind === 'int' || t.kind === 'enum' ? 'int' : t.kind === 'ptr' ? 'ptr' : t.kind === 'array' ? 'array' : t.kind === 'struct' || t.kind === 'union' ? 'struct' : 'other';
      out = { offset: ref.bitOffset >> 3, size: sizeOfType(ref.member.type as CType), kind };
      if (ref.member.bitSize) {
        out.bitShift = ref.bitOffset & 7;
        out.bitSize = ref.member.bitSize;
      }
    }
    this.cache.set(key, out);
    return out ?? undefined;
  }

  /** Address of a field of the object at `base`, if the struct has it. */
  addrOf(base: bigint, struct: string, path: string): bigint | undefined {
    const f = this.field(struct, path);
    return f ? base + BigInt(f.offset) : undefined;
  }

  /**
   * Stores a value in a field: integers and pointers by their size, strings
   * into char arrays (NUL-padded, truncated to fit). Fields the BTF lacks are
   * skipped: the same code serves kernels whose structs differ.
   */
  set(base: bigint, struct: string, path: string, value: bigint | number | boolean | string): void {
    const f = this.field(struct, path);
    if (!f) return;
    const at = base + BigInt(f.offset);
    if (typeof value === 'string') {
      const bytes = Buffer.alloc(f.size);
      Buffer.from(value, 'latin1').copy(bytes, 0, 0, Math.max(0, f.size - 1));
      this.mem.write(at, bytes);
      return;
    }
    const v = typeof value === 'boolean' ? (value ? 1n : 0n) : BigInt(value);
    if (f.bitSize) {
      const span = Math.ceil((f.bitShift! + f.bitSize) / 8);
      const cur = this.mem.read(at, span) ?? Buffer.alloc(span);
      let word = 0n;
      for (let i = span - 1; i >= 0; i--) word = (word << 8n) | BigInt(cur[i]!);
      const mask = ((1n << BigInt(f.bitSize)) - 1n) << BigInt(f.bitShift!);
      word = (word & ~mask) | ((v << BigInt(f.bitShift!)) & mask);
      const out = Buffer.alloc(span);
      for (let i = 0; i < span; i++) out[i] = Number((word >> BigInt(8 * i)) & 0xffn);
      this.mem.write(at, out);
      return;
    }
    const size = f.kind === 'ptr' ? 8 : f.size;
    if (size === 1 || size === 2 || size === 4 || size === 8) this.mem.writeUint(at, size, v);
  }

  /** Reads an integer or pointer field (unsigned), for tests and for code that follows pointers. */
  get(base: bigint, struct: string, path: string): bigint | undefined {
    const f = this.field(struct, path);
    if (!f) return undefined;
    const size = f.kind === 'ptr' ? 8 : f.size;
    const b = this.mem.read(base + BigInt(f.offset), size);
    if (!b) return undefined;
    let v = 0n;
    for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]!);
    return v;
  }
}
