/** pending_signals.ts: which pending signals end a process. */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { signalEnds, signalEndsIn } from '../../src/host/pending_signals.js';

/** The signal lines of /proc/PID/status (masks in hex, bit N-1 for signal N). */
const status = (m: { pnd?: number; shd?: number; blk?: number; ign?: number; cgt?: number }) =>
  ['SigQ:\t1/95234', 'SigPnd', 'ShdPnd', 'SigBlk', 'SigIgn', 'SigCgt']
    .map((f, i) => (i === 0 ? f : `${f}:\t${[m.pnd, m.shd, m.blk, m.ign, m.cgt][i - 1]?.toString(16).padStart(16, '0') ?? '0000000000000000'}`))
    .join('\n');
const bit = (sig: number) => 2 ** (sig - 1);

describe('signalEnds', () => {
  it('says a pending signal ends the caller when its default action terminates and nothing blocks, catches or ignores it', () => {
    expect(signalEndsIn(status({ shd: bit(15) }))).toBe(true); // SIGTERM to the process (ptraced: kept pending)
    expect(signalEndsIn(status({ pnd: bit(9) }))).toBe(true); // a fatal signal made SIGKILL
    expect(signalEndsIn(status({ shd: bit(1) | bit(17) }))).toBe(true);
    expect(signalEndsIn(status({ shd: bit(15), cgt: bit(15) }))).toBe(false); // a handler: the reader lives on
    expect(signalEndsIn(status({ shd: bit(15), ign: bit(15) }))).toBe(false);
    expect(signalEndsIn(status({ shd: bit(2), blk: bit(2) }))).toBe(false);
    expect(signalEndsIn(status({ shd: bit(17) | bit(28) | bit(19) }))).toBe(false); // CHLD, WINCH, STOP
    expect(signalEndsIn(status({ pnd: bit(9), blk: bit(9) }))).toBe(true); // SIGKILL cannot be blocked
    expect(signalEndsIn(status({}))).toBe(false);
  });

  it('reads a live process: nothing pending, a signal it ignores; a process gone', async () => {
    const c = spawn('/bin/sh', ['-c', "trap '' TERM; echo ready; sleep 30"], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise<void>((ok) => c.stdout.once('data', () => ok()));
    try {
      process.kill(c.pid!, 'SIGSTOP');
      process.kill(c.pid!, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 50));
      expect(signalEnds(c.pid!)).toBe(false);
      expect(signalEnds(process.pid)).toBe(false);
      expect(signalEnds(2 ** 22 + 1)).toBe(false);
    } finally {
      c.kill('SIGKILL');
    }
  });
});
