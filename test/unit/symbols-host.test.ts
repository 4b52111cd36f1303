import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { guessTraceable, hostSymbolSource, hostSymbols, parseKallsyms } from '../../src/host/symbols.js';
import { availableFilterFunctionsText, kallsymsText, sprintSymbol } from '../../src/kernel/kallsyms.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { builtinSymbols } from '../../src/kernel/symbols_builtin.js';
import { KallsymsTable } from '../../src/kernel/symbol_table.js';
import { testEmulator } from '../helpers/emulator.js';

const hostReadable = existsSync('/proc/kallsyms') && !readFileSync('/proc/kallsyms', 'latin1').startsWith('0000000000000000');

describe.each(SERIES)('the traceable-function guess, measured on the real %s', (series) => {
  it('finds nearly every traceable function and few others', () => {
    const real = builtinSymbols(series);
    const cols = real.columns;
    // What a host guess sees: kallsyms only.
    const g = guessTraceable({ ...cols, traceable: new Uint32Array(0), fentry: new Uint8Array(0) });
    const truth = new Set(Array.from(cols.traceable).filter((i) => !cols.mods[i]));
    const guessed = Array.from(g.traceable).filter((i) => !cols.mods[i]);
    const hits = guessed.filter((i) => truth.has(i)).length;
    const recall = hits / truth.size;
    const precision = hits / guessed.length;
    console.log(`host guess on ${series}: recall ${recall.toFixed(4)}, precision ${precision.toFixed(4)}`);
    expect(recall).toBeGreaterThan(0.99);
    expect(precision).toBeGreaterThan(0.9);
    // IBT kernel: __fentry__ after endbr64.
    expect(g.fentry.every((f) => f === 4)).toBe(true);
  });
});

describe('parsing /proc/kallsyms', () => {
  it('reads module symbols and /proc/modules regions', () => {
    const cols = parseKallsyms(
      [
        'ffffffff81000000 T _stext',
        'ffffffff81000100 T vfs_read',
        'ffffffff81000200 T _etext',
        'ffffffffc0002000 t virtnet_poll\t[virtio_net]',
        'ffffffffc0002100 t virtnet_open\t[virtio_net]',
        'ffffffffc0005000 d virtnet_data\t[virtio_net]',
      ].join('\n'),
      'virtio_net 20480 0 - Live 0xffffffffc0002000\n',
    );
    expect(cols.modules).toEqual([{ name: 'virtio_net', regions: [{ kind: 'text', start: 0xffffffffc0002000n, size: 20480 }] }]);
    const t = new KallsymsTable({ ...cols, ...guessTraceable(cols) });
    expect(t.traceable().map((f) => f.name)).toEqual(['vfs_read', 'virtnet_poll', 'virtnet_open']);
    expect(t.byName('virtnet_poll', 'virtio_net')[0]!.size).toBe(0x100);
    expect(sprintSymbol(t, 0xffffffffc0002108n)).toBe('virtnet_open+0x8/0x2f00 [virtio_net]');
    expect(availableFilterFunctionsText(t).toString()).toBe('vfs_read\nvirtnet_poll [virtio_net]\nvirtnet_open [virtio_net]\n');
    expect(kallsymsText(t).toString().split('\n')[3]).toBe('ffffffffc0002000 t virtnet_poll\t[virtio_net]');
  });
});

describe.skipIf(!hostReadable)('--symbols host on this machine', () => {
  it('mirrors the running kernel', () => {
    const t0 = performance.now();
    const t = hostSymbols();
    console.log(`host symbols: ${t.nrSymbols} symbols, ${t.traceable().length} guessed traceable, ${(performance.now() - t0).toFixed(0)} ms`);
    expect(t.byName('vfs_read')[0]).toMatchObject({ traceable: true, type: 'T' });
    expect(t.byName('__pfx_vfs_read')[0]?.traceable ?? false).toBe(false);
    expect(t.traceable().length).toBeGreaterThan(30_000);
    const k = testEmulator({ symbols: hostSymbolSource }).kernel;
    expect(k.symbols.functions).toBe(t.functions);
    expect(k.types.funcProto('vfs_read')!.params.map((p) => p.name)).toEqual(['file', 'buf', 'count', 'pos']);
  });
});
