/** The control channel: its JSON protocol, the command registry, the socket. */
import { describe, expect, it } from 'vitest';
import {
  type ControlContext,
  ControlServer,
  controlRequest,
  handleControlRequest,
  registerControlCommand,
} from '../../src/daemon/control.js';
import '../../src/daemon/control_commands.js';
import type { MountedTracefs } from '../../src/fuse/mount.js';
import { RequestStats } from '../../src/fuse/request_stats.js';
import { KernelError } from '../../src/kernel/errno.js';
import { tempDir } from '../helpers/e2e.js';
import { testEmulator } from '../helpers/emulator.js';

function ctx(): ControlContext & { stopped: number } {
  const emulator = testEmulator({ series: '6.12' });
  const mount: MountedTracefs = { mountpoint: '/x', fs: emulator.fs, openFiles: 3, knownNodes: 1, unmount: async () => {}, ended: new Promise(() => {}), settled: async () => {}, requests: new RequestStats(), cachedAnswers: () => ({}), hold: () => () => {} };
  const c = {
    emulator,
    mount,
    state: { mountpoint: '/x', pid: process.pid, series: '6.12', cpus: 2, seed: 1, options: '', socket: '', daemon: false, startedAt: 'now' },
    stopped: 0,
    shutdown() {
      c.stopped++;
    },
  };
  return c;
}

registerControlCommand('test-echo', 'returns its args', (args) => args);
registerControlCommand('test-fail', 'fails', (args) => {
  if (args.kernel) throw new KernelError('EBUSY', 'busy now');
  throw new Error('plain failure');
});

describe('control protocol', () => {
  it('answers status with the mount and the kernel series', async () => {
    const r = await handleControlRequest({ id: 7, cmd: 'status' }, ctx());
    expect(r).toMatchObject({ id: 7, ok: true, result: { mountpoint: '/x', series: '6.12', cpus: 2, openFiles: 3, options: '' } });
  });

  it("reports the daemon's load: CPU, memory, requests by kind with latency, the kernel's work", async () => {
    const c = ctx();
    c.mount.requests.record('read', 0.05);
    c.mount.requests.record('read', 0.2);
    c.mount.requests.record('open', 1.5);
    await c.emulator.fs.readFile('tracing_on');
    const r = (await handleControlRequest({ cmd: 'load' }, c)) as { ok: true; result: Record<string, any> };
    expect(r.ok).toBe(true);
    const { cpu, memory, requests, kernel } = r.result;
    expect(cpu.userMs).toBeGreaterThan(0);
    expect(memory.rss).toBeGreaterThan(0);
    expect(Object.keys(requests)).toEqual(['open', 'read']);
    expect(requests.read).toMatchObject({ count: 2, maxMs: 0.2 });
    expect(requests.read.totalMs).toBeCloseTo(0.25);
    expect(requests.read.p50Ms).toBeGreaterThanOrEqual(0.05);
    expect(requests.read.p50Ms).toBeLessThan(0.07);
    expect(requests.read.p99Ms).toBeGreaterThanOrEqual(0.2);
    expect(kernel).toMatchObject({ forks: 0, execs: 0, exits: 0 });
    expect(kernel.calls).toBeGreaterThanOrEqual(0);
  });

  it('remounts with tracefs options', async () => {
    const c = ctx();
    const r = await handleControlRequest({ cmd: 'remount', args: { options: 'rw,gid=42' } }, c);
    expect(r).toEqual({ ok: true, result: { options: 'gid=42' }, id: undefined });
    expect(c.emulator.fs.stat('').gid).toBe(42);
    expect(await handleControlRequest({ cmd: 'remount', args: { options: 'gid=-1' } }, c)).toMatchObject({ ok: false, errno: 'EINVAL' });
  });

  it('reports bad requests, unknown commands and failures without throwing', async () => {
    const c = ctx();
    expect(await handleControlRequest('nope', c)).toMatchObject({ ok: false, error: expect.stringMatching(/bad request/) });
    expect(await handleControlRequest({ cmd: 'missing' }, c)).toMatchObject({ ok: false, error: expect.stringMatching(/unknown command/) });
    expect(await handleControlRequest({ cmd: 'test-fail', args: { kernel: true } }, c)).toMatchObject({ ok: false, errno: 'EBUSY', error: 'busy now' });
    expect(await handleControlRequest({ cmd: 'test-fail' }, c)).toEqual({ id: undefined, ok: false, error: 'plain failure' });
    expect(() => registerControlCommand('status', 'again', () => 0)).toThrow(/twice/);
  });

  it('lists its commands, and shuts down on request', async () => {
    const c = ctx();
    const r = (await handleControlRequest({ cmd: 'commands' }, c)) as { ok: true; result: { name: string }[] };
    expect(r.result.map((x) => x.name)).toEqual(expect.arrayContaining(['status', 'remount', 'commands', 'shutdown', 'test-echo']));
    await handleControlRequest({ cmd: 'shutdown' }, c);
    await new Promise((r) => setImmediate(r));
    expect(c.stopped).toBe(1);
  });

  it('serves line-delimited JSON on a unix socket', async () => {
    const path = `${tempDir('tfe-ctl-')}/c.sock`;
    const server = new ControlServer(path, ctx());
    await server.listen();
    try {
      expect(await controlRequest(path, 'test-echo', { a: [1, 'b'] })).toEqual({ a: [1, 'b'] });
      await expect(controlRequest(path, 'test-fail', { kernel: 1 })).rejects.toMatchObject({ message: 'busy now', errno: 'EBUSY' });
      // Several requests on one connection, answered in order.
      const { createConnection } = await import('node:net');
      const lines = await new Promise<string[]>((ok) => {
        const s = createConnection(path);
        let buf = '';
        s.on('data', (d) => {
          buf += String(d);
          if (buf.split('\n').length > 3) {
            s.end();
            ok(buf.trim().split('\n'));
          }
        });
        s.write('{"id":1,"cmd":"test-echo","args":{"n":1}}\n{"id":2,"cmd":"status"}\nnot json\n');
      });
      expect(lines.map((l) => JSON.parse(l) as { id?: number; ok: boolean })).toMatchObject([
        { id: 1, ok: true, result: { n: 1 } },
        { id: 2, ok: true },
        { ok: false, error: 'bad request: not JSON' },
      ]);
    } finally {
      await server.close();
    }
    await expect(controlRequest(path, 'status')).rejects.toThrow();
  });
});
