/**
 * The differential table: every definition the real kernels were given
 * (tools/probe-defs/collect.mjs: hand-written rows and the seeded grammar,
 * test/fixtures/probe-defs.SERIES.json.br), replayed against the probe parsers
 * and the dynamic-event registry. Each row must give the kernel's errno,
 * error_log entries (subsystem, message, command, caret), dynamic_events
 * listing and event formats. One test per section: a failure lists every
 * row that differs, with its id and definition.
 */
import { describe, expect, it } from 'vitest';
import { SERIES } from '../../src/kernel/series.js';
import { testProbeEnv } from '../helpers/probe-env.js';
import { checkParsers, loadTable, sections } from '../helpers/probe-defs.js';

describe.each(SERIES)('probe definitions on %s', (series) => {
  const { rows } = loadTable(series);
  const { env } = testProbeEnv(series);

  it('has the table', () => {
    expect(rows.length).toBeGreaterThanOrEqual(10000);
  });

  for (const [section, part] of sections(rows)) {
    it(`${section} (${part.length} rows)`, () => {
      const misses = part.map((row) => checkParsers(env, row)).filter((m) => m !== undefined);
      expect(misses.length, `${misses.length} of ${part.length} rows differ from the kernel:\n${misses.join('\n')}`).toBe(0);
    });
  }
});
