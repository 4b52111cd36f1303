/**
 * A reader of the BPF Type Format (raw BTF, as /sys/kernel/btf/vmlinux and
 * /sys/kernel/btf/<module> serve it): one pass indexes where each type
 * record starts; the C type graph of ctypes.ts is then built on demand, one
 * type at a time, and cached. Module BTF is "split" BTF: its type ids and
 * string offsets continue those of its base (vmlinux).
 */
import type {
  ArrayType,
  CMember,
  CType,
  EnumType,
  FuncParam,
  FuncProto,
  FuncType,
  PtrType,
  QualType,
  StructType,
  TypeDb,
  TypedefType,
} from './ctypes.js';

const BTF_MAGIC = 0xeb9f;

export const enum BtfKind {
  UNKN = 0,
  INT = 1,
  PTR = 2,
  ARRAY = 3,
  STRUCT = 4,
  UNION = 5,
  ENUM = 6,
  FWD = 7,
  TYPEDEF = 8,
  VOLATILE = 9,
  CONST = 10,
  RESTRICT = 11,
  FUNC = 12,
  FUNC_PROTO = 13,
  VAR = 14,
  DATASEC = 15,
  FLOAT = 16,
  DECL_TAG = 17,
  TYPE_TAG = 18,
  ENUM64 = 19,
}

const INT_SIGNED = 1;
const INT_CHAR = 2;
const INT_BOOL = 4;

/** An enumerator of an enum (values of ENUM64 need a bigint). */
interface BtfEnumerator {
  name: string;
  value: bigint;
}

/** A variable of a DATASEC (per-cpu and other BTF-described data). */
interface BtfVarSecinfo {
  type: number;
  offset: number;
  size: number;
}

/** BTF that is missing, malformed, or lacks what was asked. */
export class BtfError extends Error {}

const VOID: CType = Object.freeze({ kind: 'void' as const });

export class Btf implements TypeDb {
  /** Id of the first type of this blob (1 for vmlinux, base.nrTypes for split BTF). */
  readonly startId: number;
  /** Type ids are < nrTypes (void is id 0). */
  readonly nrTypes: number;
  readonly base?: Btf;

  private readonly dv: DataView;
  private readonly bytes: Uint8Array;
  private readonly typeStart: number;
  private readonly strStart: number;
  private readonly strLen: number;
  private readonly strBase: number;
  /** Byte offset (from typeStart) of each type record of this blob. */
  private readonly offsets: Uint32Array;
  private readonly cache: (CType | undefined)[];
  /** Name offset of each type record of this blob. */
  private readonly nameOffs: Uint32Array;
  private nameIndex: Map<string, number[]> | undefined;

