import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  availableFilterFunctionsAddrsText,
  availableFilterFunctionsText,
  kallsymsText,
  sprintSymbol,
  sprintSymbolNoOffset,
} from '../../src/kernel/kallsyms.js';
import { builtinBtf, builtinSymbols } from '../../src/kernel/symbols_builtin.js';
import { memberPath } from '../../src/kernel/ctype_member.js';
import { protoText } from '../../src/kernel/ctype_decl.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { testEmulator } from '../helpers/emulator.js';

/** sha256 of the real kernels' files (the census data/kernel-SERIES was built from: tools/kernel-data/README.md), without module lines. */
const CENSUS_SHA256: Record<Series, Record<string, string>> = {
  '7.2': {
    kallsyms: '48de52b5e1b986af374fc11e561d0be174c1d0478d7b25a6d74652a55d0de2c4',
    available_filter_functions: '1c4741261fcd97d45d441a46aa665a5d1aed45d1b2d6249097652593f51a1d7b',
    available_filter_functions_addrs: '8e31414f93464e9f1d1f82b1ff6de79295825310b27cc5aa0b8b4ec94d07845e',
  },
  '7.3': {
    kallsyms: 'c3816a97898f45e058107a5a36170e78f8bdc7653c57d42cc6f7b572c00456ab',
    available_filter_functions: '5ac5152e90911934e5ddc21f91b6b6af62665246faf13ea96fa0c96a457579c8',
    available_filter_functions_addrs: 'ecdf64b031bb7c0a9ec46f86dc55df57ac19fad7091a117ab2f13bafde51523f',
  },
  '6.12': {
    kallsyms: 'edac4faebfb8f20e733fe7e7c1ec8e54170a1cfd4b439abe84dd6a6a27e4b25a',
    available_filter_functions: '9d0db4f59ab07ff288f229499953e8bd340890de40af501c54da870fa88c2260',
    available_filter_functions_addrs: 'c450fd4cd23fe48c2262e5c47f063de08e242081eb070e61a0dd22d02d449212',
  },
};

const withoutModules = (b: Buffer): Buffer =>
  Buffer.from(
    b
      .toString('latin1')
      .split('\n')
      .filter((l) => !/[\t ]\[[\w-]+\]$/.test(l))
      .join('\n'),
    'latin1',
  );
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe.each(SERIES)('built-in model %s', (series) => {
  const t0 = performance.now();
  const t = builtinSymbols(series);
  const loadMs = performance.now() - t0;

  it('loads fast and lists the real kernel functions', () => {
    console.log(`symbols ${series}: ${t.nrSymbols} symbols, ${t.functions.length} functions, ${t.traceable().length} traceable, loaded in ${loadMs.toFixed(0)} ms`);
    expect(t.traceable().length).toBeGreaterThanOrEqual(40_000);
    expect(loadMs).toBeLessThan(1000);
  });

  it('renders available_filter_functions, _addrs and kallsyms as the real kernel did', () => {
    const files = {
      available_filter_functions: availableFilterFunctionsText(t),
      available_filter_functions_addrs: availableFilterFunctionsAddrsText(t),
      kallsyms: kallsymsText(t),
    };
    for (const [name, text] of Object.entries(files)) {
      const vmlinux = withoutModules(text);
      expect(sha(vmlinux), name).toBe(CENSUS_SHA256[series][name]);
    }
  });

  it('renders once: later calls are free', () => {
    availableFilterFunctionsText(t);
    const t1 = performance.now();
    for (let i = 0; i < 100; i++) availableFilterFunctionsText(t);
    expect(performance.now() - t1).toBeLessThan(5);
  });

  it('shows a few loaded modules, as the kernel lists them', () => {
    expect(t.modules.map((m) => m.name)).toEqual(['failover', 'net_failover', 'virtio_net', 'virtio_blk']);
    const aff = availableFilterFunctionsText(t).toString('latin1');
    expect(aff).toMatch(/^virtnet_poll \[virtio_net\]$/m);
    expect(availableFilterFunctionsAddrsText(t).toString('latin1')).toMatch(/^ffffffffc[0-9a-f]{7} virtnet_poll \[virtio_net\]$/m);
    expect(kallsymsText(t).toString('latin1')).toMatch(/^ffffffffc[0-9a-f]{7} t virtnet_poll\t\[virtio_net\]$/m);
    // Exported module functions are upper case in kallsyms.
    expect(kallsymsText(t).toString('latin1')).toMatch(/^ffffffffc[0-9a-f]{7} T failover_register\t\[failover\]$/m);
    // vmlinux functions first, then modules in load order.
    const last = t.traceable()[t.traceable().length - 1]!;
    expect(last.module).toBe('virtio_blk');
    const [poll] = t.byName('virtnet_poll', 'virtio_net');
    expect(poll).toMatchObject({ module: 'virtio_net', traceable: true, type: 't' });
    expect(t.byName('virtnet_poll', '')).toEqual([]);
    expect(sprintSymbol(t, poll!.addr + 4n)).toBe(`virtnet_poll+0x4/0x${poll!.size.toString(16)} [virtio_net]`);
    expect(sprintSymbolNoOffset(t, poll!.addr)).toBe('virtnet_poll [virtio_net]');
  });

  it('resolves BTF arguments and field offsets', () => {
    const btf = builtinBtf(series);
    expect(protoText(btf.funcProto('vfs_read')!, 'vfs_read')).toBe('ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)');
    const off = (s: string, p: string): number => memberPath(btf.struct(s)!, p.split('.'))!.bitOffset / 8;
    expect(off('file', 'f_path')).toBe(64);
    expect(off('path', 'dentry')).toBe(8);
    expect(off('dentry', 'd_name')).toBe(32);
    expect(off('qstr', 'name')).toBe(8);
    expect(off('dentry', 'd_name.name')).toBe(40);
    expect(protoText(btf.funcProto('kernel_clone')!, 'kernel_clone')).toBe('pid_t kernel_clone(struct kernel_clone_args *args)');
    expect(btf.funcProto('do_exit')!.params[0]!.name).toBe('code');
  });
});

