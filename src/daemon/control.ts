/**
 * The daemon's control channel: a unix socket per mount (statePaths().socket),
 * outside the tracefs namespace. Protocol: one JSON object per line each way.
 *
 *   → {"id": 1, "cmd": "remount", "args": {"options": "gid=1000"}}
 *   ← {"id": 1, "ok": true, "result": {...}}
 *   ← {"id": 1, "ok": false, "error": "tracefs: Bad value for 'gid'", "errno": "EINVAL"}
 *
 * Commands live in a registry: `registerControlCommand(name, describe, run)`
 * from any module the daemon imports (see control_commands.ts).
 */
import { existsSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { MountedTracefs } from '../fuse/mount.js';
import type { HostDriver } from '../host/driver.js';
import type { Emulator } from '../index.js';
import { isKernelError } from '../kernel/errno.js';
import type { MountState } from './state.js';

/** What a command can reach: the whole emulator behind the mount. */
export interface ControlContext {
  readonly emulator: Emulator;
  /** The daemon's host driver (none for an emulator that follows no machine). */
  readonly host?: HostDriver;
  readonly mount: MountedTracefs;
  readonly state: MountState;
  /** Unmounts and ends the daemon (after the reply is sent). */
  shutdown(): void;
}

type ControlArgs = Record<string, unknown>;
type ControlHandler = (args: ControlArgs, ctx: ControlContext) => unknown;

interface ControlCommand {
  name: string;
  describe: string;
  run: ControlHandler;
}

const registry = new Map<string, ControlCommand>();

export function registerControlCommand(name: string, describe: string, run: ControlHandler): void {
  if (registry.has(name)) throw new Error(`control command ${name} registered twice`);
  registry.set(name, { name, describe, run });
}

export function controlCommands(): ControlCommand[] {
  return [...registry.values()];
}

interface ControlRequest {
  id?: unknown;
  cmd: string;
  args?: ControlArgs;
}

type ControlResponse =
  | { id?: unknown; ok: true; result: unknown }
  | { id?: unknown; ok: false; error: string; errno?: string };

/** Runs one request against the registry. Never throws. */
export async function handleControlRequest(req: unknown, ctx: ControlContext): Promise<ControlResponse> {
  const r = req as Partial<ControlRequest> | null;
  const id = r && typeof r === 'object' ? r.id : undefined;
  if (!r || typeof r !== 'object' || typeof r.cmd !== 'string') return { id, ok: false, error: 'bad request: expected {"cmd": NAME, "args": {...}}' };
  const c = registry.get(r.cmd);
  if (!c) return { id, ok: false, error: `unknown command: ${r.cmd} (try "commands")` };
  // Commands change state behind the mount's back (a module comes): cached files are not answered meanwhile.
  const done = ctx.mount.hold();
  try {
    const args = r.args && typeof r.args === 'object' ? r.args : {};
    return { id, ok: true, result: (await c.run(args, ctx)) ?? null };
  } catch (e) {
    if (isKernelError(e)) return { id, ok: false, error: e.message, errno: e.code };
    return { id, ok: false, error: e instanceof Error ? e.message : String(e) };
  } finally {
    done();
  }
}

/** Serves the registry on a unix socket until closed. */
export class ControlServer {
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly path: string,
    private readonly ctx: ControlContext,
  ) {}

  async listen(): Promise<void> {
    if (existsSync(this.path)) rmSync(this.path, { force: true });
    const server = createServer((sock) => this.serve(sock));
    this.server = server;
    await new Promise<void>((ok, ko) => {
      server.once('error', ko);
      server.listen(this.path, () => {
        server.off('error', ko);
        ok();
      });
    });
    server.unref();
  }

  private serve(sock: Socket): void {
    this.sockets.add(sock);
    sock.on('close', () => this.sockets.delete(sock));
    sock.on('error', () => sock.destroy());
    sock.setEncoding('utf8');
    let buf = '';
    let chain = Promise.resolve();
    sock.on('data', (chunk: string) => {
      buf += chunk;
      if (buf.length > 1 << 20) {
        sock.destroy();
        return;
      }
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        chain = chain.then(async () => {
          let res: ControlResponse;
          try {
            res = await handleControlRequest(JSON.parse(line), this.ctx);
          } catch (e) {
            if (!(e instanceof SyntaxError)) throw e;
            res = { ok: false, error: 'bad request: not JSON' };
          }
          if (!sock.destroyed) sock.write(`${JSON.stringify(res)}\n`);
        });
      }
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((ok) => server.close(() => ok()));
    rmSync(this.path, { force: true });
  }
}

/** Sends one request to a control socket and returns the command's result (throws its error). */
export function controlRequest(socketPath: string, cmd: string, args: ControlArgs = {}, timeoutMs = 10_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const sock = createConnection(socketPath);
    let buf = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`control ${cmd}: no answer from ${socketPath} in ${timeoutMs} ms`));
    }, timeoutMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(`${JSON.stringify({ id: 1, cmd, args })}\n`));
    sock.on('data', (chunk: string) => {
      buf += chunk;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      sock.end();
      let res: ControlResponse;
      try {
        res = JSON.parse(buf.slice(0, nl)) as ControlResponse;
      } catch (e) {
        if (!(e instanceof SyntaxError)) throw e;
        reject(new Error(`control ${cmd}: bad answer`));
        return;
      }
      if (res.ok) resolve(res.result);
      else reject(Object.assign(new Error(res.error), { errno: res.errno }));
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
