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
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ProcessMirror } from './proc_mirror.js';
import { dataDir } from './symbols_builtin.js';

export interface ProcEvents {
  stop(): void;
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

/** Starts listening (root only); undefined when the events are not available here. */
export function startProcEvents(mirror: ProcessMirror): ProcEvents | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const bin = procEventsHelper();
  if (!bin) return undefined;
  let child: ChildProcess;
  try {
    child = spawn(bin, [], { stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  child.on('error', () => undefined);
  child.unref();
  let pending = '';
  const out = child.stdout!;
  out.setEncoding('latin1');
  out.on('data', (chunk: string) => {
    pending += chunk;
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
  });
  (out as unknown as { unref?: () => void }).unref?.();
  return {
    stop: () => {
      child.kill();
    },
  };
}
