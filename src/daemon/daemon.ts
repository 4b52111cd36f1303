/**
 * A mount served by this process until SIGINT/SIGTERM/SIGHUP or the control
 * command `shutdown`, with its state files and control socket; and
 * `--daemon`, which runs the same in a detached child and returns once it
 * has mounted.
 */
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { resolve } from 'node:path';
import { HostDriver, type HostOptions } from '../host/driver.js';
import { createEmulator, type Emulator, type EmulatorOptions } from '../index.js';
import { applyMountOptions, parseTracefsOptions, showTracefsOptions, type TracefsMountOptions } from '../tracefs/ownership.js';
import { type MountedTracefs, mountTracefs, userOnlyMount } from '../fuse/mount.js';
import { mountAt } from '../fuse/mount_table.js';
import { type ControlContext, ControlServer } from './control.js';
import './control_commands.js';
// After the commands every daemon has: `commands` lists them in the order they were registered.
import { serveNamespaceViews } from '../exec/namespace_views.js';
import { ensureStateDir, isAlive, type MountState, readState, removeState, statePaths, waitWatcher, writeMountOptions, writeState } from './state.js';
import { collectWhenIdle } from './idle_collect.js';
import { nativeAddon } from '../host/native_addon.js';
import { signalEnds } from '../host/pending_signals.js';

interface ServeOptions {
  dir: string;
  emulator: EmulatorOptions;
  /** What the host driver follows of the machine (its events FIFO is the mount's). */
  host?: Omit<HostOptions, 'eventsFifo'>;
  /** tracefs mount options (`-o gid=N,uid=N,mode=OCT`). */
  tracefsOptions?: string;
  /** Extra libfuse options. */
  fuseOptions?: string[];
  /** Also write the pid here (besides the state dir). */
  pidFile?: string;
  /** Leave the mount to fusermount's clean-up if this process dies (default true). */
  autoUnmount?: boolean;
  daemon?: boolean;
}

interface Served {
  emulator: Emulator;
  /** What ties the emulator to the machine: its processes, their calls outside the mount. */
  host: HostDriver;
  mount: MountedTracefs;
  state: MountState;
  /** Unmounts, closes the control socket, removes the state files. */
  stop(): Promise<void>;
}

/** Env marker telling a spawned child it is the daemon of `mount --daemon`. */
const DAEMON_CHILD_ENV = 'TRACEFS_EMU_DAEMON_CHILD';

function log(msg: string): void {
  console.error(`tracefs-emu[${process.pid}]: ${msg}`);
}

/**
 * Refuses a mount point a live daemon serves; forgets the state of dead
 * ones, after their auto_unmount watcher is done (else it could unmount us).
 */
async function checkPrevious(mountpoint: string): Promise<void> {
  const prev = readState(mountpoint);
  if (!prev) return;
  if (isAlive(prev.pid) && prev.pid !== process.pid && mountAt(mountpoint)?.fstype === 'fuse.tracefs') {
    throw new Error(`${mountpoint}: already mounted by tracefs-emu pid ${prev.pid}`);
  }
  await waitWatcher(prev);
  removeState(mountpoint);
}

/** Mounts and serves in this process. Resolves once mounted. */
async function serve(o: ServeOptions): Promise<Served> {
  const mountpoint = resolve(o.dir);
  await checkPrevious(mountpoint);
  const tracefsOpts = parseTracefsOptions(o.tracefsOptions ?? '');
  const paths = statePaths(mountpoint);
  ensureStateDir();
  // Requests run in the tasks of the machine's processes, mirrored; processes run by `exec` report their
  // system calls outside the mount through the FIFO.
  let host!: HostDriver;
  const callers = (kernel: Emulator['kernel']) => (host = new HostDriver(kernel, { ...o.host, eventsFifo: paths.events })).taskOf;
  const emulator = createEmulator({ ...o.emulator, sb: { uid: 0, gid: 0 }, callers });
  host.start();
  applyMountOptions(emulator.fs.root, emulator.fs.sb, userOwned(tracefsOpts), false);

  if (userOnlyMount()) log(`mounting for uid ${process.getuid?.()} only: for other users to reach it, add user_allow_other to /etc/fuse.conf (as root)`);
  const { returning } = host;
  const mount = await mountTracefs(emulator.fs, mountpoint, { fuseOptions: o.fuseOptions, autoUnmount: o.autoUnmount, log, returning, signalEnds });
  // debugfs and /proc views for `tracefs-emu exec` namespaces.
  const views = await serveNamespaceViews(emulator, mountpoint, { log, autoUnmount: o.autoUnmount, returning }).catch(async (e: Error) => {
    await mount.unmount().catch(() => {});
    throw e;
  });
  const state: MountState = {
    mountpoint,
    pid: process.pid,
    series: emulator.kernel.series,
    cpus: emulator.kernel.nrCpus,
    seed: emulator.kernel.seed,
    options: o.tracefsOptions ?? '',
    socket: paths.socket,
    daemon: !!o.daemon,
    watcherPid: mount.autoUnmountPid,
    log: o.daemon ? paths.log : undefined,
    startedAt: new Date().toISOString(),
  };

  // What a run left behind goes back once the mount has been quiet for a while.
  const trim = (): void => void nativeAddon().trimHeap();
  const stopCollecting = collectWhenIdle(() => mount.requests.total + Object.values(mount.cachedAnswers()).reduce((a, b) => a + b, 0), { trim });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      stopCollecting();
      try {
        await views.stop().catch((e: Error) => log(`debugfs: ${e.message}`));
        await mount.unmount();
      } finally {
        host.stop();
        await server.close().catch(() => {});
        removeState(mountpoint, o.pidFile);
      }
    })());

  const ctx: ControlContext = {
    emulator,
    host,
    mount,
    state,
    shutdown: () => {
      void stop().finally(() => process.exit(0));
    },
  };
  const server = new ControlServer(paths.socket, ctx);
  try {
    await server.listen();
    writeMountOptions(mountpoint, showTracefsOptions(emulator.fs.sb));
    writeState(state, o.pidFile);
  } catch (e) {
    await views.stop().catch(() => {});
    await mount.unmount().catch(() => {});
    throw e;
  }
  return { emulator, host, mount, state, stop };
}

