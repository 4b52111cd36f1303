/**
 * What the machine tells the host driver as it happens, through one FIFO
 * read without blocking (on a timer, and before each request on the mount
 * is served): process lives from the proc connector (cn_proc.ts: every
 * fork, exec and exit of the machine) and the system calls that processes
 * run by `tracefs-emu exec` make outside the mount (syscalls.ts, and every
 * other call while something can see them: traced_calls.ts). One FIFO keeps
 * them in the order they were written: a watched call is written before the
 * exit of the process that made it. Beside the FIFO, `FIFO.observe` says
 * what the kernel can see (observe_switch.ts): the watcher reports opens
 * only while it sees anything, and traces every call only while it sees
 * system calls.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isKernelError } from '../kernel/errno.js';
import { procEventLine, procEventsHelper } from './cn_proc.js';
import { nativeAddon } from './native_addon.js';
import { type ObserveLevel, ObserveSwitch } from './observe_switch.js';
import type { ProcessMirror } from './proc_mirror.js';
import { type HostSyscalls, parseHostSyscall, unescapeField } from './syscalls.js';
import { parseTracedCall, type TracedCalls } from './traced_calls.js';
import { expectCommandFailure, expectSystemError } from './system_error.js';

export interface HostEvents {
  /** The FIFO's path, while other processes may open it (undefined when it has no name). */
  readonly fifo?: string;
  /** Handles every event reported so far (without waiting). */
  drain(): void;
  /** Lines handled so far. */
  readonly lines: number;
  /** Answers to requests that raised the level sent without every watcher's acknowledgement. */
  readonly ackTimeouts: number;
  /**
   * Tells the watchers what the kernel can see now (written only when it
   * changed). A rise by a request of thread `requester` returns what its
   * answer waits for: the watchers' acknowledgements.
   */
  observe(level: ObserveLevel, requester?: number): Promise<void> | undefined;
  stop(): void;
}

interface HostEventSinks {
  mirror: ProcessMirror;
  syscalls: HostSyscalls;
  traced: TracedCalls;
  /** What the kernel can see now (checked as events are read). */
  observed(): ObserveLevel;
}

/** A non-blocking read of the FIFO: bytes read, 0 when nothing waits. */
function readerOf(fd: number, buf: Buffer): () => number {
  try {
    const { readAvailable } = nativeAddon();
    return () => readAvailable(fd, buf);
  } catch {
    // Without the native module (a library user's in-process driver): Node's read, which throws EAGAIN.
    return () => {
      try {
        return readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        expectSystemError(e, 'EAGAIN');
        return 0;
      }
    };
  }
}

/** How often events are read when no request asks for them first. */
const POLL_MS = 10;

/**
 * Dispatches one line: `S ...` is a watched system call, `T ...` any other
 * traced call, `B pid nr` a traced thread entering a call that forks, `N
 * ppid pid\tcomm` a traced fork done (its parent, running `comm`, still
 * waiting), `D pid status\tcomm` a traced thread exiting (not yet
 * reapable); the rest are process events.
 */
export function hostEventLine(sinks: HostEventSinks, line: string): void {
  if (line.startsWith('S ')) {
    const rec = parseHostSyscall(line);
    if (rec) sinks.syscalls.run(rec);
  } else if (line.startsWith('T ')) {
    const rec = parseTracedCall(line);
    if (rec) sinks.traced.run(rec);
  } else if (line.startsWith('B ')) {
    const [, pid, nr] = line.split(' ').map(Number);
    if (Number.isInteger(pid) && Number.isInteger(nr)) sinks.mirror.forkCalled(pid!, nr!);
  } else if (line.startsWith('N ')) {
    const s = stopLine(line);
    if (s) sinks.mirror.forkTraced(s.a, s.b, s.comm);
  } else if (line.startsWith('D ')) {
    const s = stopLine(line);
    if (s) sinks.mirror.exitTraced(s.a, s.b, s.comm, s.c);
  } else procEventLine(sinks.mirror, line);
}

/** A tracer's stop line, `L a b [c]\tcomm` (N: ppid pid; D: pid status slept-ns): undefined when its numbers are not. */
function stopLine(line: string): { a: number; b: number; c?: number; comm?: string } | undefined {
  const [head, comm] = line.split('\t');
  const [, a, b, c] = head!.split(' ').map(Number);
  if (!Number.isInteger(a) || !Number.isInteger(b)) return undefined;
  return { a: a!, b: b!, c: Number.isInteger(c) ? c : undefined, comm: comm ? unescapeField(comm) : undefined };
}

/**
 * Dispatches the lines of one read, in order (those `taken` takes aside).
 * Processes whose exit is among them are known gone while the lines before
 * their exit are handled (see ProcessMirror.exitsAhead).
 */
