import { describe, expect, it } from 'vitest';
import { profileOf, SERIES } from '../../src/kernel/series.js';
import { loadCatalogue } from '../../src/trace/events/catalogue.js';
import { createStaticEventType } from '../../src/trace/events/static_events.js';
import type { OutputContext } from '../../src/trace/event_type.js';
import { fixtureSymbols, loadFixture, PlaceholderEnv } from '../helpers/event-lines.js';

const DEFAULTS = new Set(['hash-ptr']);
const ctx: OutputContext = { option: (n) => DEFAULTS.has(n) };

for (const series of SERIES) {
  describe(`print fmt interpreter against real ${series} trace lines`, () => {
    const fx = loadFixture(series);
    const cat = loadCatalogue(series);
    const env = new PlaceholderEnv(fixtureSymbols(fx));
    const types = new Map(cat.events.map((s) => [`${s.system}/${s.name}`, createStaticEventType(s, () => env, profileOf(series))]));
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

/** Print fmts calling kernel helpers the interpreter does not have (xen, ras, dax...). */
const UNINTERPRETED = new Set([
  'xen/xen_mc_flush_reason', 'xen/xen_mc_entry', 'xen/xen_mc_extend_args', 'xen/xen_mc_issue', 'xen/xen_mc_batch',
  'intel_iommu/prq_report', 'ras/mc_event', 'ras/extlog_mem_event',
]);
/** Whole systems whose print fmts call their own helpers (landlock, 7.3: __trace_print_untrusted_str, __trace_landlock_print_layers). */
const UNINTERPRETED_SYSTEMS = new Set(['fs_dax', 'landlock']);

for (const series of SERIES) {
  it(`interprets the print fmt of every ${series} event but a few exotic ones`, () => {
    const failed: string[] = [];
    const env = { variable: (n: string) => (n === 'jiffies' ? 4294892296n : undefined) };
    for (const s of loadCatalogue(series).events) {
      const t = createStaticEventType(s, () => env, profileOf(series));
      const size = Math.max(8, ...s.fields.map((f) => f.offset + f.size));
      const out = t.output({ cpu: 0, ts: 0n, data: Buffer.alloc(size + 64) }, ctx);
      const key = `${s.system}/${s.name}`;
      if (out.includes('[FAILED TO PARSE]') && !UNINTERPRETED.has(key) && !UNINTERPRETED_SYSTEMS.has(s.system)) failed.push(key);
    }
    expect(failed).toEqual([]);
  });
}