  private constructor(bytes: Uint8Array, base?: Btf) {
    this.bytes = bytes;
    this.base = base;
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.byteLength < 24) throw new BtfError('BTF: too short');
    let little = true;
    if (this.dv.getUint16(0, true) !== BTF_MAGIC) {
      if (this.dv.getUint16(0, false) !== BTF_MAGIC) throw new BtfError('BTF: bad magic');
      little = false;
    }
    if (!little) throw new BtfError('BTF: big-endian BTF is not supported');
    const hdrLen = this.dv.getUint32(4, true);
    const typeOff = this.dv.getUint32(8, true);
    const typeLen = this.dv.getUint32(12, true);
    const strOff = this.dv.getUint32(16, true);
    const strLen = this.dv.getUint32(20, true);
    this.typeStart = hdrLen + typeOff;
    this.strStart = hdrLen + strOff;
    this.strLen = strLen;
    if (this.typeStart + typeLen > bytes.byteLength || this.strStart + strLen > bytes.byteLength) {
      throw new BtfError('BTF: sections out of bounds');
    }
    this.strBase = base ? base.strBase + base.strLen : 0;
    this.startId = base ? base.nrTypes : 1;
    this.offsets = indexTypes(this.dv, this.typeStart, typeLen);
    this.nameOffs = new Uint32Array(this.offsets.length);
    for (let i = 0; i < this.offsets.length; i++) this.nameOffs[i] = this.dv.getUint32(this.typeStart + this.offsets[i]!, true);
    this.nrTypes = this.startId + this.offsets.length;
    this.cache = new Array(this.offsets.length);
  }

  /** Parses raw BTF; `base` for split (module) BTF. */
  static parse(bytes: Uint8Array, base?: Btf): Btf {
    return new Btf(bytes, base);
  }

  // --- raw access ---

  /** The blob that holds type `id`, and the record's absolute byte offset in it. */
  private rec(id: number): [Btf, number] {
    if (id >= this.startId) {
      const i = id - this.startId;
      if (i >= this.offsets.length) throw new BtfError(`BTF: no type ${id}`);
      return [this, this.typeStart + this.offsets[i]!];
    }
    if (this.base && id > 0) return this.base.rec(id);
    throw new BtfError(`BTF: no type ${id}`);
  }

  /** Where the string offsets of BTF split over this one begin. */
  get strSectionEnd(): number {
    return this.strBase + this.strLen;
  }

  /** A string of the string section (offsets continue the base's for split BTF). */
  str(off: number): string {
    if (off < this.strBase) return this.base!.str(off);
    const local = off - this.strBase;
    if (local >= this.strLen) throw new BtfError(`BTF: string offset ${off} out of bounds`);
    const start = this.strStart + local;
    let end = this.bytes.indexOf(0, start);
    if (end < 0 || end > this.strStart + this.strLen) end = this.strStart + this.strLen;
    return latin1(this.bytes, start, end);
  }

  kind(id: number): BtfKind {
    if (id === 0) return BtfKind.UNKN;
    const [b, o] = this.rec(id);
    return (b.dv.getUint32(o + 4, true) >>> 24) & 0x1f;
  }

  name(id: number): string {
    if (id === 0) return '';
    const [b, o] = this.rec(id);
    return b.str(b.dv.getUint32(o, true));
  }

  private vlen(b: Btf, o: number): number {
    return b.dv.getUint32(o + 4, true) & 0xffff;
  }

  private kflag(b: Btf, o: number): boolean {
    return (b.dv.getUint32(o + 4, true) >>> 31) === 1;
  }

  /** size_or_type field. */
  private sizeType(b: Btf, o: number): number {
    return b.dv.getUint32(o + 8, true);
  }

  // --- name index ---

  /** Ids of all types (of any kind, in this blob and its base) with this name. */
  idsByName(name: string): readonly number[] {
    const own = this.scanName(name);
    return this.base ? [...this.base.idsByName(name), ...own] : own;
  }

  /** First type of `kind` named `name`. */
  findByName(name: string, kind: BtfKind): number | undefined {
    for (const id of this.idsByName(name)) if (this.kind(id) === kind) return id;
    return undefined;
  }

  /**
   * All of this blob's named types by name, built on the first lookup: one
   * pass over the records (~100 ms for vmlinux), after which every lookup is
   * a map access. A search of the string section per new name cost a few ms
   * each, and the executor meets thousands of distinct functions.
   */
  private scanName(name: string): number[] {
    if (!this.nameIndex) {
      const index = new Map<string, number[]>();
      const names = this.nameOffs;
      for (let i = 0; i < names.length; i++) {
        // anonymous types too, under '': btf_find_by_name_kind() finds the first of a kind for an empty name
        const n = this.str(names[i]!);
        const ids = index.get(n);
        if (ids) ids.push(this.startId + i);
        else index.set(n, [this.startId + i]);
      }
      this.nameIndex = index;
    }
    return this.nameIndex.get(name) ?? [];
  }

  // --- TypeDb ---

  funcProto(name: string): FuncProto | undefined {
    const id = this.findByName(name, BtfKind.FUNC);
    if (id === undefined) return undefined;
    const t = this.type(id);
    return t.kind === 'func' ? t.proto : undefined;
  }

  struct(name: string, kind?: 'struct' | 'union'): StructType | undefined {
    for (const id of this.idsByName(name)) {
      const k = this.kind(id);
      if (kind ? k === (kind === 'struct' ? BtfKind.STRUCT : BtfKind.UNION) : k === BtfKind.STRUCT || k === BtfKind.UNION) return this.type(id) as StructType;
    }
    return undefined;
  }

  /** A named typedef, enum, struct … of any kind, resolved to its CType. */
  namedType(name: string, kind: BtfKind): CType | undefined {
    const id = this.findByName(name, kind);
    return id === undefined ? undefined : this.type(id);
  }

  /** Enumerators of an ENUM or ENUM64 type. */
  enumerators(id: number): BtfEnumerator[] {
    const [b, o] = this.rec(id);
    const kind = this.kind(id);
    const n = this.vlen(b, o);
    const signed = this.kflag(b, o);
    const out: BtfEnumerator[] = [];
    if (kind === BtfKind.ENUM) {
      for (let i = 0; i < n; i++) {
        const p = o + 12 + i * 8;
        const v = signed ? b.dv.getInt32(p + 4, true) : b.dv.getUint32(p + 4, true);
        out.push({ name: b.str(b.dv.getUint32(p, true)), value: BigInt(v) });
      }
    } else if (kind === BtfKind.ENUM64) {
      for (let i = 0; i < n; i++) {
        const p = o + 12 + i * 12;
        const lo = BigInt(b.dv.getUint32(p + 4, true));
        const hi = BigInt(b.dv.getUint32(p + 8, true));
        let v = (hi << 32n) | lo;
        if (signed) v = BigInt.asIntN(64, v);
        out.push({ name: b.str(b.dv.getUint32(p, true)), value: v });
      }
    }
    return out;
  }

  /** Variables of a DATASEC. */
  datasec(id: number): BtfVarSecinfo[] {
    const [b, o] = this.rec(id);
    const out: BtfVarSecinfo[] = [];
    for (let i = 0, n = this.vlen(b, o); i < n; i++) {
      const p = o + 12 + i * 12;
      out.push({ type: b.dv.getUint32(p, true), offset: b.dv.getUint32(p + 4, true), size: b.dv.getUint32(p + 8, true) });
    }
    return out;
  }

  // --- the C type graph ---

  /** The C type of BTF id `id`, built once. VAR, DATASEC and DECL_TAG have no C type: they give void. */
  type(id: number): CType {
    if (id === 0) return VOID;
    if (id < this.startId) return this.base!.type(id);
    const i = id - this.startId;
    const hit = this.cache[i];
    if (hit) return hit;
    const t = this.build(id);
    this.cache[i] = t;
    return t;
  }

  private build(id: number): CType {
    const [b, o] = this.rec(id);
    const info = b.dv.getUint32(o + 4, true);
    const kind = (info >>> 24) & 0x1f;
    const name = b.str(b.dv.getUint32(o, true));
    const st = this.sizeType(b, o);
    switch (kind) {
      case BtfKind.INT: {
        const enc = (b.dv.getUint32(o + 12, true) >>> 24) & 0xf;
        return {
          kind: 'int',
          name,
          size: st,
          signed: (enc & INT_SIGNED) !== 0,
          char: (enc & INT_CHAR) !== 0 || (st === 1 && /\bchar$/.test(name)),
          bool: (enc & INT_BOOL) !== 0,
        };
      }
      case BtfKind.FLOAT:
        return { kind: 'float', name, size: st };
      case BtfKind.PTR:
        return new LazyPtr(this, st);
      case BtfKind.ARRAY:
        return new LazyArray(this, b.dv.getUint32(o + 12, true), b.dv.getUint32(o + 20, true));
      case BtfKind.STRUCT:
      case BtfKind.UNION:
        return new LazyStruct(this, kind === BtfKind.STRUCT ? 'struct' : 'union', name, st, b, o);
      case BtfKind.FWD:
        return { kind: (info >>> 31) === 1 ? 'union' : 'struct', name, size: 0, members: [] };
      case BtfKind.ENUM:
      case BtfKind.ENUM64: {
        const signed = (info >>> 31) === 1;
        return { kind: 'enum', name, size: st, signed } satisfies EnumType;
      }
      case BtfKind.TYPEDEF:
        return new LazyTypedef(this, name, st);
      case BtfKind.VOLATILE:
        return new LazyQual(this, 'volatile', st);
      case BtfKind.CONST:
        return new LazyQual(this, 'const', st);
      case BtfKind.RESTRICT:
        return new LazyQual(this, 'restrict', st);
      case BtfKind.TYPE_TAG:
        return new LazyQual(this, 'type_tag', st, name);
      case BtfKind.FUNC: {
        const proto = this.type(st);
        if (proto.kind !== 'func') throw new BtfError(`BTF: FUNC ${name} does not point to a FUNC_PROTO`);
        return proto;
      }
      case BtfKind.FUNC_PROTO:
        return { kind: 'func', proto: new LazyProto(this, b, o, st) } satisfies FuncType;
      default:
        return VOID;
    }
  }

  /** Members of the STRUCT/UNION record at (b, o). */
  readMembers(b: Btf, o: number): CMember[] {
    const n = this.vlen(b, o);
    const kflag = this.kflag(b, o);
    const out: CMember[] = [];
    for (let i = 0; i < n; i++) {
      const p = o + 12 + i * 12;
      const off = b.dv.getUint32(p + 8, true);
      out.push(
        new LazyMember(this, b.str(b.dv.getUint32(p, true)), b.dv.getUint32(p + 4, true), kflag ? off & 0xffffff : off, kflag ? off >>> 24 : 0),
      );
    }
    return out;
  }

  readParams(b: Btf, o: number): { params: FuncParam[]; variadic: boolean } {
    const n = this.vlen(b, o);
    const params: FuncParam[] = [];
    let variadic = false;
    for (let i = 0; i < n; i++) {
      const p = o + 12 + i * 8;
      const nameOff = b.dv.getUint32(p, true);
      const tid = b.dv.getUint32(p + 4, true);
      if (i === n - 1 && nameOff === 0 && tid === 0) {
        variadic = true;
        break;
      }
      params.push(new LazyParam(this, b.str(nameOff), tid));
    }
    return { params, variadic };
  }
}

