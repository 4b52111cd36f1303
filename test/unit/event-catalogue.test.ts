import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { loadCatalogue } from '../../src/trace/events/catalogue.js';
import { formatText } from '../../src/trace/events/format_file.js';
import { fixtureText } from '../helpers/fixtures.js';

/** The real kernel's format files, from blocks "== events/SYS/NAME/format": SYS/NAME -> file content. */
function realFormats(series: Series): Map<string, string> {
  const text = fixtureText(`kernel-${series}/events/formats.txt.br`);
  const out = new Map<string, string>();
  for (const b of text.split(/^== /m).slice(1)) {
    const nl = b.indexOf('\n');
    out.set(b.slice(0, nl).replace(/^events\/|\/format$/g, ''), b.slice(nl + 1));
  }
  return out;
}

/** The real kernel's id files, from lines "events/SYS/NAME/id N": SYS/NAME -> N. */
function realIds(series: Series): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of fixtureText(`kernel-${series}/events/ids.txt.br`).split('\n')) {
    const m = /^events\/(.*)\/id (\d+)$/.exec(l);
    if (m) out.set(m[1], Number(m[2]));
  }
  return out;
}

for (const series of SERIES) {
  describe(`static event catalogue ${series}`, () => {
    const cat = loadCatalogue(series);

    it('renders every format file byte for byte as the real kernel', () => {
      const real = realFormats(series);
      let n = 0;
      for (const e of [...cat.events, ...cat.internal]) {
        const key = `${e.system}/${e.name}`;
        expect(formatText(e), key).toBe(real.get(key));
        n++;
      }
      expect(n).toBe(real.size);
    });

    it('has every id as the real kernel', () => {
      const ids = realIds(series);
      for (const e of cat.events) expect(e.id, `${e.system}/${e.name}`).toBe(ids.get(`${e.system}/${e.name}`));
      expect(cat.events.length).toBe([...ids.keys()].filter((k) => !k.startsWith('ftrace/')).length);
    });

    it('keeps the kernel list order (available_events)', () => {
      const order = readFileSync(new URL(`../../tools/oracle/available_events-${series}.txt`, import.meta.url), 'latin1').trim().split('\n');
      expect(cat.events.map((e) => `${e.system}:${e.name}`)).toEqual(order);
    });
  });
}
