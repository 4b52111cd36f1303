/** Shared set-up for tests of the core tracefs files: an emulator and shell-like writers. */
import { readFileSync } from 'node:fs';
import type { Caller } from '../../src/index.js';
import { Task } from '../../src/kernel/task.js';
import { O_APPEND, O_TRUNC, O_WRONLY } from '../../src/tracefs/node.js';
import type { Tracefs } from '../../src/tracefs/tracefs.js';
import type { KernelFeature } from '../../src/kernel/features.js';
import type { Series } from '../../src/kernel/series.js';
import { testEmulator } from './emulator.js';

export function fixture(name: string): string {
  return readFileSync(new URL(`../fixtures/ringbuf/${name}`, import.meta.url), 'latin1');
}

let nextPid = 4000;

export function setup(opts: { cpus?: number; series?: Series; features?: KernelFeature[] } = {}) {
  const emu = testEmulator(opts);
  const { kernel, fs } = emu;
  /** A root shell with a fixed pid, comm and CPU (not a real process, so nothing moves it). */
  const shell = (comm = 'sh', cpu = 0): Caller => {
    const pid = nextPid++;
    const t = kernel.tasks.add(new Task(pid, pid, comm, 1));
    t.cpu = cpu;
    return { pid, uid: 0, gid: 0 };
  };
  const root = shell('sh', 0);
  /** `echo -n data > path` (or >> with append). */
  const write = (path: string, data: string | Buffer, caller: Caller = root, append = false) =>
    fs.writeFile(path, data, { append }, caller);
  const read = (path: string, caller: Caller = root) => fs.readFile(path, caller);
  return { ...emu, shell, root, write, read };
}

/** The error a promise or call fails with (its code), or 'ok'. */
export async function errCode(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === 'function' ? p() : p);
    return 'ok';
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

/** The event lines of a trace (comment lines dropped). */
export function traceLines(text: string): string[] {
  return text.split('\n').filter((l) => l && !l.startsWith('#'));
}

/** A shell's echo (`echo TEXT > PATH`, or `>>`): the whole text written, in as many write(2) calls as the file takes. */
export async function echo(fs: Tracefs, path: string, text: string, append = false, caller?: Caller): Promise<void> {
  const buf = Buffer.from(text, 'latin1');
  const h = await fs.open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC), caller);
  try {
    for (let off = 0; off < buf.length; ) {
      const n = await h.write(buf.subarray(off), off);
      if (n <= 0) break;
      off += n;
    }
  } finally {
    h.release();
  }
}