/** One pass over the type section: the byte offset of every record. */
function indexTypes(dv: DataView, start: number, len: number): Uint32Array {
  let offs = new Uint32Array(Math.max(16, len >>> 4));
  let n = 0;
  let p = 0;
  while (p < len) {
    if (p + 12 > len) throw new BtfError('BTF: truncated type record');
    if (n === offs.length) {
      const bigger = new Uint32Array(offs.length * 2);
      bigger.set(offs);
      offs = bigger;
    }
    offs[n++] = p;
    const info = dv.getUint32(start + p + 4, true);
    const kind = (info >>> 24) & 0x1f;
    const vlen = info & 0xffff;
    p += 12;
    switch (kind) {
      case BtfKind.INT:
      case BtfKind.VAR:
      case BtfKind.DECL_TAG:
        p += 4;
        break;
      case BtfKind.ARRAY:
        p += 12;
        break;
      case BtfKind.STRUCT:
      case BtfKind.UNION:
      case BtfKind.DATASEC:
      case BtfKind.ENUM64:
        p += 12 * vlen;
        break;
      case BtfKind.ENUM:
      case BtfKind.FUNC_PROTO:
        p += 8 * vlen;
        break;
      case BtfKind.PTR:
      case BtfKind.FWD:
      case BtfKind.TYPEDEF:
      case BtfKind.VOLATILE:
      case BtfKind.CONST:
      case BtfKind.RESTRICT:
      case BtfKind.FUNC:
      case BtfKind.FLOAT:
      case BtfKind.TYPE_TAG:
        break;
      default:
        throw new BtfError(`BTF: unknown kind ${kind} at type ${n}`);
    }
  }
  if (p !== len) throw new BtfError('BTF: type section overrun');
  return offs.slice(0, n);
}

