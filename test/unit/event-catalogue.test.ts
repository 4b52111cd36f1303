import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadCatalogue } from '../../src/trace/events/catalogue.js';
import { formatText } from '../../src/trace/events/format_file.js';

/** The census blocks "== events/SYS/NAME/format" -> file content. */
function census(series: string): Map<string, string> {
  const text = readFileSync(`/work/census/${series}/event-formats`, 'latin1');
  const out = new Map<string, string>();
  for (const b of text.split(/^== /m).slice(1)) {
    const nl = b.indexOf('\n');
    out.set(b.slice(0, nl).replace(/^events\/|\/format$/g, ''), b.slice(nl + 1));
  }
  return out;
}

function censusIds(series: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of readFileSync(`/work/census/${series}/event-ids`, 'latin1').split('\n')) {
    const m = /^events\/(.*)\/id (\d+)$/.exec(l);
    if (m) out.set(m[1], Number(m[2]));
  }
  return out;
}

for (const series of ['7.2', '6.12'] as const) {
  describe(`static event catalogue ${series}`, () => {
    const cat = loadCatalogue(series);
    const haveCensus = (() => {
      try {
        readFileSync(`/work/census/${series}/event-formats`);
        return true;
      } catch {
        return false;
      }
    })();

    it.skipIf(!haveCensus)('renders every format file byte for byte as the real kernel', () => {
      const real = census(series);
      let n = 0;
      for (const e of [...cat.events, ...cat.internal]) {
        const key = `${e.system}/${e.name}`;
        expect(formatText(e), key).toBe(real.get(key));
        n++;
      }
      expect(n).toBe(real.size);
    });

    it.skipIf(!haveCensus)('has every id as the real kernel', () => {
      const ids = censusIds(series);
      for (const e of cat.events) expect(e.id, `${e.system}/${e.name}`).toBe(ids.get(`${e.system}/${e.name}`));
      expect(cat.events.length).toBe([...ids.keys()].filter((k) => !k.startsWith('ftrace/')).length);
    });

    it('keeps the kernel list order (available_events)', () => {
      const order = readFileSync(new URL(`../../tools/oracle/available_events-${series}.txt`, import.meta.url), 'latin1').trim().split('\n');
      expect(cat.events.map((e) => `${e.system}:${e.name}`)).toEqual(order);
    });
  });
}
