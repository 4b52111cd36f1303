import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InsnModel } from '../../src/kernel/insn_model.js';
import { kprobeSite } from '../../src/kernel/kprobe_site.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { testEmulator } from '../helpers/emulator.js';

describe.each(SERIES)('kprobe sites on %s', (series) => {
  const k = testEmulator({ series }).kernel;
  const t = k.symbols;
  const probe = (sym: string, off = 0) => {
    const fns = t.symbolsByName(sym);
    // The parser refuses unknown and non-unique names before registration.
    if (fns.length !== 1) return 'fail';
    return kprobeSite(k, fns[0]!.addr + BigInt(off)).ok ? 'ok' : 'fail';
  };

  it('agrees with the real kernel on the symbols multiple_kprobes.tc walks, at +0 and +5', () => {
    const lines = readFileSync(new URL(`../fixtures/kprobe-first-t-${series}.txt`, import.meta.url), 'latin1').trim().split('\n');
    let agree = 0;
    const wrong: string[] = [];
    for (const l of lines) {
      const [sym, r0, r5] = l.split(' ');
      const m0 = probe(sym!, 0);
      const m5 = probe(sym!, 5);
      agree += Number(m0 === r0) + Number(m5 === r5);
      if (m0 !== r0 || m5 !== r5) wrong.push(`${sym} real ${r0}/${r5} model ${m0}/${m5}`);
    }
    expect(wrong.length, wrong.join('\n')).toBeLessThanOrEqual(2);
    expect(agree).toBeGreaterThanOrEqual(2 * lines.length - 2);
  });

  it('lets multiple_kprobes.tc find 256 probe points at +5', () => {
    let n = 0;
    for (const f of t.functions) {
      if (f.module || f.type.toLowerCase() !== 't' || f.name.includes('.')) continue;
      if (probe(f.name, 5) === 'ok' && ++n === 256) break;
    }
    expect(n).toBe(256);
  });

  it('moves an entry probe past endbr64 and knows the ftrace site', () => {
    const [vfsRead] = t.byName('vfs_read');
    const entry = kprobeSite(k, vfsRead!.addr);
    expect(entry).toMatchObject({ ok: true, offset: 4, onFuncEntry: true, ftrace: true });
    expect(kprobeSite(k, vfsRead!.addr + 4n)).toMatchObject({ ok: true, offset: 4, onFuncEntry: true });
    expect(kprobeSite(k, vfsRead!.addr + 9n)).toMatchObject({ ok: true, offset: 9, onFuncEntry: false, ftrace: false });
    expect(kprobeSite(k, vfsRead!.addr + 5n)).toMatchObject({ ok: false, errno: 'EILSEQ' });
    const [openat2] = t.byName('do_sys_openat2');
    expect(kprobeSite(k, openat2!.addr)).toMatchObject({ ok: true, offset: 0, onFuncEntry: true, ftrace: true });
    expect(kprobeSite(k, openat2!.addr + 5n)).toMatchObject({ ok: true });
  });

  it('refuses notrace functions, the blacklist and prefix padding with EINVAL', () => {
    expect(kprobeSite(k, t.byName('pmd_leaf')[0]?.addr ?? t.byName('__pfx_vfs_read')[0]!.addr)).toMatchObject({ ok: false, errno: 'EINVAL' });
    expect(kprobeSite(k, t.byName('__pfx_vfs_read')[0]!.addr)).toMatchObject({ ok: false, errno: 'EINVAL' });
    const bl = k.kprobeBlacklist.entries.find((e) => e.name === 'asm_exc_int3')!;
    expect(bl).toBeDefined();
    expect(t.lookup(bl.start)!.sym.name).toBe('asm_exc_int3');
    expect(kprobeSite(k, bl.start, false)).toMatchObject({ ok: false, errno: 'EINVAL', why: 'blacklist' });
    expect(kprobeSite(k, t.lookupName('linux_proc_banner')!.addr)).toMatchObject({ ok: false, errno: 'EINVAL' });
  });

  it('accepts what probepoint.tc does on tracefs_create_dir', () => {
    // set_offs from `grep -v __pfx_ /proc/kallsyms | grep -A1 -B1 tracefs_create_dir`.
    const [f] = t.byName('tracefs_create_dir');
    const next = t.functions[f!.id + 2]!; // __pfx_ of the next function, then the function
    expect(next.name).toBe('tracefs_remove');
    expect(kprobeSite(k, f!.addr).ok).toBe(true);
    expect(kprobeSite(k, next.addr).ok).toBe(true); // tracefs_create_dir+NEXT
  });
});

describe('instruction boundaries', () => {
  const k = testEmulator().kernel;
  const t = k.symbols;

  it('uses the real boundaries of the functions probed on the real kernel', () => {
    const [vfsRead] = t.byName('vfs_read');
    expect(k.insns.boundaries(vfsRead!).slice(0, 8)).toEqual([0, 4, 9, 16, 21, 24, 32, 37]);
    const [openat2] = t.byName('do_sys_openat2');
    expect(k.insns.boundaries(openat2!).slice(0, 4)).toEqual([0, 5, 7, 10]);
    const [clone] = t.byName('kernel_clone');
    expect(k.insns.boundaries(clone!).slice(0, 6)).toEqual([0, 4, 9, 13, 18, 23]);
  });

  it('models the others: endbr64, the __fentry__ call, then plausible instructions', () => {
    const model = new InsnModel();
    const [ksysRead] = t.byName('ksys_read');
    expect(ksysRead).toMatchObject({ traceable: true, fentryOffset: 4 });
    const b = model.boundaries(ksysRead!);
    expect(b.slice(0, 3)).toEqual([0, 4, 9]);
    for (const o of [1, 2, 3, 5, 6, 7, 8]) expect(model.isInsnBoundary(ksysRead!, o)).toBe(false);
    expect(b[b.length - 1]!).toBeLessThan(ksysRead!.size);
    const avg = ksysRead!.size / b.length;
    expect(avg).toBeGreaterThan(3);
    expect(avg).toBeLessThan(6);
    // Deterministic.
    expect(new InsnModel().boundaries(ksysRead!)).toEqual(b);
    const fentry0 = t.traceable().find((f) => f.fentryOffset === 0 && f.size > 32 && f.name.startsWith('ksys_'))!;
    expect(model.boundaries(fentry0).slice(0, 2)).toEqual([0, 5]);
    expect(model.isInsnBoundary(fentry0, -1)).toBe(false);
    expect(model.isInsnBoundary(fentry0, fentry0.size)).toBe(false);
  });
});
