#!/usr/bin/env node
/**
 * Generates data/events-SERIES.json, the static trace event catalogue, from a
 * census of a real kernel's tracefs.
 *
 *   node tools/gen-event-catalogue.mjs CENSUS_ROOT [SERIES...]
 *
 * CENSUS_ROOT/SERIES holds a census captured with the kernel oracle
 * (../shared/tools/kernel-oracle beside the repository:
 * [--series X.Y] --out DIR run -), with a snippet of this shape:
 *
 *   for f in events/*\/*\/format; do echo "== $f"; cat $f; done > $KORACLE_OUT/event-formats
 *   for f in events/*\/*\/id; do echo "$f $(cat $f)"; done > $KORACLE_OUT/event-ids
 *   busybox ls -laR /sys/kernel/tracing > $KORACLE_OUT/ls-laR.tracing
 *
 * and, where event directories have a `btf_ids` file (7.3),
 *
 *   for f in events/*\/*\/btf_ids; do echo "$f $(cat $f | tr '\n' ' ')"; done > $KORACLE_OUT/event-btf-ids
 *
 * and the kernel's event list order from `cat available_events` (kept in
 * tools/oracle/available_events-SERIES.txt, captured by
 * tools/oracle/event-semantics.sh): set_event and available_events list
 * events in that order, so the catalogue keeps it.
 *
 * Output layout (compact, deduplicated: many events share an event class):
 *   { series, fieldSets: [[[decl, offset, size, signed], ...], ...],
 *     fmts: [printFmt, ...],
 *     events: [[system, name, id, fieldSetIndex, fmtIndex[, [btfObjId, rawBtfId, tpBtfId]]], ...] }
 * `decl` is the text between `field:` and `;` (e.g. `char prev_comm[16]`).
 * Only the event's own fields are stored; the four common fields are the same
 * for every event. The script re-renders every format file from the data and
 * fails unless each is byte-identical to the census, and checks the id files
 * and the events/ directory listing against what eventfs will create.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..');
const censusRoot = process.argv[2];
if (!censusRoot) {
  console.error('usage: gen-event-catalogue.mjs CENSUS_ROOT [SERIES...]');
  process.exit(2);
}
/** The series named, else every series whose event order is kept in tools/oracle/. */
const seriesList =
  process.argv.length > 3
    ? process.argv.slice(3)
    : readdirSync(join(here, 'oracle')).flatMap((f) => /^available_events-(.+)\.txt$/.exec(f)?.[1] ?? []);

const COMMON =
  '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n' +
  '\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n' +
  '\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n' +
  '\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n';

function render(name, id, fields, fmt) {
  let s = `name: ${name}\nID: ${id}\nformat:\n${COMMON}\n`;
  for (const [decl, off, size, sgn] of fields) s += `\tfield:${decl};\toffset:${off};\tsize:${size};\tsigned:${sgn};\n`;
  return `${s}\nprint fmt: ${fmt}\n`;
}

function parseFormats(text) {
  const blocks = text.split(/^== /m).slice(1);
  const out = [];
  for (const b of blocks) {
    const nl = b.indexOf('\n');
    const path = b.slice(0, nl);
    const body = b.slice(nl + 1);
    const m = /^events\/([^/]+)\/([^/]+)\/format$/.exec(path);
    if (!m) throw new Error(`bad block ${path}`);
    const [, system, evname] = m;
    const head = /^name: (.*)\nID: (\d+)\nformat:\n/.exec(body);
    if (!head) throw new Error(`bad head ${path}`);
    if (!body.startsWith(COMMON + '\n', head[0].length)) throw new Error(`odd common fields ${path}`);
    let rest = body.slice(head[0].length + COMMON.length + 1);
    const fields = [];
    for (;;) {
      const fm = /^\tfield:(.*);\toffset:(\d+);\tsize:(\d+);\tsigned:([01]);\n/.exec(rest);
      if (!fm) break;
      fields.push([fm[1], Number(fm[2]), Number(fm[3]), Number(fm[4])]);
      rest = rest.slice(fm[0].length);
    }
    if (!rest.startsWith('\nprint fmt: ') || !rest.endsWith('\n')) throw new Error(`bad tail ${path}`);
    const fmt = rest.slice('\nprint fmt: '.length, -1);
    if (head[1] !== evname) throw new Error(`name mismatch ${path}`);
    out.push({ system, name: evname, id: Number(head[2]), fields, fmt, text: body });
  }
  return out;
}

/** Directory listing of events/ from busybox ls -laR: path -> set of entry names. */
function parseLs(text) {
  const dirs = new Map();
  let cur;
  for (const line of text.split('\n')) {
    const h = /^\/sys\/kernel\/tracing\/(events(?:\/.*)?):$/.exec(line);
    if (h) {
      cur = new Set();
      dirs.set(h[1], cur);
      continue;
    }
    if (line.endsWith(':')) cur = undefined;
    if (!cur) continue;
    const m = /^\S+\s+\d+\s+\S+\s+\S+\s+\d+\s+\w+\s+\d+\s+[\d:]+\s+(.*)$/.exec(line);
    if (m && m[1] !== '.' && m[1] !== '..') cur.add(m[1]);
  }
  return dirs;
}

