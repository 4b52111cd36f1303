/**
 * The static event catalogue: every TRACE_EVENT the real kernel of a series
 * has, with its id, fields and print fmt, as captured from its tracefs
 * (data/events-SERIES.json, made by tools/gen-event-catalogue.mjs).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Series } from '../../kernel/series.js';
import type { EventBtfIds, EventField } from '../event_type.js';
import { splitDecl } from './field_layout.js';

export interface StaticEventSpec {
  system: string;
  name: string;
  id: number;
  fields: EventField[];
  printFmt: string;
  btfIds?: EventBtfIds;
}

/** ftrace/* internal events: their formats, and which files their event directories hold. */
export interface InternalEventSpec extends StaticEventSpec {
  files: string[];
}

interface Catalogue {
  series: Series;
  /** In the kernel's list order (the order of available_events). */
  events: StaticEventSpec[];
  internal: InternalEventSpec[];
}

type RawField = [decl: string, offset: number, size: number, signed: 0 | 1];

interface RawCatalogue {
  fieldSets: RawField[][];
  fmts: string[];
  events: Array<[system: string, name: string, id: number, fieldSet: number, fmt: number, btf?: [obj: number, raw: number, tp: number]]>;
  internal: Array<{ name: string; id: number; fields: RawField[]; fmt: string; files: string[] }>;
}

function dataFile(name: string): string {
  // src/trace/events (tsx/vitest) or dist/src/trace/events (built): walk up to the package root.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const p = join(dir, 'data', name);
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  throw new Error(`tracefs-emu: data/${name} not found`);
}

function fields(raw: RawField[]): EventField[] {
  return raw.map(([decl, offset, size, signed]) => ({ ...splitDecl(decl), offset, size, signed: signed === 1 }));
}

const cache = new Map<Series, Catalogue>();

export function loadCatalogue(series: Series): Catalogue {
  let c = cache.get(series);
  if (c) return c;
  const raw = JSON.parse(readFileSync(dataFile(`events-${series}.json`), 'utf8')) as RawCatalogue;
  const sets = raw.fieldSets.map(fields);
  c = {
    series,
    events: raw.events.map(([system, name, id, fs, fmt, btf]) => ({
      system,
      name,
      id,
      fields: sets[fs],
      printFmt: raw.fmts[fmt],
      btfIds: btf && { obj: btf[0], raw: btf[1], tp: btf[2] },
    })),
    internal: raw.internal.map((e) => ({ system: 'ftrace', name: e.name, id: e.id, fields: fields(e.fields), printFmt: e.fmt, files: e.files })),
  };
  cache.set(series, c);
  return c;
}
