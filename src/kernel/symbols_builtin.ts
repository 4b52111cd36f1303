/**
 * The built-in kernel model: the symbols and BTF of Debian's real 7.2 (and
 * 6.12) kernel, captured by tools/kernel-data/build.mjs into
 * data/kernel-<series>/. Loaded once per process and shared by every
 * emulated kernel (the tables are immutable).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync } from 'node:zlib';
import { Btf } from './btf.js';
import { encodeModuleBtf } from './btf_encode.js';
import { KernelText } from './kernel_text.js';
import { DEFAULT_SERIES, profileOf, type Series } from './series.js';
import { withLoadableModules } from './module.js';
import { decodeSymbolData } from './symbol_data.js';
import { KallsymsTable } from './symbol_table.js';

/** The directory holding data/kernel-* (found by walking up: the code runs from src/ or dist/src/). */
export function dataDir(): string {
  const marker = `kernel-${profileOf(DEFAULT_SERIES).dataSeries}`;
  let d = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const c = join(d, 'data');
    if (existsSync(join(c, marker))) return c;
    d = dirname(d);
  }
  throw new Error(`tracefs-emu: data/${marker} not found`);
}

/** Directory of the data of a series. */
export function seriesDir(series: Series): string {
  return join(dataDir(), `kernel-${series}`);
}

function readBrotli(path: string): Buffer {
  return brotliDecompressSync(readFileSync(path));
}

const tables = new Map<Series, KallsymsTable>();
const btfs = new Map<Series, Btf>();
const moduleBtfs = new Map<string, Btf | null>();

export function builtinSymbols(series: Series): KallsymsTable {
  let t = tables.get(series);
  if (!t) {
    t = new KallsymsTable(withLoadableModules(decodeSymbolData(readBrotli(join(seriesDir(series), 'symbols.bin.br'))), profileOf(series).sampleModules));
    tables.set(series, t);
  }
  return t;
}

export function builtinBtf(series: Series): Btf {
  let b = btfs.get(series);
  if (!b) {
    b = Btf.parse(readBrotli(join(seriesDir(series), 'vmlinux.btf.br')));
    btfs.set(series, b);
  }
  return b;
}

/** The split BTF of a module (as /sys/kernel/btf/<module> would give), if it has one: captured, or a sample module's own. */
export function builtinModuleBtf(series: Series, module: string): Btf | undefined {
  const key = `${series}/${module}`;
  let b = moduleBtfs.get(key);
  if (b === undefined) {
    const path = join(seriesDir(series), `${module}.btf.br`);
    const sample = profileOf(series).sampleModules.find((d) => d.name === module)?.btf;
    const base = builtinBtf(series);
    b = existsSync(path) ? Btf.parse(readBrotli(path), base) : sample ? Btf.parse(encodeModuleBtf(sample, base), base) : null;
    moduleBtfs.set(key, b);
  }
  return b ?? undefined;
}

/** /sys/kernel/debug/kprobes/blacklist of the real kernel ('' if not captured). */
export function builtinKprobeBlacklist(series: Series): string {
  const path = join(seriesDir(series), 'kprobe-blacklist.txt.br');
  return existsSync(path) ? readBrotli(path).toString('latin1') : '';
}

/** The real kernel's text (text.bin.br): a loader, if shipped for the series. */
export function builtinText(series: Series): (() => KernelText) | undefined {
  const path = join(seriesDir(series), 'text.bin.br');
  return existsSync(path) ? () => new KernelText(readBrotli(path)) : undefined;
}

/** The real kernel's direct calls (call-sites.bin.br), if shipped for the series. */
export function builtinCallSites(series: Series): Uint8Array | undefined {
  const path = join(seriesDir(series), 'call-sites.bin.br');
  return existsSync(path) ? readBrotli(path) : undefined;
}
