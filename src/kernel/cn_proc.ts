/**
 * The host kernel's process events (the proc connector: every fork, exec
 * and exit on the machine, as they happen), read through a small helper
 * program (native/cn_proc/cn_proc_listen.c) because Node cannot open
 * netlink sockets. They let a process that never touches the mount — `sh -c
 * true` — appear in sched_process_fork traces. Needs root in the initial
 * network namespace; without it (or without a C compiler to build the
 * helper) the emulator mirrors only the processes it sees.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ProcessMirror } from './proc_mirror.js';
import { dataDir } from './symbols_builtin.js';

export interface ProcEvents {
  stop(): void;
  /** Handles every event the helper has reported so far (without waiting). */
  drain(): void;
}

/** The helper binary: built by scripts/setup.sh, else compiled once into ~/.cache. */
export function procEventsHelper(): string | undefined {
  let root: string;
  try {
    root = dirname(dataDir());
  } catch {
    return undefined;
  }
  const src = join(root, 'native', 'cn_proc', 'cn_proc_listen.c');
  const built = join(root, 'build', 'cn_proc_listen');
  if (existsSync(built) && (!existsSync(src) || statSync(built).mtimeMs >= statSync(src).mtimeMs)) return built;
  if (!existsSync(src)) return undefined;
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'tracefs-emu');
  const bin = join(cache, 'cn_proc_listen');
  if (existsSync(bin) && statSync(bin).mtimeMs >= statSync(src).mtimeMs) return bin;
  try {
    mkdirSync(cache, { recursive: true });
    execFileSync(process.env.CC ?? 'cc', ['-O2', '-o', bin, src], { stdio: 'ignore', timeout: 30_000 });
    return bin;
  } catch {
    return undefined;
  }
}

/** Dispatches one helper line to the mirror. */
export function procEventLine(mirror: ProcessMirror, line: string): void {
  const sp = line.split(' ');
  switch (sp[0]) {
    case 'F':
      mirror.onFork(Number(sp[2]), Number(sp[4]), Number(sp[5]), Number(sp[1]));
      break;
    case 'E': {
      const rest = line.split(' ').slice(4).join(' ');
      const [comm, exe] = rest.split('\t');
      mirror.onExec(Number(sp[2]), comm ?? '', exe || undefined);
      break;
    }
    case 'C':
      mirror.onComm(Number(sp[2]), sp.slice(4).join(' '));
      break;
    case 'X':
      mirror.onExit(Number(sp[2]), Number(sp[4]));
      break;
  }
}

/** How often events are read when no request asks for them first. */
const POLL_MS = 10;

/**
 * Starts listening (root only); undefined when the events are not available
 * here. The helper writes into a FIFO that is read without blocking: on a
 * timer, and by drain() before each request on the mount is served, so that
 * a process's fork, exec and exit are known before what it did next (a
 * `ping` run by a shell has its kernel_clone traced before the shell's `cat
 * trace` is read).
 */
export function startProcEvents(mirror: ProcessMirror): ProcEvents | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const bin = procEventsHelper();
  if (!bin) return undefined;
  let dir: string | undefined;
  let rfd: number | undefined;
  let child: ChildProcess;
  try {
    dir = mkdtempSync(join(tmpdir(), 'tracefs-emu-cnproc-'));
    const fifo = join(dir, 'events');
    execFileSync('mkfifo', ['-m', '600', fifo], { stdio: 'ignore' });
    rfd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    // The helper's end blocks when full (opening it does not: a reader is there).
    const wfd = openSync(fifo, constants.O_WRONLY);
    // Both ends are open: the name is no longer needed (nothing is left behind however the daemon ends).
    rmSync(dir, { recursive: true, force: true });
    dir = undefined;
    try {
      child = spawn(bin, [], { stdio: ['ignore', wfd, 'ignore'] });
    } finally {
      closeSync(wfd);
    }
  } catch {
    if (rfd !== undefined) closeSync(rfd);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const fd = rfd;
  child.on('error', () => undefined);
  child.unref();
  const buf = Buffer.alloc(1 << 16);
  let pending = '';
  let open = true;
  const drain = (): void => {
    while (open) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') break;
        n = 0;
      }
      if (n === 0) {
        // The helper is gone.
        stop();
        break;
      }
      pending += buf.toString('latin1', 0, n);
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        try {
          procEventLine(mirror, line);
        } catch {
          /* a process gone mid-way: its next event or exit check settles it */
        }
      }
    }
  };
  const timer = setInterval(drain, POLL_MS);
  timer.unref();
  const stop = (): void => {
    if (!open) return;
    open = false;
    clearInterval(timer);
    child.kill();
    try {
      closeSync(fd);
    } catch {
      /* closed */
    }
  };
  return { stop, drain };
}