for (const series of seriesList) {
  const dir = join(censusRoot, series);
  const events = parseFormats(readFileSync(join(dir, 'event-formats'), 'latin1'));
  const ids = new Map();
  for (const line of readFileSync(join(dir, 'event-ids'), 'latin1').split('\n')) {
    const m = /^events\/([^/]+)\/([^/]+)\/id (\d+)$/.exec(line);
    if (m) ids.set(`${m[1]}/${m[2]}`, Number(m[3]));
  }
  const ls = parseLs(readFileSync(join(dir, 'ls-laR.tracing'), 'latin1'));
  const btfIds = new Map();
  if (existsSync(join(dir, 'event-btf-ids'))) {
    for (const line of readFileSync(join(dir, 'event-btf-ids'), 'latin1').split('\n')) {
      const m = /^events\/([^/]+)\/([^/]+)\/btf_ids btf_obj_id: (\d+) raw_btf_id: (\d+) tp_btf_id: (\d+) $/.exec(line);
      if (m) btfIds.set(`${m[1]}/${m[2]}`, [Number(m[3]), Number(m[4]), Number(m[5])]);
      else if (line) throw new Error(`bad btf_ids line: ${line}`);
    }
  }
  const order = new Map(
    readFileSync(join(here, 'oracle', `available_events-${series}.txt`), 'latin1')
      .split('\n')
      .filter(Boolean)
      .map((l, i) => [l.replace(':', '/'), i]),
  );
  events.sort((a, b) => (order.get(`${a.system}/${a.name}`) ?? -1) - (order.get(`${b.system}/${b.name}`) ?? -1));

  const fieldSets = [];
  const fieldSetIdx = new Map();
  const fmts = [];
  const fmtIdx = new Map();
  const rows = [];
  for (const e of events) {
    const fkey = JSON.stringify(e.fields);
    if (!fieldSetIdx.has(fkey)) {
      fieldSetIdx.set(fkey, fieldSets.length);
      fieldSets.push(e.fields);
    }
    if (!fmtIdx.has(e.fmt)) {
      fmtIdx.set(e.fmt, fmts.length);
      fmts.push(e.fmt);
    }
    // Checks: the rendering is exact, the id file agrees, the directory holds what eventfs creates.
    if (render(e.name, e.id, e.fields, e.fmt) !== e.text) throw new Error(`render mismatch ${e.system}/${e.name}`);
    const key = `${e.system}/${e.name}`;
    const idFile = ids.get(key);
    const files = ls.get(`events/${key}`);
    if (!files) throw new Error(`no listing for ${key}`);
    if (e.system === 'ftrace') continue; // internal events: defined by the ftrace layer, not by this catalogue
    if (!order.has(key)) throw new Error(`${key} missing from available_events`);
    if (idFile !== e.id) throw new Error(`id mismatch ${key}: ${idFile} vs ${e.id}`);
    const btf = btfIds.get(key);
    const want = [...(btf ? ['btf_ids'] : []), 'enable', 'filter', 'format', 'hist', 'id', 'trigger'];
    if ([...files].sort().join(',') !== want.join(',')) throw new Error(`unexpected files in ${key}: ${[...files]}`);
    rows.push([e.system, e.name, e.id, fieldSetIdx.get(fkey), fmtIdx.get(e.fmt), ...(btf ? [btf] : [])]);
  }
  const internal = events
    .filter((e) => e.system === 'ftrace')
    .map((e) => ({ name: e.name, id: e.id, fields: e.fields, fmt: e.fmt, files: [...ls.get(`events/ftrace/${e.name}`)].sort() }));
  const out = { series, source: `census of Linux ${series} (${readFileSync(join(dir, 'uname'), 'latin1').trim()})`, fieldSets, fmts, events: rows, internal };
  mkdirSync(join(repo, 'data'), { recursive: true });
  const file = join(repo, 'data', `events-${series}.json`);
  // One event or field set per line keeps diffs between regenerations readable.
  const lines = [
    '{',
    `"series": ${JSON.stringify(out.series)},`,
    `"source": ${JSON.stringify(out.source)},`,
    '"fieldSets": [',
    fieldSets.map((f) => JSON.stringify(f)).join(',\n'),
    '],',
    '"fmts": [',
    fmts.map((f) => JSON.stringify(f)).join(',\n'),
    '],',
    '"events": [',
    rows.map((r) => JSON.stringify(r)).join(',\n'),
    '],',
    '"internal": [',
    internal.map((r) => JSON.stringify(r)).join(',\n'),
    ']',
    '}',
  ];
  writeFileSync(file, lines.join('\n') + '\n');
  console.log(`${series}: ${rows.length} events, ${fieldSets.length} field sets, ${fmts.length} print fmts, ${internal.length} internal -> ${file}`);
}