describe('symbol lookups (7.2)', () => {
  const t = builtinSymbols('7.2');

  it('finds functions by name with real addresses, sizes and fentry offsets', () => {
    const [vfsRead] = t.byName('vfs_read');
    expect(vfsRead).toMatchObject({ name: 'vfs_read', type: 'T', size: 0x490, traceable: true, fentryOffset: 4, module: undefined });
    expect(vfsRead!.addr).toBe(0xffffffff9c8221b0n);
    expect(t.functions[vfsRead!.id]).toBe(vfsRead);
    const [openat2] = t.byName('do_sys_openat2');
    expect(openat2).toMatchObject({ size: 0xe0, traceable: true, fentryOffset: 0 });
    expect(sprintSymbol(t, vfsRead!.addr + 4n)).toBe('vfs_read+0x4/0x490');
    expect(sprintSymbol(t, openat2!.addr)).toBe('do_sys_openat2+0x0/0xe0');
    expect(sprintSymbolNoOffset(t, vfsRead!.addr + 0x20n)).toBe('vfs_read');
  });

  it('looks addresses up to the containing symbol', () => {
    const [vfsRead] = t.byName('vfs_read');
    expect(t.lookup(vfsRead!.addr + 0x48fn)).toMatchObject({ sym: { name: 'vfs_read' }, offset: 0x48f });
    // Right after it comes the next function's __pfx_ padding.
    expect(t.lookup(vfsRead!.addr + 0x490n)!.sym.name).toBe('__pfx___kernel_write_iter');
    // Aliases: the first symbol at an address wins, as in kallsyms_lookup().
    const [stext] = t.symbolsByName('_stext');
    expect(t.lookup(stext!.addr)!.sym.name).toBe('srso_alias_untrain_ret');
    expect(t.lookup(0x1000n)).toBeUndefined();
    expect(sprintSymbol(t, 0x1000n)).toBe('0x1000');
  });

  it('keeps non-unique names apart', () => {
    const all = t.byName('name_show');
    expect(all.length).toBe(12);
    expect(new Set(all.map((f) => f.addr)).size).toBe(12);
    expect(all.every((f) => f.type === 't')).toBe(true);
    expect(t.byName('name_show', '')).toHaveLength(12);
    expect(t.byName('name_show', 'virtio_net')).toHaveLength(0);
    expect(t.byName('no_such_function')).toEqual([]);
  });

  it('lists data symbols for @symbol fetches and kallsyms', () => {
    const [banner] = t.symbolsByName('linux_proc_banner');
    expect(banner).toMatchObject({ name: 'linux_proc_banner', type: 'D' });
    expect(t.byName('linux_proc_banner')).toEqual([]);
    expect(t.lookupName('_sdata')).toMatchObject({ type: 'T' });
    expect(t.lookupName('jiffies')).toBeDefined();
  });

  it('marks __pfx_, .cold and init functions untraceable', () => {
    expect(t.byName('__pfx_vfs_read')[0]).toMatchObject({ traceable: false, size: 16 });
    const cold = t.functions.filter((f) => f.name.includes('.cold'));
    expect(cold.length).toBeGreaterThan(1000);
    expect(cold.some((f) => f.traceable)).toBe(false);
    expect(t.byName('start_kernel')[0]!.traceable).toBe(false);
  });
});

describe('Kernel wiring', () => {
  it('exposes symbols and types on the kernel, shared between kernels', () => {
    const a = testEmulator().kernel;
    const b = testEmulator().kernel;
    expect(a.symbolSource).toBe('builtin');
    expect(a.symbols.functions).toBe(b.symbols.functions); // one symbol data, a view of it per kernel (its own modules)
    expect(a.types.funcProto('vfs_read')).toBeDefined();
    expect(a.moduleTypes('virtio_net')!.struct('virtnet_info')).toBeDefined();
    expect(a.moduleTypes('no_such_module')).toBeUndefined();
  });

  it('uses the 6.12 model for the 6.12 series', () => {
    const k = testEmulator({ series: '6.12' }).kernel;
    expect(k.symbols.traceable().length).toBe(42862 + 161);
    expect(k.symbols).not.toBe(testEmulator().kernel.symbols);
  });
});