export function hostEventLines(sinks: HostEventSinks, lines: readonly string[], taken: (line: string) => boolean = () => false): void {
  sinks.mirror.exitsAhead(exitedPids(lines));
  try {
    for (const line of lines) {
      if (taken(line)) continue;
      try {
        hostEventLine(sinks, line);
      } catch (e) {
        // A process gone mid-way: its next event or exit check settles it.
        if (!isKernelError(e)) expectSystemError(e);
      }
    }
  } finally {
    sinks.mirror.linesHandled();
  }
}

/** The pids of the exit lines among `lines`: the proc connector's (`X cpu pid tgid code`) and the tracer's (`D pid status`). */
function* exitedPids(lines: readonly string[]): Generator<number> {
  for (const line of lines) {
    const at = line.startsWith('X ') ? 2 : line.startsWith('D ') ? 1 : -1;
    if (at < 0) continue;
    const pid = Number(line.split(' ', at + 1)[at]);
    if (Number.isInteger(pid)) yield pid;
  }
}

/** Where the watchers read whether the kernel can see system calls: beside the FIFO. */
export function observePath(fifo: string): string {
  return `${fifo}.observe`;
}

/**
 * Opens the FIFO (at `fifo`, kept until stop; else a nameless one) and, with
 * `procEvents` (root only), starts the proc connector's helper writing into
 * it. Undefined when neither can be had here.
 */
export function startHostEvents(sinks: HostEventSinks, opts: { procEvents: boolean; fifo?: string }): HostEvents | undefined {
  const helper = opts.procEvents && process.getuid?.() === 0 ? procEventsHelper() : undefined;
  if (!helper && !opts.fifo) return undefined;
  let dir: string | undefined;
  let rfd: number | undefined;
  let wfd: number | undefined;
  let child: ChildProcess | undefined;
  let observeSwitch: ObserveSwitch | undefined;
  const path = opts.fifo ?? join((dir = mkdtempSync(join(tmpdir(), 'tracefs-emu-events-'))), 'events');
  try {
    rmSync(path, { force: true });
    execFileSync('mkfifo', ['-m', '600', path], { stdio: 'ignore' });
    if (opts.fifo) observeSwitch = new ObserveSwitch(observePath(opts.fifo), () => drain());
    rfd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    // Writers block when it is full (opening does not: a reader is there). This end, kept open, means a
    // read finds nothing rather than end-of-file when no writer is left.
    wfd = openSync(path, constants.O_WRONLY);
    if (dir !== undefined) {
      rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    }
    if (helper) child = spawn(helper, [], { stdio: ['ignore', wfd, 'ignore'] });
  } catch (e) {
    expectCommandFailure(e);
    for (const fd of [rfd, wfd]) if (fd !== undefined) closeSync(fd);
    rmSync(dir ?? path, { recursive: true, force: true });
    return undefined;
  }
  const fd = rfd;
  child?.on('error', () => undefined);
  child?.unref();
  const buf = Buffer.alloc(1 << 16);
  // Drained before every request on the mount: an empty read must cost a system call, not an exception.
  const read = readerOf(fd, buf);
  let pending = '';
  let open = true;
  let lines = 0;
  let draining = false;
  const drain = (): void => {
    observe(sinks.observed());
    // Lines are read out of `buf`: a drain from inside a line's handling waits for the outer one.
    if (draining) return;
    draining = true;
    try {
      drainLines();
    } finally {
      draining = false;
    }
  };
  const drainLines = (): void => {
    while (open) {
      const n = read();
      if (n <= 0) break;
      // Each line is decoded on its own: a slice of one string made of the whole read would keep all
      // of it alive for as long as a name taken from one line is (a comm, a path the kernel keeps).
      let start = 0;
      let nl: number;
      const got: string[] = [];
      while ((nl = buf.indexOf(10, start)) >= 0 && nl < n) {
        got.push(pending + buf.toString('latin1', start, nl));
        pending = '';
        start = nl + 1;
      }
      if (start < n) pending += buf.toString('latin1', start, n);
      lines += got.length;
      hostEventLines(sinks, got, (line) => observeSwitch?.line(line) ?? false);
    }
  };
  const timer = setInterval(drain, POLL_MS);
  timer.unref();
  const stop = (): void => {
    if (!open) return;
    open = false;
    clearInterval(timer);
    observeSwitch?.close();
    child?.kill();
    for (const f of [fd, wfd]) {
      try {
        closeSync(f!);
      } catch (e) {
        expectSystemError(e); // closed
      }
    }
    if (opts.fifo) {
      rmSync(opts.fifo, { force: true });
      rmSync(observePath(opts.fifo), { force: true });
    }
  };
  const observe = (level: ObserveLevel, requester?: number): Promise<void> | undefined => (open ? observeSwitch?.set(level, requester) : undefined);
  return {
    fifo: opts.fifo,
    drain,
    stop,
    observe,
    get lines() {
      return lines;
    },
    get ackTimeouts() {
      return observeSwitch?.timeouts ?? 0;
    },
  };
}
