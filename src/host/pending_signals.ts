/**
 * Whether a signal pending for a host process will end it: pending (the
 * thread's or its process's), not blocked, not caught, not ignored, and one
 * whose default action terminates (/proc/PID/status). The FUSE adapter asks
 * it of a reader whose blocked read a signal interrupted: such a reader's
 * files are released as soon as it is gone, before anything its killer does
 * next on a kernel, later through FUSE (FuseAdapter.interrupted).
 */
import { readFileSync } from 'node:fs';
import { expectSystemError } from './system_error.js';

/** Signals whose default action is to stop or continue, or to do nothing (signal(7)). */
const NOT_FATAL = [17 /* CHLD */, 18 /* CONT */, 19 /* STOP */, 20 /* TSTP */, 21 /* TTIN */, 22 /* TTOU */, 23 /* URG */, 28 /* WINCH */];
const NOT_FATAL_MASK = NOT_FATAL.reduce((m, s) => m | (1n << BigInt(s - 1)), 0n);
/** SIGKILL: never blocked, caught or ignored. */
const KILL = 1n << 8n;

function mask(status: string, field: string): bigint {
  const m = new RegExp(`^${field}:\\s*([0-9a-f]+)`, 'm').exec(status);
  return m ? BigInt(`0x${m[1]}`) : 0n;
}

export function signalEnds(pid: number): boolean {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'latin1');
  } catch (e) {
    expectSystemError(e);
    return false;
  }
  return signalEndsIn(status);
}

/** The same, from the text of /proc/PID/status. */
export function signalEndsIn(status: string): boolean {
  const pending = mask(status, 'SigPnd') | mask(status, 'ShdPnd');
  const handled = (mask(status, 'SigBlk') | mask(status, 'SigIgn') | mask(status, 'SigCgt')) & ~KILL;
  return (pending & ~handled & ~NOT_FATAL_MASK) !== 0n;
}
