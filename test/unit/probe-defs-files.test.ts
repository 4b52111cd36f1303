/**
 * The differential table through the real control files: every hand-written
 * row of test/fixtures/probe-defs.SERIES.json.br and one in GEN_STRIDE of the
 * generated ones, written with one write(2) to its file of
 * an emulator without dynamic events (after its setup writes), then the kernel's errno, the
 * error_log file, the dynamic_events and per-type listings, and the format
 * file of every event the row created.
 */
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/index.js';
import { testEmulator } from '../helpers/emulator.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { O_APPEND, O_TRUNC, O_WRONLY } from '../../src/tracefs/node.js';
import type { Tracefs } from '../../src/tracefs/tracefs.js';
import { testStatPath } from '../helpers/probe-env.js';
import { loadTable, localize, miss, same, sections, unhash, type Row } from '../helpers/probe-defs.js';

/** Every generated row goes through the parsers (probe-defs.test.ts); one in GEN_STRIDE through the files too. */
const GEN_STRIDE = 10;

/** One write(2) of the whole text, appending (`cat /tmp/d >> file`). */
async function append(fs: Tracefs, path: string, text: string): Promise<string | 0> {
  const h = await fs.open(path, O_WRONLY | O_APPEND);
  try {
    await h.write(Buffer.from(text, 'latin1'), 0);
    return 0;
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  } finally {
    h.release();
  }
}

const lines = (s: string): string[] => s.split('\n').filter(Boolean);

/**
 * An emulator with no dynamic event: the previous row's, emptied as the
 * collector empties the real kernel between rows (eprobes first, then
 * `echo > dynamic_events`), or a new one when that leaves anything behind.
 * Making one costs several times a row.
 */
async function emptied(prev: Emulator | undefined, series: Series, cpus: number): Promise<Emulator> {
  if (prev) {
    const eprobes = lines(await prev.fs.readFile('dynamic_events')).filter((l) => l.startsWith('e:'));
    for (const e of eprobes) await append(prev.fs, 'dynamic_events', `-:${e.split(' ')[0]!.slice(2)}`);
    const h = await prev.fs.open('dynamic_events', O_WRONLY | O_TRUNC);
    let ok = true;
    try {
      await h.write(Buffer.from('\n'), 0);
    } catch {
      ok = false;
    } finally {
      h.release();
    }
    if (ok && (await prev.fs.readFile('dynamic_events')) === '') return prev;
  }
  const emu = testEmulator({ series, cpus });
  emu.tracing.dynEvents.statPath = testStatPath;
  return emu;
}

/** What differs between the emulator's files and the kernel's on one row (undefined: nothing). */
async function check(emu: Emulator, row: Row): Promise<string | undefined> {
  const { fs, kernel } = emu;
  const { def, expand, relocate } = localize(row, (sym) => kernel.symbols.lookupName(sym)?.addr);
  for (const s of row.setup) {
    const e = await append(fs, s.file, expand(s.def));
    if (e !== s.errno) return miss(row, `setup ${JSON.stringify(s.def)} errno`, e, s.errno);
  }
  const before = new Set(lines(await fs.readFile('dynamic_events')));
  await fs.writeFile('error_log', '\n');
  const errno = await append(fs, row.file, def);
  if (errno !== row.errno) return miss(row, 'errno', errno, row.errno);

  // error_log: `loc: error: msg`, the command, the caret (one printed from a pointer difference by presence)
  const log = lines(await fs.readFile('error_log')).map((l) => l.replace(/^\[\s*\d+\.\d+\] /, ''));
  const expected: string[] = [];
  row.errorLog.forEach((e, i) => {
    const caret = e.caret ?? (log[i * 3 + 2]?.length ?? 0) - 12;
    expected.push(`${e.subsystem}: error: ${e.message}`, `  Command: ${relocate(e.command)}`, `${' '.repeat(11 + caret)}^`);
  });
  if (!same(log, expected.slice(-24))) return miss(row, 'error_log', log, expected.slice(-24));

  const dyn = lines(await fs.readFile('dynamic_events'));
  const wantDyn = row.listing.map((l) => unhash(relocate(l)));
  if (!same(dyn.map(unhash), wantDyn)) return miss(row, 'dynamic_events', dyn.map(unhash), wantDyn);
  if (row.fileListing) {
    const got = lines(await fs.readFile(row.file)).map(unhash);
    const want = row.fileListing.map((l) => unhash(relocate(l)));
    if (!same(got, want)) return miss(row, row.file, got, want);
  }

  // the format of each event the row added, as events/<group>/<event>/format shows it
  const added = dyn.filter((l) => !before.has(l)).map((l) => l.split(' ')[0]!.replace(/^[^:]*:/, ''));
  const byUnhashed = new Map(added.map((k) => [unhash(k), k]));
  for (const [key, text] of Object.entries(row.formats)) {
    const mineKey = byUnhashed.get(unhash(key)) ?? key;
    const got = unhash(await fs.readFile(`events/${mineKey}/format`));
    const want = unhash(text).replace(/^name: .*\n/, `name: ${unhash(mineKey.split('/')[1]!)}\n`);
    if (got !== want) return miss(row, `format of ${key}`, got, want);
  }
  return undefined;
}

describe.each(SERIES)('probe definitions through the files on %s', (series) => {
  const { cpus, rows } = loadTable(series);
  let emu: Emulator | undefined;
  for (const [section, all] of sections(rows)) {
    const part = section.startsWith('gen-') ? all.filter((_, i) => i % GEN_STRIDE === 0) : all;
    it(`${section} (${part.length} rows)`, async () => {
      const misses: string[] = [];
      for (const row of part) {
        emu = await emptied(emu, series, cpus);
        const m = await check(emu, row);
        if (m) misses.push(m);
      }
      expect(misses.length, `${misses.length} of ${part.length} rows differ from the kernel:\n${misses.join('\n')}`).toBe(0);
    });
  }
});
