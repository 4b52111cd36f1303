#!/usr/bin/env node
// Writes test/fixtures/kernel-SERIES/events/ from the output of
// tools/oracle/event-census.sh: the format and id listings brotli-compressed
// (about 1.2 MB of text each series), the two header files as they are.
//
//   node tools/oracle/event-census-fixtures.mjs SERIES OUTDIR
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants as zc } from 'node:zlib';

const [series, dir] = process.argv.slice(2);
if (!series || !dir) {
  console.error('usage: event-census-fixtures.mjs SERIES OUTDIR');
  process.exit(2);
}
const out = new URL(`../../test/fixtures/kernel-${series}/events/`, import.meta.url);
mkdirSync(out, { recursive: true });
const br = (b) =>
  brotliCompressSync(b, { params: { [zc.BROTLI_PARAM_QUALITY]: 11, [zc.BROTLI_PARAM_MODE]: zc.BROTLI_MODE_TEXT, [zc.BROTLI_PARAM_SIZE_HINT]: b.length } });
writeFileSync(new URL('formats.txt.br', out), br(readFileSync(join(dir, 'event-formats'))));
writeFileSync(new URL('ids.txt.br', out), br(readFileSync(join(dir, 'event-ids'))));
for (const f of ['header_page', 'header_event']) copyFileSync(join(dir, f), new URL(f, out));
console.log(`${readFileSync(join(dir, 'uname'), 'latin1').trim()}\n-> ${out.pathname}`);