/** `tracefs-emu mount` in the foreground (or as the daemon child): serve until told to stop. */
export async function runForeground(o: ServeOptions): Promise<void> {
  const child = process.env[DAEMON_CHILD_ENV] === '1';
  let served: Served;
  try {
    served = await serve({ ...o, daemon: o.daemon || child });
  } catch (e) {
    if (child && process.send) process.send({ error: e instanceof Error ? e.message : String(e) });
    throw e;
  }
  const { state } = served;
  let leaving = false;
  const bye = (why: string) => {
    if (leaving) return;
    leaving = true;
    log(`${why}: unmounting ${state.mountpoint}`);
    served.stop().then(
      () => process.exit(0),
      (e) => {
        log(`unmount failed: ${e instanceof Error ? e.message : String(e)}`);
        process.exit(1);
      },
    );
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => bye(sig));
  // Unmounted by someone else (umount, fusermount -u): nothing left to serve.
  void served.mount.ended.then(() => bye('unmounted'));
  // The daemon never dies on input: anything that escapes is a bug, logged.
  process.on('uncaughtException', (e) => log(`uncaught: ${e.stack ?? e.message}`));
  process.on('unhandledRejection', (e) => log(`unhandled rejection: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));

  const msg = `mounted tracefs at ${state.mountpoint} (kernel ${state.series}, ${state.cpus} CPUs, pid ${process.pid})`;
  if (child && process.send) {
    process.send({ ready: true, pid: process.pid, mountpoint: state.mountpoint });
    process.disconnect?.();
    log(msg);
  } else {
    console.log(msg);
  }
}

/**
 * `mount --daemon`: re-runs this very command line in a detached child
 * (marked by the environment), waits until it has mounted, and returns its
 * pid. Its output goes to the state dir's `<key>.log`.
 */
export async function startDaemon(dir: string): Promise<{ pid: number; mountpoint: string; log: string }> {
  const mountpoint = resolve(dir);
  ensureStateDir();
  const logFile = statePaths(mountpoint).log;
  const out = openSync(logFile, 'a');
  const script = process.argv[1];
  if (!script) throw new Error('cannot find the tracefs-emu script to re-run as a daemon');
  const child = spawn(process.execPath, [...process.execArgv, script, ...process.argv.slice(2)], {
    detached: true,
    stdio: ['ignore', out, out, 'ipc'],
    env: { ...process.env, [DAEMON_CHILD_ENV]: '1' },
  });
  return new Promise((ok, ko) => {
    let done = false;
    const finish = (err?: Error, pid?: number) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.removeAllListeners();
      if (child.connected) child.disconnect();
      child.unref();
      if (err) ko(err);
      else ok({ pid: pid ?? child.pid ?? 0, mountpoint, log: logFile });
    };
    const timer = setTimeout(() => finish(new Error(`daemon did not report within 60 s; see ${logFile}`)), 60_000);
    child.on('message', (m: { ready?: boolean; pid?: number; error?: string }) => {
      if (m.ready) finish(undefined, m.pid);
      else if (m.error) finish(new Error(m.error));
    });
    child.on('exit', (code, sig) => finish(new Error(`daemon exited (${sig ?? `status ${code}`}) before mounting; see ${logFile}`)));
    child.on('error', (e) => finish(e));
  });
}

/** A user's mount (not root's) is that user's: uid= and gid= default to the mounting user's, so the tree is theirs to use. */
function userOwned(opts: TracefsMountOptions): TracefsMountOptions {
  const uid = process.getuid?.() ?? 0;
  if (uid === 0) return opts;
  return { ...opts, uid: opts.uid ?? uid, gid: opts.gid ?? process.getgid?.() ?? uid };
}
