#!/usr/bin/env node
/**
 * Builds test/fixtures/event-lines-SERIES.json: real trace lines paired with
 * the binary records they were printed from, for the print-fmt interpreter
 * tests.
 *
 *   kernel-oracle [--series 6.12] --out /tmp/evcap/SERIES run - < tools/oracle/capture-event-lines.sh
 *   node tools/gen-event-fixtures.mjs SERIES /tmp/evcap/SERIES [PER_EVENT=4]
 *
 * The capture holds, per buffer (top, all) and CPU, the `per_cpu/cpuN/trace`
 * text and the `trace_pipe_raw` pages read after it with tracing off, so the
 * Nth event line of a CPU is the Nth record of its pages. kallsyms is
 * captured too: every 8-byte word of a kept record that falls in a kernel
 * symbol is resolved, and those symbols go into the fixture (KASLR moves them
 * between boots).
 *
 * Fixture: { series, symbols: [[addr hex, size, name, module?]...],
 *            lines: [{ event: "sys/name", data: hex, text }...] }
 * `text` is what follows "TIMESTAMP: " on the trace line.
 */
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const [series, capDir, perEventArg] = process.argv.slice(2);
if (!series || !capDir) {
  console.error('usage: gen-event-fixtures.mjs SERIES CAPTURE_DIR [PER_EVENT]');
  process.exit(2);
}
const perEvent = Number(perEventArg ?? 4);

const cat = JSON.parse(readFileSync(join(repo, 'data', `events-${series}.json`), 'utf8'));
const byId = new Map();
for (const [system, name, id] of cat.events) byId.set(id, `${system}/${name}`);
for (const e of cat.internal) byId.set(e.id, `ftrace/${e.name}`);

/** Payloads of a trace_pipe_raw dump, in order. */
function decodeRaw(buf) {
  const out = [];
  for (let page = 0; page + 16 <= buf.length; page += 4096) {
    const size = Number(buf.readBigUInt64LE(page + 8) & 0xfffffn);
    let off = page + 16;
    const end = Math.min(off + size, buf.length);
    while (off + 4 <= end) {
      const hdr = buf.readUInt32LE(off);
      const typeLen = hdr & 31;
      if (typeLen === 0) {
        const len = buf.readUInt32LE(off + 4);
        out.push(buf.subarray(off + 8, off + 4 + len));
        off += len + 4;
      } else if (typeLen <= 28) {
        out.push(buf.subarray(off + 4, off + 4 + typeLen * 4));
        off += 4 + typeLen * 4;
      } else if (typeLen === 29) {
        if (hdr >>> 5 === 0) break;
        off += buf.readUInt32LE(off + 4) + 4;
      } else {
        off += 8;
      }
    }
  }
  return out;
}

const LINE = /^\s*(.*)-(\d+)\s+\[(\d{3})\] (\S{5})\s+(\d+\.\d+): (.*)$/;

/** Event lines of a per-CPU trace file: each continuation line is folded into the line before. */
function parseTrace(text) {
  const lines = [];
  for (const l of text.split('\n')) {
    if (l.startsWith('#') || l === '') continue;
    const m = LINE.exec(l);
    if (m) lines.push(m[6]);
    else if (lines.length) lines[lines.length - 1] += '\n' + l;
  }
  return lines;
}

