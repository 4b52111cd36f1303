import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TracepointRegistry } from '../../src/kernel/tracepoint.js';
import { loadCatalogue } from '../../src/trace/events/catalogue.js';
import { ctxOf } from '../helpers/events.js';
import { SERIES } from '../../src/kernel/series.js';

describe('tracepoint registry', () => {
  it('runs probes by priority, once each, and only while attached', () => {
    const reg = new TracepointRegistry();
    const seen: string[] = [];
    const a = () => seen.push('a');
    const b = () => seen.push('b');
    expect(reg.enabled('x')).toBe(false);
    reg.register('x', a);
    reg.register('x', b, 100);
    expect(() => reg.register('x', a)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    reg.fire('x', ctxOf(1, 'a'), {});
    expect(seen).toEqual(['b', 'a']);
    reg.unregister('x', a);
    reg.unregister('x', b);
    expect(() => reg.unregister('x', b)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    reg.fire('x', ctxOf(1, 'a'), {});
    expect(seen).toEqual(['b', 'a']);
    expect(reg.enabled('x')).toBe(false);
  });

  it('types the arguments of fired tracepoints with the field names of their events', () => {
    const src = readFileSync(new URL('../../src/kernel/tracepoint.ts', import.meta.url), 'utf8');
    const body = src.slice(src.indexOf('export interface TracepointArgs'), src.indexOf('/** raw_syscalls:sys_enter'));
    const entries = [...body.matchAll(/^\s+(\w+): \{ (.*) \};$/gm)].map((m) => [m[1], [...m[2].matchAll(/(\w+)(\??):/g)].map((x) => [x[1], x[2] === '?'] as const)] as const);
    expect(entries.length).toBeGreaterThan(30);
    const catalogues = SERIES.map((series) => new Map(loadCatalogue(series).events.map((e) => [e.name, new Set(e.fields.map((f) => f.name))])));
    // Events of kernel options Debian does not build (the latency tracers' preemptirq) are not in its catalogues.
    const featureOnly = new Set(['irq_disable', 'irq_enable', 'preempt_disable', 'preempt_enable']);
    for (const [name, keys] of entries) {
      if (featureOnly.has(name)) {
        expect(keys.map(([k]) => k)).toEqual(['caller_offs', 'parent_offs']);
        continue;
      }
      // A tracepoint may exist in one series only (hrtimer_init is 6.12's, hrtimer_setup 7.2's).
      const present = catalogues.map((c) => c.get(name)).filter((f) => f !== undefined);
      if (name !== 'sys_enter' && name !== 'sys_exit') expect(present.length, name).toBeGreaterThan(0);
      for (const [k, optional] of keys) {
        if (optional) expect(present.some((f) => f.has(k)), `${name}.${k}`).toBe(true);
        else for (const f of present) expect(f.has(k), `${name}.${k}`).toBe(true);
      }
    }
  });
});
