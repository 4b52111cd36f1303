/** The facts tests compare against, kept in test/fixtures (see the README of each folder). */
import { readFileSync } from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';
import type { Series } from '../../src/kernel/series.js';

const FIXTURES = new URL('../fixtures/', import.meta.url);

/** A file of test/fixtures as latin1 text; a `.br` file is decompressed first. */
export function fixtureText(path: string): string {
  const raw = readFileSync(new URL(path, FIXTURES));
  return (path.endsWith('.br') ? brotliDecompressSync(raw) : raw).toString('latin1');
}

/** One output of the real kernel's tracefs, from the reference runs (test/fixtures/kernel-SERIES/samples/NAME). */
export function kernelSample(series: Series, name: string): string {
  return fixtureText(`kernel-${series}/samples/${name}`);
}
