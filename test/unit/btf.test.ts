import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Btf, BtfKind } from '../../src/kernel/btf.js';
import { encodeModuleBtf } from '../../src/kernel/btf_encode.js';
import { declText, protoText } from '../../src/kernel/ctype_decl.js';
import { findMember, memberPath } from '../../src/kernel/ctype_member.js';
import { resolveType, sizeOfType, type StructType } from '../../src/kernel/ctypes.js';
import { SAMPLE_MODULES_7_3 } from '../../src/kernel/sample_modules.js';
import { builtinBtf } from '../../src/kernel/symbols_builtin.js';

const HOST_BTF = '/sys/kernel/btf/vmlinux';

function offsetOf(btf: Btf, struct: string, path: string): number | undefined {
  const st = btf.struct(struct);
  if (!st) return undefined;
  const r = memberPath(st, path.split('.'));
  return r ? r.bitOffset / 8 : undefined;
}

describe.skipIf(!existsSync(HOST_BTF))('BTF reader on the host kernel', () => {
  const t0 = performance.now();
  const btf = Btf.parse(readFileSync(HOST_BTF));
  const parseMs = performance.now() - t0;

  it('indexes the whole file quickly', () => {
    expect(btf.nrTypes).toBeGreaterThan(50_000);
    expect(parseMs).toBeLessThan(200);
  });

  it('decodes vfs_read', () => {
    const p = btf.funcProto('vfs_read')!;
    expect(p.params.map((x) => x.name)).toEqual(['file', 'buf', 'count', 'pos']);
    expect(protoText(p, 'vfs_read')).toBe('ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)');
    expect(sizeOfType(p.ret)).toBe(8);
    const count = resolveType(p.params[2]!.type);
    expect(count).toMatchObject({ kind: 'int', size: 8, signed: false });
  });

  it('knows void and variadic functions', () => {
    expect(btf.funcProto('schedule')!.ret.kind).toBe('void');
    expect(btf.funcProto('schedule')!.params).toEqual([]);
    expect(btf.funcProto('_printk')!.variadic).toBe(true);
    expect(btf.funcProto('no_such_function_xyz')).toBeUndefined();
  });

  it('lays out file->f_path.dentry->d_name.name', () => {
    expect(offsetOf(btf, 'file', 'f_path')).toBeGreaterThan(0);
    expect(offsetOf(btf, 'path', 'dentry')).toBe(8);
    expect(offsetOf(btf, 'dentry', 'd_name')).toBe(32);
    expect(offsetOf(btf, 'qstr', 'name')).toBe(8);
    const dentry = resolveType(findMember(btf.struct('path')!, 'dentry')!.member.type);
    expect(dentry.kind).toBe('ptr');
    expect(declText(findMember(btf.struct('qstr')!, 'name')!.member.type)).toBe('const unsigned char *');
  });

  it('finds members of anonymous unions and bitfields', () => {
    // qstr's hash and len are in an anonymous union/struct.
    const q = btf.struct('qstr')!;
    expect(findMember(q, 'len')).toBeDefined();
    const bitfields = [] as string[];
    const ts = btf.struct('task_struct') as StructType;
    for (const m of ts.members) if (m.bitSize) bitfields.push(m.name);
    expect(bitfields.length).toBeGreaterThan(0);
  });

  it('reads every type of the file without error', () => {
    const kinds = new Set<number>();
    for (let id = 1; id < btf.nrTypes; id++) {
      kinds.add(btf.kind(id));
      const t = btf.type(id);
      if (t.kind === 'struct' || t.kind === 'union') for (const m of t.members) void m.type;
      if (t.kind === 'func') for (const p of t.proto.params) void p.type;
    }
    for (const k of [BtfKind.INT, BtfKind.PTR, BtfKind.ARRAY, BtfKind.STRUCT, BtfKind.UNION, BtfKind.ENUM, BtfKind.FWD, BtfKind.TYPEDEF, BtfKind.VOLATILE, BtfKind.CONST, BtfKind.FUNC, BtfKind.FUNC_PROTO, BtfKind.VAR, BtfKind.DATASEC, BtfKind.ENUM64]) {
      expect(kinds.has(k)).toBe(true);
    }
  });

  it('reads enumerators, ENUM64 included', () => {
    const id = btf.findByName('pid_type', BtfKind.ENUM)!;
    expect(btf.enumerators(id).map((e) => e.name)).toContain('PIDTYPE_PID');
  });
});

describe('split BTF encoder', () => {
  it('lays a module struct out over vmlinux types, and its static function over its prototype', () => {
    const base = builtinBtf('7.3');
    const def = SAMPLE_MODULES_7_3.find((d) => d.name === 'trace_events_sample')!.btf!;
    const btf = Btf.parse(encodeModuleBtf(def, base), base);
    expect(btf.startId).toBe(base.nrTypes);
    const st = btf.struct('foo_timer_data')!;
    const timerSize = base.struct('timer_list')!.size;
    expect(st.members.map((m) => [m.name, m.bitOffset / 8])).toEqual([
      ['name', 0],
      ['timer', 8],
      ['counter', 8 + timerSize],
    ]);
    expect(st.size).toBe(16 + timerSize);
    expect(declText(st.members[2]!.type, 'counter')).toBe('int *counter');
    expect(protoText(btf.funcProto('sample_timer_cb')!, 'sample_timer_cb')).toBe('void sample_timer_cb(struct timer_list *t)');
    expect(btf.kind(btf.findByName('sample_timer_cb', BtfKind.FUNC)!)).toBe(BtfKind.FUNC);
    // vmlinux types stay reachable through the split BTF
    expect(btf.struct('timer_list')).toBe(base.struct('timer_list'));
  });
});

describe('BTF lookups by name and kind', () => {
  const btf = builtinBtf('7.3');

  it('finds a struct, not a union of the same name, when asked for a struct', () => {
    expect(btf.struct('file', 'struct')?.kind).toBe('struct');
    expect(btf.struct('file', 'union')).toBeUndefined();
  });

  it("'' names the first anonymous one, as btf_find_by_name_kind() finds it", () => {
    const anon = btf.struct('', 'struct')!;
    expect(anon).toMatchObject({ kind: 'struct', name: '' });
    const first = Array.from({ length: btf.nrTypes - 1 }, (_, i) => i + 1).find((id) => btf.kind(id) === BtfKind.STRUCT && btf.name(id) === '')!;
    expect(btf.type(first)).toBe(anon);
  });
});
