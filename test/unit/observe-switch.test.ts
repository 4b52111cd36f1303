/**
 * The switch that tells the system-call watchers whether the kernel can see
 * system calls (observe_switch.ts): a request that turns it on is answered
 * once every live watcher has acknowledged, so the requester's next call is
 * seen; turning it off, or having no watcher, waits for nothing.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ObserveLevel, ObserveSwitch } from '../../src/host/observe_switch.js';

describe('the observe switch', () => {
  let dir: string;
  let file: string;
  let lines: string[];
  let sw: ObserveSwitch;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'observe-switch-'));
    file = join(dir, 'events.observe');
    lines = [];
    sw = new ObserveSwitch(file, () => {
      for (const l of lines.splice(0)) sw.line(l);
    });
  });
  afterEach(() => {
    sw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes "LEVEL GEN PID" in place, and "0" for nothing, counting the rises', () => {
    expect(readFileSync(file, 'utf8')).toBe('0\n');
    expect(sw.set(ObserveLevel.Syscalls, 4321)).toBeUndefined(); // no watcher: nothing to wait for
    expect(readFileSync(file, 'utf8')).toBe('2 0000000001 0000004321\n');
    expect(sw.set(ObserveLevel.Syscalls, 1)).toBeUndefined(); // unchanged: not written again
    sw.set(ObserveLevel.Nothing);
    expect(readFileSync(file, 'utf8')[0]).toBe('0');
    sw.set(ObserveLevel.Syscalls, 77);
    expect(readFileSync(file, 'utf8')).toBe('2 0000000002 0000000077\n');
    // A fall to processes keeps the generation; the rise from there is a new one.
    sw.set(ObserveLevel.Processes, 5);
    expect(readFileSync(file, 'utf8')).toBe('1 0000000002 0000000005\n');
    sw.set(ObserveLevel.Syscalls, 6);
    expect(readFileSync(file, 'utf8')).toBe('2 0000000003 0000000006\n');
  });

  it('waits for the acknowledgement of a rise to processes too, and of no fall', async () => {
    sw.line(`W ${process.pid}`);
    const rise = sw.set(ObserveLevel.Processes, 4321);
    expect(rise).toBeInstanceOf(Promise);
    lines.push(`O ${process.pid} 1`);
    await rise;
    expect(sw.set(ObserveLevel.Syscalls, 4321)).toBeInstanceOf(Promise);
    lines.push(`O ${process.pid} 2`);
    expect(sw.set(ObserveLevel.Processes, 4321)).toBeUndefined();
    expect(sw.set(ObserveLevel.Nothing, 4321)).toBeUndefined();
  });

  it('holds the answer until a watcher that said hello acknowledges the switch', async () => {
    expect(sw.line(`W ${process.pid}`)).toBe(true);
    const wait = sw.set(ObserveLevel.Syscalls, 4321);
    expect(wait).toBeInstanceOf(Promise);
    let done = false;
    void wait!.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    lines.push(`O ${process.pid} 1`);
    await wait;
    // Acknowledged: the next switch waits for the next generation only.
    sw.set(ObserveLevel.Nothing);
    const again = sw.set(ObserveLevel.Syscalls, 4321)!;
    lines.push(`O ${process.pid} 2`);
    await again;
  });

  it('waits for no watcher that is gone, and for a stuck one no longer than its timeout', async () => {
    const gone = spawnSync('true').pid!;
    sw.line(`W ${gone}`);
    expect(sw.set(ObserveLevel.Syscalls, 1)).toBeUndefined();
    sw.set(ObserveLevel.Nothing);
    sw.line(`W ${process.pid}`);
    const t0 = Date.now();
    await sw.set(ObserveLevel.Syscalls, 1);
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(150);
    expect(waited).toBeLessThan(2000);
    expect(sw.timeouts).toBe(1);
  });

  it('leaves other lines to the rest of the host events', () => {
    expect(sw.line('T 1 0 0 0 0 0 0 0 0 1\t\tsh')).toBe(false);
    expect(sw.line('Wx')).toBe(false);
    expect(sw.line('O 12 3')).toBe(true);
  });
});