function latin1(bytes: Uint8Array, start: number, end: number): string {
  // Identifiers are ASCII; short ones are faster by hand than through a decoder.
  if (end - start < 48) {
    let s = '';
    for (let i = start; i < end; i++) s += String.fromCharCode(bytes[i]!);
    return s;
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
}

class LazyPtr implements PtrType {
  readonly kind = 'ptr' as const;
  constructor(
    private readonly db: Btf,
    private readonly tid: number,
  ) {}
  get target(): CType {
    return this.db.type(this.tid);
  }
}

class LazyArray implements ArrayType {
  readonly kind = 'array' as const;
  constructor(
    private readonly db: Btf,
    private readonly tid: number,
    readonly len: number,
  ) {}
  get elem(): CType {
    return this.db.type(this.tid);
  }
}

class LazyTypedef implements TypedefType {
  readonly kind = 'typedef' as const;
  constructor(
    private readonly db: Btf,
    readonly name: string,
    private readonly tid: number,
  ) {}
  get target(): CType {
    return this.db.type(this.tid);
  }
}

class LazyQual implements QualType {
  constructor(
    private readonly db: Btf,
    readonly kind: QualType['kind'],
    private readonly tid: number,
    /** The tag of a type_tag (e.g. "user", "rcu", "percpu"). */
    readonly tag?: string,
  ) {}
  get target(): CType {
    return this.db.type(this.tid);
  }
}

class LazyMember implements CMember {
  constructor(
    private readonly db: Btf,
    readonly name: string,
    private readonly tid: number,
    readonly bitOffset: number,
    readonly bitSize: number,
  ) {}
  get type(): CType {
    return this.db.type(this.tid);
  }
}

class LazyParam implements FuncParam {
  constructor(
    private readonly db: Btf,
    readonly name: string,
    private readonly tid: number,
  ) {}
  get type(): CType {
    return this.db.type(this.tid);
  }
}

class LazyStruct implements StructType {
  private m?: readonly CMember[];
  constructor(
    private readonly db: Btf,
    readonly kind: 'struct' | 'union',
    readonly name: string,
    readonly size: number,
    private readonly blob: Btf,
    private readonly off: number,
  ) {}
  get members(): readonly CMember[] {
    return (this.m ??= this.db.readMembers(this.blob, this.off));
  }
}

class LazyProto implements FuncProto {
  private p?: { params: FuncParam[]; variadic: boolean };
  constructor(
    private readonly db: Btf,
    private readonly blob: Btf,
    private readonly off: number,
    private readonly retTid: number,
  ) {}
  private get parsed(): { params: FuncParam[]; variadic: boolean } {
    return (this.p ??= this.db.readParams(this.blob, this.off));
  }
  get params(): readonly FuncParam[] {
    return this.parsed.params;
  }
  get variadic(): boolean {
    return this.parsed.variadic;
  }
  get ret(): CType {
    return this.db.type(this.retTid);
  }
}
