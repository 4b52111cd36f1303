/** The machine's /proc as the host driver reads it: one stat file kept open per process, re-read per request. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('does not read a reused pid as the process that had it before', async () => {
    // A /proc whose pid 4242 is one sleep, then (after it died) another: what pid wrap-around does.
    const root = mkdtempSync(join(tmpdir(), 'proc-reuse-'));
    symlinkSync(`/proc/${process.pid}`, join(root, String(process.pid)));
    const first = spawn('sleep', ['30'], { stdio: 'ignore' });
    let second: ReturnType<typeof spawn> | undefined;
    try {
      await sleep(50);
      symlinkSync(`/proc/${first.pid}`, join(root, '4242'));
      const src = new HostProcSource(root);
      const start = src.stat(4242)!.startTime;
      expect(src.comm(4242, start)).toBe('sleep');
      first.kill('SIGKILL');
      await new Promise((r) => first.once('exit', r));
      await sleep(30);
      second = spawn('sleep', ['30'], { stdio: 'ignore' });
      await sleep(50);
      unlinkSync(join(root, '4242'));
      symlinkSync(`/proc/${second.pid}`, join(root, '4242'));
      expect(src.stat(4242)!.startTime).not.toBe(start);
      // Same name, another process: the one that had the pid is gone.
      expect(src.comm(4242, start)).toBeUndefined();
      expect(src.comm(4242, src.stat(4242)!.startTime)).toBe('sleep');
    } finally {
      first.kill('SIGKILL');
      second?.kill('SIGKILL');
      rmSync(root, { recursive: true, force: true });
    }
  });
});
