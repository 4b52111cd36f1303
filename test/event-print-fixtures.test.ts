import { describe, expect, it } from 'vitest';
import { loadCatalogue } from '../src/trace/events/catalogue.js';
import { createStaticEventType } from '../src/trace/events/static_events.js';
import type { OutputContext } from '../src/trace/event_type.js';
import { fixtureSymbols, loadFixture, PlaceholderEnv } from './fixture_env.js';

const DEFAULTS = new Set(['hash-ptr']);
const ctx: OutputContext = { option: (n) => DEFAULTS.has(n) };

for (const series of ['7.2', '6.12'] as const) {
  describe(`print fmt interpreter against real ${series} trace lines`, () => {
    const fx = loadFixture(series);
    const cat = loadCatalogue(series);
    const env = new PlaceholderEnv(fixtureSymbols(fx));
    const types = new Map(cat.events.map((s) => [`${s.system}/${s.name}`, createStaticEventType(s, () => env, series)]));
    for (const line of fx.lines) {
      const type = types.get(line.event);
      if (!type) continue;
      it(`${line.event}: ${line.text.slice(0, 60)}`, () => {
        env.begin();
        const data = Buffer.from(line.data, 'hex');
        const out = type.output({ cpu: 0, ts: 0n, data }, ctx);
        expect(env.match(out, line.text), line.text).toBeNull();
      });
    }
  });
}
