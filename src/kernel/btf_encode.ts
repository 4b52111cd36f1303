/**
 * A module's split BTF, encoded from a typed description (what pahole
 * would emit for it over vmlinux's BTF): its own structs laid out as the
 * compiler lays them (natural alignment, x86_64), and its functions with
 * their prototypes. Types it shares with vmlinux are referenced by name.
 */
import { BtfError, BtfKind, type Btf } from './btf.js';
import { resolveType, sizeOfType, type CType } from './ctypes.js';

/**
 * A type as a module's source names it: vmlinux's int or struct by name (its
 * own struct of that name first), or a pointer to / const of another.
 * Debian's gcc emits no type tags: `int __percpu *` is a plain `int *`.
 */
export type BtfTypeRef = { kind: 'void' } | { kind: 'int' | 'struct'; name: string } | { kind: 'ptr' | 'const'; to: BtfTypeRef };

export interface BtfStructDef {
  name: string;
  members: readonly { name: string; type: BtfTypeRef }[];
}

/** A static function: BTF_KIND_FUNC over its FUNC_PROTO. */
export interface BtfFuncDef {
  name: string;
  ret: BtfTypeRef;
  params: readonly { name: string; type: BtfTypeRef }[];
}

export interface ModuleBtfDef {
  structs: readonly BtfStructDef[];
  funcs: readonly BtfFuncDef[];
}

const HDR_LEN = 24;

/** Alignment of a value of this type on x86_64. */
function alignOf(t: CType): number {
  const r = resolveType(t);
  switch (r.kind) {
    case 'ptr':
      return 8;
    case 'array':
      return alignOf(r.elem);
    case 'struct':
    case 'union':
      return r.members.reduce((a, m) => Math.max(a, alignOf(m.type)), 1);
    case 'void':
    case 'func':
      return 1;
    default:
      return r.size;
  }
}

const alignUp = (n: number, a: number): number => Math.ceil(n / a) * a;

/** The raw split BTF of `def` over `base`, as Btf.parse(bytes, base) reads it. */
export function encodeModuleBtf(def: ModuleBtfDef, base: Btf): Uint8Array {
  const strs: string[] = [''];
  let strLen = 1;
  const strOff = new Map<string, number>([['', 0]]);
  const str = (s: string): number => {
    if (s === '') return 0;
    let off = strOff.get(s);
    if (off === undefined) {
      off = strLen;
      strOff.set(s, off);
      strs.push(s);
      strLen += Buffer.byteLength(s, 'latin1') + 1;
    }
    // offsets continue the base's string section
    return base.strSectionEnd + off;
  };

  const words: number[][] = [];
  const own = new Map<string, { id: number; size: number; align: number }>();
  const add = (rec: number[]): number => {
    words.push(rec);
    return base.nrTypes + words.length - 1;
  };
  const info = (kind: BtfKind, vlen = 0): number => ((kind << 24) | vlen) >>> 0;

  /** The id of a type, its size and alignment (new PTR/CONST records as needed). */
  const ref = (t: BtfTypeRef): { id: number; size: number; align: number } => {
    switch (t.kind) {
      case 'void':
        return { id: 0, size: 0, align: 1 };
      case 'ptr':
        return { id: add([0, info(BtfKind.PTR), ref(t.to).id]), size: 8, align: 8 };
      case 'const': {
        const to = ref(t.to);
        return { ...to, id: add([0, info(BtfKind.CONST), to.id]) };
      }
      default: {
        const mine = t.kind === 'struct' ? own.get(t.name) : undefined;
        if (mine) return mine;
        const id = base.findByName(t.name, t.kind === 'int' ? BtfKind.INT : BtfKind.STRUCT);
        if (id === undefined) throw new BtfError(`BTF: no ${t.kind} ${t.name} in the base`);
        const ct = base.type(id);
        return { id, size: sizeOfType(ct), align: alignOf(ct) };
      }
    }
  };

  for (const s of def.structs) {
    const members = s.members.map((m) => ({ name: m.name, ...ref(m.type) }));
    let size = 0;
    let align = 1;
    const placed = members.map((m) => {
      const at = alignUp(size, m.align);
      size = at + m.size;
      align = Math.max(align, m.align);
      return [str(m.name), m.id, at * 8];
    });
    size = alignUp(size, align);
    const id = add([str(s.name), info(BtfKind.STRUCT, placed.length), size, ...placed.flat()]);
    own.set(s.name, { id, size, align });
  }
  for (const f of def.funcs) {
    const ret = ref(f.ret).id;
    const params = f.params.map((p) => [str(p.name), ref(p.type).id]);
    const proto = add([0, info(BtfKind.FUNC_PROTO, params.length), ret, ...params.flat()]);
    add([str(f.name), info(BtfKind.FUNC), proto]); // vlen 0: static linkage
  }

  const typeLen = words.reduce((n, r) => n + r.length * 4, 0);
  const out = Buffer.alloc(HDR_LEN + typeLen + strLen);
  out.writeUInt16LE(0xeb9f, 0);
  out.writeUInt8(1, 2); // version
  out.writeUInt32LE(HDR_LEN, 4);
  out.writeUInt32LE(0, 8);
  out.writeUInt32LE(typeLen, 12);
  out.writeUInt32LE(typeLen, 16);
  out.writeUInt32LE(strLen, 20);
  let p = HDR_LEN;
  for (const w of words.flat()) p = out.writeUInt32LE(w, p);
  for (const s of strs) p += out.write(`${s}\0`, p, 'latin1');
  return out;
}
