/**
 * The `exec` and `ns-helper` commands: find what the daemon of a mount
 * serves (tracefs, debugfs, /proc views, control socket), then run a command
 * in a namespace where those are at the standard paths.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { controlRequest } from '../daemon/control.js';
import { isAlive, readState } from '../daemon/state.js';
import { expectSystemError } from '../host/system_error.js';
import { runMountHelper } from './mount_helper.js';
import { execInNamespace, type ExecOptions, isTraceMount, type NamespaceSpec, parseMountinfo } from './namespace.js';
import { shq } from './ns_shims.js';

/** What a running daemon tells `exec` about itself (see `daemonNamespaceSpec`). */
export type DaemonInfo = Partial<Omit<NamespaceSpec, 'tracefs'>>;

/**
 * The namespace parts a mount's daemon serves beyond the tracefs itself
 * (its `namespace` control command); just its control socket from an older
 * daemon; nothing if no live daemon serves the mount.
 */
async function daemonInfo(mountDir: string): Promise<DaemonInfo | undefined> {
  const st = readState(mountDir);
  if (!st || !isAlive(st.pid)) return undefined;
  try {
    return { ...((await controlRequest(st.socket, 'namespace', {}, 10_000)) as DaemonInfo), controlSocket: st.socket };
  } catch (e) {
    // An older daemon without the command still has its socket; a hung one is no use.
    if (/unknown command/.test((e as Error).message)) return { controlSocket: st.socket };
    throw new Error(`exec: the daemon serving ${mountDir} (pid ${st.pid}) does not answer: ${(e as Error).message}`);
  }
}

/** The tracefs-emu program (bin/, next to dist/ where this module runs from). */
const PROGRAM = fileURLToPath(new URL('../../../bin/tracefs-emu.js', import.meta.url));

/** `node …/tracefs-emu.js ns-helper`, for the helper programs inside the namespace. */
function nsHelperCommand(): string {
  return `${shq(process.execPath)} ${shq(PROGRAM)} ns-helper`;
}

/**
 * The mount at `dir`, from mountinfo, without touching the mount itself (a
 * hung daemon would block any access to it); a symlinked path is resolved
 * with a time limit.
 */
async function mountPointOf(dir: string): Promise<{ mountPoint: string; traceLike: boolean } | undefined> {
  const mounts = parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8'));
  const find = (p: string) => mounts.filter((e) => e.mountPoint === p).pop();
  let abs = resolve(dir);
  let top = find(abs);
  if (!top) {
    const timeout = new Promise<undefined>((ok) => setTimeout(() => ok(undefined), 5000).unref());
    const resolved = realpath(dir).catch((e: unknown) => {
      expectSystemError(e);
      return undefined;
    });
    const real = await Promise.race([resolved, timeout]);
    if (real) top = find((abs = real));
  }
  return top ? { mountPoint: abs, traceLike: isTraceMount(top) } : undefined;
}

interface ExecArgs {
  mount: string;
  command: string[];
  /** Overrides of what the daemon says (testing, or a daemon without the info). */
  debugfs?: string;
  kallsyms?: string;
  control?: string;
  /** Report the command's system calls outside the mount to the emulated kernel (default true). */
  watch?: boolean;
}

async function namespaceSpecFor(args: Pick<ExecArgs, 'mount' | 'debugfs' | 'kallsyms' | 'control'>): Promise<NamespaceSpec> {
  const mp = await mountPointOf(args.mount);
  if (!mp) throw new Error(`exec: nothing is mounted at ${args.mount} (start one: tracefs-emu mount ${args.mount} --daemon)`);
  const info = (await daemonInfo(mp.mountPoint)) ?? {};
  const views = { ...(info.views ?? {}) };
  if (args.kallsyms) views['/proc/kallsyms'] = realpathSync(args.kallsyms);
  return {
    ...info,
    tracefs: mp.mountPoint,
    debugfs: args.debugfs ?? info.debugfs,
    controlSocket: args.control ?? info.controlSocket,
    views,
  };
}

export async function runExec(args: ExecArgs, opts: Partial<ExecOptions> = {}): Promise<number> {
  if (process.getuid?.() !== 0) throw new Error('exec: needs root (it makes a mount namespace and bind mounts in it)');
  const spec = await namespaceSpecFor(args);
  const srcDir = fileURLToPath(new URL('..', import.meta.url));
  return execInNamespace(spec, args.command, { nsHelper: nsHelperCommand(), ...(args.watch === false ? { watcher: false } : {}), ...opts, keep: [PROGRAM, srcDir, ...(opts.keep ?? [])] });
}

/** `tracefs-emu ns-helper TOOL ARGS…`: the programs the namespace runs through node. */
export async function runNsHelper(tool: string, args: string[]): Promise<number> {
  if (tool === 'mount') {
    // mount --type TYPE [--sources DIR] -- helper-args…
    const dd = args.indexOf('--');
    const own = dd >= 0 ? args.slice(0, dd) : args;
    const opt = (name: string) => {
      const i = own.indexOf(name);
      return i >= 0 ? own[i + 1] : undefined;
    };
    return runMountHelper(opt('--type') ?? 'tracefs', dd >= 0 ? args.slice(dd + 1) : args.slice(own.indexOf('--type') + 2), { sources: opt('--sources') });
  }
  process.stderr.write(`tracefs-emu ns-helper: unknown tool ${tool}\n`);
  return 1;
}
