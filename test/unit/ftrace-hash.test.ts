/**
 * ftrace_hash as a bitset of function ids: members, the empty hash that
 * means "every function" (unless `:mod:` filters wait or dead entries
 * remain), copies that do not share their bits, iteration by ascending id.
 */
import { describe, expect, it } from 'vitest';
import { composeSubopsHash, FtraceHash, hashContains } from '../../src/ftrace/ftrace_hash.js';

describe('FtraceHash', () => {
  it('adds, tests and deletes ids, counting each once', () => {
    const h = new FtraceHash();
    expect(h.empty).toBe(true);
    h.add(70_000);
    h.add(3);
    h.add(3);
    h.add(31);
    h.add(32);
    expect(h.count).toBe(4);
    expect([h.has(3), h.has(31), h.has(32), h.has(70_000), h.has(4), h.has(1 << 30), h.has(-1)]).toEqual([true, true, true, true, false, false, false]);
    expect(h.delete(31)).toBe(true);
    expect(h.delete(31)).toBe(false);
    expect(h.delete(1 << 30)).toBe(false);
    expect([...h]).toEqual([3, 32, 70_000]);
    h.clear();
    expect([h.count, h.empty, [...h]]).toEqual([0, true, []]);
  });

  it('is not empty while :mod: filters wait or dead entries remain', () => {
    const h = new FtraceHash([5, 6]);
    h.killIds([6, 7]);
    expect([h.count, h.dead, h.empty, h.has(6)]).toEqual([1, 1, false, false]);
    h.delete(5);
    expect(h.empty).toBe(false);
    const m = new FtraceHash();
    m.mod = true;
    expect(m.empty).toBe(false);
  });

  it('copies are their own', () => {
    const h = new FtraceHash([1, 2]);
    h.mod = true;
    const c = h.copy();
    c.add(40);
    c.delete(1);
    expect([...h]).toEqual([1, 2]);
    expect([...c]).toEqual([2, 40]);
    expect(c.mod).toBe(true);
    const e = new FtraceHash().copy();
    e.add(9);
    expect([...new FtraceHash()]).toEqual([]);
    expect(h.equals(new FtraceHash([2, 1]))).toBe(true);
    expect(h.equals(c)).toBe(false);
  });

  it('filter and notrace pairs: in the filter (or no filter) and not in notrace; sub-ops traced by the union of filters', () => {
    const pair = { filter: new FtraceHash([1, 2]), notrace: new FtraceHash([2]) };
    expect([1, 2, 3].map((id) => hashContains(pair, id))).toEqual([true, false, false]);
    const all = { filter: new FtraceHash(), notrace: new FtraceHash([3]) };
    expect([1, 3].map((id) => hashContains(all, id))).toEqual([true, false]);
    const composed = composeSubopsHash([{ funcHash: pair }, { funcHash: { filter: new FtraceHash([5]), notrace: new FtraceHash() } }]);
    expect([...composed.filter]).toEqual([1, 5]);
  });
});
