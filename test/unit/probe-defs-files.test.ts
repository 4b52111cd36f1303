/**
 * The differential table through the real control files: every row of
 * test/fixtures/probe-defs.SERIES.json written with one write(2) to its file of
 * an emulator without dynamic events (after its setup writes), then the kernel's errno, the
 * error_log file, the dynamic_events and per-type listings, and the format
 * file of every event the row created.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/index.js';
import { testEmulator } from '../helpers/emulator.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import type { DynEventFile } from '../../src/trace/dynevent/trace_dynevent.js';
import { O_APPEND, O_TRUNC, O_WRONLY } from '../../src/tracefs/node.js';
import type { Tracefs } from '../../src/tracefs/tracefs.js';
import { testStatPath } from '../helpers/probe-env.js';

interface Row {
  id: string;
  file: DynEventFile;
  def: string;
  template?: string;
  setup: { file: DynEventFile; def: string; errno: string | 0 }[];
  errno: string | 0;
  errorLog: { subsystem: string; message: string; command: string; caret: number }[];
  listing: string[];
  fileListing?: string[];
  formats: Record<string, string>;
}

const table = (series: Series): { cpus: number; rows: Row[] } =>
  JSON.parse(readFileSync(new URL(`../fixtures/probe-defs.${series}.json`, import.meta.url), 'latin1'));

const unhash = (s: string): string => s.replace(/(^|[ _])0x[0-9a-f]{16}\b/g, '$10xHASH');

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

describe.each(SERIES)('probe definitions through the files on %s', (series) => {
  const { cpus, rows } = table(series);
  let emu: Emulator | undefined;
  for (const row of rows) {
    it(`${row.id} ${JSON.stringify(row.def).slice(0, 90)}`, async () => {
      emu = await emptied(emu, series, cpus);
      const { fs, kernel } = emu;
      const expand = (def: string): string =>
        def.replace(/\{\{ADDR:([^}]+)\}\}/g, (_, sym: string) => `0x${kernel.symbols.lookupName(sym)!.addr.toString(16)}`);
      for (const s of row.setup) expect(await append(fs, s.file, expand(s.def)), `setup ${s.def}`).toBe(s.errno);
      const before = new Set(lines(await fs.readFile('dynamic_events')));
      await fs.writeFile('error_log', '\n');
      const def = expand(row.template ?? row.def);
      const addrs = new Map<string, string>();
      const mine = [...def.matchAll(/0x[0-9a-f]{16}/g)];
      [...row.def.matchAll(/0x[0-9a-f]{16}/g)].forEach((m, i) => addrs.set(m[0], mine[i]?.[0] ?? m[0]));
      const relocate = (s: string): string => s.replace(/0x[0-9a-f]{16}/g, (a) => addrs.get(a) ?? a);

      expect(await append(fs, row.file, def)).toBe(row.errno);

      // error_log: `loc: error: msg`, the command, the caret (a caret past the command is the kernel's garbage)
      const log = lines(await fs.readFile('error_log')).map((l) => l.replace(/^\[\s*\d+\.\d+\] /, ''));
      const expected: string[] = [];
      row.errorLog.forEach((e, i) => {
        const caret = e.caret > e.command.length + 1 ? (log[i * 3 + 2]?.length ?? 0) - 12 : e.caret;
        expected.push(`${e.subsystem}: error: ${e.message}`, `  Command: ${relocate(e.command)}`, `${' '.repeat(11 + caret)}^`);
      });
      expect(log).toEqual(expected.slice(-24));

      const dyn = lines(await fs.readFile('dynamic_events'));
      expect(dyn.map(unhash)).toEqual(row.listing.map((l) => unhash(relocate(l))));
      if (row.fileListing) expect(lines(await fs.readFile(row.file)).map(unhash)).toEqual(row.fileListing.map((l) => unhash(relocate(l))));

      // the format of each event the row added, as events/<group>/<event>/format shows it
      const added = dyn.filter((l) => !before.has(l)).map((l) => l.split(' ')[0].replace(/^[^:]*:/, ''));
      const byUnhashed = new Map(added.map((k) => [unhash(k), k]));
      for (const [key, text] of Object.entries(row.formats)) {
        const mineKey = byUnhashed.get(unhash(key)) ?? key;
        const got = await fs.readFile(`events/${mineKey}/format`);
        expect(unhash(got), `format of ${key}`).toBe(unhash(text).replace(/^name: .*\n/, `name: ${unhash(mineKey.split('/')[1])}\n`));
      }
    });
  }
});
