/** The machine's /proc as the host driver reads it: one stat file kept open per process, re-read per request. */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HostProcSource } from '../../src/host/proc_source.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('HostProcSource', () => {
  it('sees a process exec (new comm), then its exit, through the kept stat file', async () => {
    const src = new HostProcSource();
    const child = spawn('sh', ['-c', 'read _; exec sleep 30'], { stdio: ['pipe', 'ignore', 'ignore'] });
    const pid = child.pid!;
    try {
      await sleep(100);
      const before = src.stat(pid);
      expect(before?.comm).toBe('sh');
      expect(before?.tgid).toBe(pid);
      child.stdin.write('\n');
      let after = src.stat(pid);
      for (let i = 0; i < 50 && after?.comm !== 'sleep'; i++) {
        await sleep(20);
        after = src.stat(pid);
      }
      expect(after?.comm).toBe('sleep');
      expect(after?.startTime).toBe(before?.startTime);
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((r) => child.once('exit', r));
    await sleep(50);
    expect(src.stat(pid)).toBeUndefined();
  });
});