const ksyms = [];
const kz = join(capDir, 'kallsyms.gz');
if (existsSync(kz)) {
  for (const l of gunzipSync(readFileSync(kz)).toString('latin1').split('\n')) {
    const m = /^([0-9a-f]{16}) (\S) (\S+)(?:\t\[(\S+)\])?$/.exec(l);
    if (m && m[1] !== '0000000000000000') ksyms.push({ addr: BigInt('0x' + m[1]), type: m[2], name: m[3], module: m[4] });
  }
  ksyms.sort((a, b) => (a.addr < b.addr ? -1 : a.addr > b.addr ? 1 : 0));
}
function symAt(v) {
  let lo = 0;
  let hi = ksyms.length - 1;
  if (hi < 0 || v < ksyms[0].addr || v >= ksyms[hi].addr) return undefined;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ksyms[mid].addr <= v) lo = mid;
    else hi = mid - 1;
  }
  // Aliases at one address: kallsyms lookups take the first listed; skip to the next distinct address for the size.
  let first = lo;
  while (first > 0 && ksyms[first - 1].addr === ksyms[lo].addr) first--;
  let next = lo + 1;
  while (next < ksyms.length && ksyms[next].addr === ksyms[lo].addr) next++;
  if (next >= ksyms.length) return undefined;
  return { ...ksyms[first], size: Number(ksyms[next].addr - ksyms[lo].addr) };
}

const picked = new Map(); // event -> [{data, text}]
let mismatches = 0;
let total = 0;
for (const buffer of ['top', 'all']) {
  for (let cpu = 0; ; cpu++) {
    const tf = join(capDir, `${buffer}.trace.cpu${cpu}`);
    if (!existsSync(tf)) break;
    const lines = parseTrace(readFileSync(tf, 'latin1'));
    const recs = decodeRaw(readFileSync(join(capDir, `${buffer}.raw.cpu${cpu}`)));
    if (lines.length !== recs.length) {
      console.warn(`${buffer} cpu${cpu}: ${lines.length} lines vs ${recs.length} records`);
    }
    const n = Math.min(lines.length, recs.length);
    for (let i = 0; i < n; i++) {
      total++;
      const ev = byId.get(recs[i].readUInt16LE(0));
      const text = lines[i];
      if (!ev) continue;
      const name = ev.split('/')[1];
      const shown = ev.startsWith('syscalls/') ? text.startsWith(name.replace(/^sys_(enter|exit)_/, 'sys_')) : text.startsWith(`${name}: `) || ev.startsWith('ftrace/');
      if (!shown) {
        mismatches++;
        if (mismatches < 5) console.warn(`mismatch ${buffer} cpu${cpu} #${i}: ${ev} vs ${text.slice(0, 80)}`);
        continue;
      }
      const list = picked.get(ev) ?? [];
      picked.set(ev, list);
      // Prefer distinct shapes: texts that differ once digits are ignored.
      const shape = text.replace(/[0-9a-f]{6,}|\d+/g, '#');
      if (list.length >= perEvent || list.some((x) => x.shape === shape)) continue;
      list.push({ data: recs[i], text, shape });
    }
  }
}

const symbols = new Map();
const lines = [];
for (const [event, list] of [...picked].sort(([a], [b]) => (a < b ? -1 : 1))) {
  for (const { data, text } of list) {
    for (let o = 8; o + 8 <= data.length; o += 4) {
      const v = data.readBigUInt64LE(o);
      if (v < 0xffffffff80000000n) continue;
      const s = symAt(v);
      if (s && v - s.addr < BigInt(s.size)) symbols.set(s.addr, s);
    }
    lines.push({ event, data: data.toString('hex'), text });
  }
}
const out = {
  series,
  symbols: [...symbols.values()].map((s) => (s.module ? [s.addr.toString(16), s.size, s.name, s.module] : [s.addr.toString(16), s.size, s.name])),
  lines,
};
mkdirSync(join(repo, 'test', 'fixtures'), { recursive: true });
const file = join(repo, 'test', 'fixtures', `event-lines-${series}.json`);
writeFileSync(file, '{\n"series": ' + JSON.stringify(series) + ',\n"symbols": [\n' + out.symbols.map((s) => JSON.stringify(s)).join(',\n') + '\n],\n"lines": [\n' + lines.map((l) => JSON.stringify(l)).join(',\n') + '\n]\n}\n');
console.log(`${series}: ${total} records, ${mismatches} mismatched, ${lines.length} fixtures over ${picked.size} events, ${symbols.size} symbols -> ${file}`);
