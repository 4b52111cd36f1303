/**
 * Member lookup in struct layouts, as `->field` / `.field` accesses need it:
 * members of anonymous structs and unions are members of the enclosing one.
 */
import { resolveType, type CMember, type StructType } from './ctypes.js';

interface MemberRef {
  member: CMember;
  /** Offset from the start of the outer struct, in bits (anonymous levels added). */
  bitOffset: number;
}

export function findMember(st: StructType, name: string): MemberRef | undefined {
  for (const m of st.members) {
    if (m.name === name) return { member: m, bitOffset: m.bitOffset };
  }
  for (const m of st.members) {
    if (m.name !== '') continue;
    const t = resolveType(m.type);
    if (t.kind !== 'struct' && t.kind !== 'union') continue;
    const inner = findMember(t, name);
    if (inner) return { member: inner.member, bitOffset: m.bitOffset + inner.bitOffset };
  }
  return undefined;
}

/** Follows a dotted path of members (`f_path.dentry`), each through findMember. */
export function memberPath(st: StructType, path: readonly string[]): MemberRef | undefined {
  let cur: StructType = st;
  let off = 0;
  let last: MemberRef | undefined;
  for (const name of path) {
    const r = findMember(cur, name);
    if (!r) return undefined;
    off += r.bitOffset;
    last = { member: r.member, bitOffset: off };
    const t = resolveType(r.member.type);
    if (t.kind === 'struct' || t.kind === 'union') cur = t;
    else if (name !== path[path.length - 1]) return undefined;
  }
  return last;
}
