/**
 * The differential table: every definition the real kernels were given
 * (tools/probe-defs/collect.mjs, test/fixtures/probe-defs.SERIES.json), replayed
 * against the probe parsers and the dynamic-event registry. Each row must
 * give the kernel's errno, error_log entries (subsystem, message, command,
 * caret), dynamic_events listing and event formats.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { DynEventRegistry, type DynEventFile } from '../../src/trace/dynevent/trace_dynevent.js';
import { ProbeDynEvent } from '../../src/trace/probe/trace_probe.js';
import type { EventField } from '../../src/trace/event_type.js';
import { testProbeEnv } from '../helpers/probe-env.js';

interface LogRow {
  subsystem: string;
  message: string;
  command: string;
  caret: number;
}
interface Row {
  id: string;
  section: string;
  file: DynEventFile;
  def: string;
  template?: string;
  setup: { file: DynEventFile; def: string; errno: string | 0 }[];
  errno: string | 0;
  errorLog: LogRow[];
  listing: string[];
  fileListing?: string[];
  formats: Record<string, string>;
}

const COMMON = 4;

/** Hashed pointers (`%p`) differ from boot to boot: compare them as a placeholder. */
const unhash = (s: string): string => s.replace(/(^|[ _])0x[0-9a-f]{16}\b/g, '$10xHASH');

/** A field line of a format file (f_show()). */
function fieldLine(f: EventField): string {
  const lb = f.type.indexOf('[');
  const decl = lb >= 0 && !f.type.startsWith('__data_loc') ? `${f.type.slice(0, lb)} ${f.name}${f.type.slice(lb)}` : `${f.type} ${f.name}`;
  return `\tfield:${decl};\toffset:${f.offset};\tsize:${f.size};\tsigned:${f.signed ? 1 : 0};`;
}

/** The part of a format file after the common fields. */
function formatTail(text: string): string[] {
  return text.split('\n').slice(3 + COMMON + 1).filter((l) => l !== '');
}

function load(series: Series): Row[] {
  return JSON.parse(readFileSync(new URL(`../fixtures/probe-defs.${series}.json`, import.meta.url), 'latin1')).rows as Row[];
}

describe.each(SERIES)('probe definitions on %s', (series) => {
  const rows = load(series);
  const { env } = testProbeEnv(series);

  it('has the table', () => {
    expect(rows.length).toBeGreaterThanOrEqual(200);
  });

  for (const row of rows) {
    it(`${row.id} ${JSON.stringify(row.def).slice(0, 100)}`, () => {
      const reg = new DynEventRegistry(env);
      // addresses differ from the real kernel's (KASLR): use the emulated kernel's
      const expand = (def: string): string =>
        def.replace(/\{\{ADDR:([^}]+)\}\}/g, (_, sym: string) => `0x${env.kallsyms.lookupName(sym)!.addr.toString(16)}`);
      for (const s of row.setup) {
        const r = reg.write(s.file, expand(s.def));
        expect(r.errno, `setup ${s.def}`).toBe(s.errno);
      }
      const def = expand(row.template ?? row.def);
      // the real kernel's addresses, as this kernel's
      const addrs = new Map<string, string>();
      const mine = [...def.matchAll(/0x[0-9a-f]{16}/g)];
      [...row.def.matchAll(/0x[0-9a-f]{16}/g)].forEach((m, i) => addrs.set(m[0], mine[i]?.[0] ?? m[0]));
      const relocate = (s: string): string => s.replace(/0x[0-9a-f]{16}/g, (a) => addrs.get(a) ?? a);
      const r = reg.write(row.file, def);
      expect(r.errno).toBe(row.errno);
      const log = r.log.map((e) => ({ subsystem: e.loc, message: e.message, command: e.command, caret: e.pos }));
      // a caret past the command is garbage in the kernel (parse_btf_field's NULL - pointer)
      const expected = row.errorLog.map((e) => ({
        ...e,
        command: relocate(e.command),
        caret: e.caret > e.command.length + 1 ? (log.find((l) => l.message === e.message)?.caret ?? -1) : e.caret,
      }));
      expect(log).toEqual(expected);
      const lines = (file: DynEventFile): string[] => reg.listing(file).split('\n').filter(Boolean).map(unhash);
      expect(lines('dynamic_events')).toEqual(row.listing.map((l) => unhash(relocate(l))));
      if (row.fileListing) expect(lines(row.file)).toEqual(row.fileListing.map((l) => unhash(relocate(l))));
      for (const [key, text] of Object.entries(row.formats)) {
        const [system, hashedName] = key.split('/');
        // a hashed pointer in the name (p_0x...) is this kernel's own
        const name = /0x[0-9a-f]{16}/.test(hashedName)
          ? reg.list.map((e) => (e instanceof ProbeDynEvent ? e.tp.name : '')).find((n) => unhash(n) === unhash(hashedName)) ?? hashedName
          : hashedName;
        const ev = reg.event(system, name);
        expect(ev, `event ${key}`).toBeDefined();
        const mine = [...ev!.fields.map(fieldLine), `print fmt: ${ev!.printFmt}`];
        expect(mine, `format of ${key}`).toEqual(formatTail(text));
      }
    });
  }
});
