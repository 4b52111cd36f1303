/** trace_get_user(): one word per write call, continuation, EINVAL for a word too long. */
import { describe, expect, it } from 'vitest';
import { TraceParser } from '../../src/ftrace/trace_parser.js';

const b = (s: string) => Buffer.from(s, 'latin1');

describe('TraceParser (trace_get_user)', () => {
  it('consumes one word and the blank after it per call', () => {
    const p = new TraceParser(16);
    const data = b('  foo bar\n');
    expect(p.read(data)).toBe(6);
    expect([p.loaded, p.cont, p.word]).toEqual([true, false, 'foo']);
    p.clear();
    expect(p.read(data.subarray(6))).toBe(4);
    expect([p.loaded, p.cont, p.word]).toEqual([true, false, 'bar']);
  });

  it('continues a word cut by the end of a write in the next write', () => {
    const p = new TraceParser(16);
    expect(p.read(b('sched_sw'))).toBe(8);
    expect([p.loaded, p.cont]).toEqual([true, true]);
    expect(p.read(b('itch '))).toBe(5);
    expect([p.cont, p.word]).toEqual([false, 'sched_switch']);
  });

  it('consumes blanks and a NUL without loading a word', () => {
    const p = new TraceParser(16);
    expect(p.read(b('   \0x'))).toBe(4);
    expect(p.loaded).toBe(false);
  });

  it('starts afresh at file position 0', () => {
    const p = new TraceParser(16);
    p.read(b('abc'));
    expect(p.cont).toBe(true);
    expect(p.read(b('def '), 0)).toBe(4);
    expect(p.word).toBe('def');
  });

  it('fails a word longer than the buffer with EINVAL, and holds no word after', () => {
    const p = new TraceParser(4);
    expect(p.read(b('abc '))).toBe(4);
    expect(p.word).toBe('abc');
    p.clear();
    expect(() => p.read(b('abcd '))).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(p.read(b('x '))).toBe(2);
    expect(p.loaded).toBe(false);
  });
});
