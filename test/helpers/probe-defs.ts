/**
 * The differential table of probe definitions (tools/probe-defs/collect.mjs):
 * test/fixtures/probe-defs.SERIES.json.br, what the real kernel of a series
 * answered to every row, and the helpers both replays of it share.
 */
import { readFileSync } from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';
import type { Series } from '../../src/kernel/series.js';
import { DynEventRegistry, type DynEventFile } from '../../src/trace/dynevent/trace_dynevent.js';
import type { EventField } from '../../src/trace/event_type.js';
import type { ProbeEnv } from '../../src/trace/probe/probe_env.js';
import { ProbeDynEvent } from '../../src/trace/probe/trace_probe.js';

export interface LogRow {
  subsystem: string;
  message: string;
  command: string;
  /** null: the kernel printed it from a pointer difference (not reproducible); compared by presence. */
  caret: number | null;
}

export interface Row {
  /** section/index */
  id: string;
  file: DynEventFile;
  /** The command as written (the real kernel's addresses in it). */
  def: string;
  /** The same with {{ADDR:sym}} where the guest put addresses. */
  template?: string;
  /** The real kernel's address of every {{ADDR:sym}} of the row and its setup ('' for none). */
  addrs?: Record<string, string>;
  setup: { file: DynEventFile; def: string; errno: string | 0 }[];
  errno: string | 0;
  errorLog: LogRow[];
  listing: string[];
  fileListing?: string[];
  /** events/GROUP/EVENT/format of every event the row added. */
  formats: Record<string, string>;
}

export interface Table {
  series: Series;
  kernel: string;
  cpus: number;
  rows: Row[];
}

/** The table, with the fields the collector leaves out when empty put back. */
export function loadTable(series: Series, file: URL | string = new URL(`../fixtures/probe-defs.${series}.json.br`, import.meta.url)): Table {
  const raw = brotliDecompressSync(readFileSync(file));
  const t = JSON.parse(raw.toString('latin1')) as Table;
  for (const r of t.rows) {
    r.setup ??= [];
    r.errorLog ??= [];
    r.listing ??= [];
    r.formats ??= {};
    if (r.file !== 'dynamic_events') r.fileListing ??= [];
  }
  return t;
}

/** The rows by section (the part of the id before the slash), in table order. */
export function sections(rows: readonly Row[]): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  for (const r of rows) {
    const s = r.id.slice(0, r.id.lastIndexOf('/'));
    if (!out.has(s)) out.set(s, []);
    out.get(s)!.push(r);
  }
  return out;
}

/** Hashed pointers (`%p`) differ from boot to boot: compare them as a placeholder. */
export const unhash = (s: string): string => s.replace(/(^|[ _])0x[0-9a-f]{16}\b/g, '$10xHASH');

/**
 * The definition for this kernel (addresses of its own symbols where the
 * real kernel had {{ADDR:sym}}), and the real kernel's addresses in the
 * expected output turned into this kernel's.
 */
export function localize(row: Row, addrOf: (sym: string) => bigint | undefined): { def: string; expand: (s: string) => string; relocate: (s: string) => string } {
  const mine = (sym: string): string => {
    const a = sym.includes(':') ? undefined : addrOf(sym);
    return a === undefined ? '' : `0x${a.toString(16)}`;
  };
  // as the collector's guest-writer.c expands them: up to the next `}}`
  const expand = (s: string): string => {
    let out = '';
    for (let at = 0; ; ) {
      const open = s.indexOf('{{ADDR:', at);
      const close = open < 0 ? -1 : s.indexOf('}}', open + 7);
      if (close < 0) return out + s.slice(at);
      out += s.slice(at, open) + mine(s.slice(open + 7, close));
      at = close + 2;
    }
  };
  const addrs = new Map(Object.entries(row.addrs ?? {}).filter(([, a]) => a !== '').map(([sym, a]) => [a, mine(sym)]));
  return { def: expand(row.template ?? row.def), expand, relocate: (s) => s.replace(/0x[0-9a-f]{16}/g, (a) => addrs.get(a) ?? a) };
}

/** A row's failure: its id, its definition, and what differed. */
export const miss = (row: Row, what: string, got: unknown, want: unknown): string =>
  `${row.id} ${JSON.stringify(row.def)}\n    ${what}: got ${JSON.stringify(got)}\n    ${' '.repeat(what.length)}  want ${JSON.stringify(want)}`;

export const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

const COMMON = 4;

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

/** What differs between the emulator and the kernel on one row (undefined: nothing). */
export function checkParsers(env: ProbeEnv, row: Row): string | undefined {
  const reg = new DynEventRegistry(env);
  const { def, expand, relocate } = localize(row, (sym) => env.kallsyms.lookupName(sym)?.addr);
  for (const s of row.setup) {
    const r = reg.write(s.file, expand(s.def));
    if (r.errno !== s.errno) return miss(row, `setup ${JSON.stringify(s.def)} errno`, r.errno, s.errno);
  }
  const r = reg.write(row.file, def);
  if (r.errno !== row.errno) return miss(row, 'errno', r.errno, row.errno);
  const log = r.log.map((e) => ({ subsystem: e.loc, message: e.message, command: e.command, caret: e.pos as number | null }));
  // a caret the kernel printed from a pointer difference is compared by presence only
  const want = row.errorLog.map((e, i) => ({ ...e, command: relocate(e.command), caret: e.caret ?? log[i]?.caret ?? null }));
  if (!same(log, want)) return miss(row, 'error_log', log, want);
  const lines = (file: DynEventFile): string[] => reg.listing(file).split('\n').filter(Boolean).map(unhash);
  const dyn = lines('dynamic_events');
  const wantDyn = row.listing.map((l) => unhash(relocate(l)));
  if (!same(dyn, wantDyn)) return miss(row, 'dynamic_events', dyn, wantDyn);
  if (row.fileListing) {
    const got = lines(row.file);
    const wantFile = row.fileListing.map((l) => unhash(relocate(l)));
    if (!same(got, wantFile)) return miss(row, row.file, got, wantFile);
  }
  for (const [key, text] of Object.entries(row.formats)) {
    const [system, hashedName] = key.split('/') as [string, string];
    // a hashed pointer in the name (p_0x...) is this kernel's own
    const name = /0x[0-9a-f]{16}/.test(hashedName)
      ? reg.list.map((e) => (e instanceof ProbeDynEvent ? e.tp.name : '')).find((n) => unhash(n) === unhash(hashedName)) ?? hashedName
      : hashedName;
    const ev = reg.event(system, name);
    if (!ev) return miss(row, `event ${key}`, undefined, 'defined');
    const mine = [...ev.fields.map(fieldLine), `print fmt: ${ev.printFmt}`];
    const tail = formatTail(text);
    if (!same(mine, tail)) return miss(row, `format of ${key}`, mine, tail);
  }
  return undefined;
}
