/**
 * Shared helpers of the e2e tests (real FUSE mounts driven by real shell
 * commands). Everything that touches a mount served by this very process
 * must be asynchronous (child processes): a synchronous call would block the
 * event loop that serves it.
 */
import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { type MountedTracefs, mountTracefs } from '../../src/fuse/mount.js';
import { HostDriver, type HostOptions } from '../../src/host/driver.js';
import type { Emulator, EmulatorOptions } from '../../src/index.js';
import { testEmulator } from './emulator.js';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = join(REPO, 'bin', 'tracefs-emu.js');

/** Why FUSE e2e tests cannot run here, or undefined when they can. */
export function fuseUnavailable(): string | undefined {
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse on this machine';
  return undefined;
}

/** Why `tracefs-emu exec` cannot run here (root, FUSE, a build of the CLI), or undefined when it can. */
export function execUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (mount namespaces)';
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse';
  if (!existsSync(join(REPO, 'dist', 'src', 'cli', 'index.js'))) return 'not built (npm run build)';
  return undefined;
}

export function tempDir(prefix = 'tfe-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `sh -c script` (dash on Debian), never throwing on a non-zero status. */
export function sh(script: string, opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return run('sh', ['-c', script], opts);
}

export function run(cmd: string, args: string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  const t0 = Date.now();
  return new Promise((ok) => {
    execFile(cmd, args, { timeout: opts.timeoutMs ?? 30_000, env: opts.env ?? process.env, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const e = err as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
      ok({
        code: e ? (typeof e.code === 'number' ? e.code : null) : 0,
        signal: e?.signal ?? null,
        stdout: String(stdout),
        stderr: String(stderr),
        ms: Date.now() - t0,
      });
    });
  });
}

/** The fstype mounted at `dir` (from /proc/self/mountinfo), if any. */
export async function mountedType(dir: string): Promise<string | undefined> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  let found: string | undefined;
  for (const line of text.split('\n')) {
    const [pre, post] = line.split(' - ');
    if (!pre || !post) continue;
    if (pre.split(' ')[4] === dir) found = post.split(' ')[0];
  }
  return found;
}

export async function waitUntil(cond: () => boolean | Promise<boolean>, ms = 10_000, step = 50): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, step));
  }
}

/** Starts the CLI in the background; resolves with the child once a stdout line matches. */
export function startCli(args: string[], env: NodeJS.ProcessEnv, ready: RegExp, ms = 20_000) {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  const started = new Promise<void>((ok, ko) => {
    const timer = setTimeout(() => ko(new Error(`no "${ready}" from tracefs-emu within ${ms} ms: ${out}${err}`)), ms);
    child.stdout.on('data', (d) => {
      out += String(d);
      if (ready.test(out)) {
        clearTimeout(timer);
        ok();
      }
    });
    child.on('exit', (code, sig) => {
      clearTimeout(timer);
      ko(new Error(`tracefs-emu exited (${sig ?? code}) before ready: ${out}${err}`));
    });
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) =>
    child.on('exit', (code, signal) => ok({ code, signal })),
  );
  return { child, started, exited, output: () => out + err };
}

/**
 * A fresh 2-CPU emulator mounted for the enclosing describe block (at
 * <tmp>/mnt, unmounted after it); `setup` adds to it before the mount.
 * With `host`, a started host driver mirrors the machine's processes, as
 * the daemon's does.
 */
export function mountedEmulator(
  prefix: string,
  setup?: (emu: Emulator) => void,
  opts: EmulatorOptions & { host?: HostOptions } = {},
): { emu: Emulator; dir: string; mount: MountedTracefs } {
  const box = {} as { emu: Emulator; dir: string; mount: MountedTracefs; host?: HostDriver };
  beforeAll(async () => {
    const { host, ...emuOpts } = opts;
    const callers = host ? (kernel: Emulator['kernel']) => (box.host = new HostDriver(kernel, host)).taskOf : undefined;
    box.emu = testEmulator({ ...emuOpts, callers });
    box.host?.start();
    setup?.(box.emu);
    const parent = tempDir(prefix);
    chmodSync(parent, 0o755);
    box.dir = `${parent}/mnt`;
    box.mount = await mountTracefs(box.emu.fs, box.dir);
  });
  afterAll(async () => {
    await box.mount?.unmount();
    box.host?.stop();
  });
  return box;
}
