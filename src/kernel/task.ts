/** Tasks of the emulated kernel: kernel threads and mirrors of real processes. */
import { readFileSync } from 'node:fs';
import type { Call } from './executor.js';

export type TaskState = 'R' | 'S' | 'D' | 'T' | 't' | 'X' | 'Z' | 'P' | 'I';

export class Task {
  /** Which CPU the task last ran on. */
  cpu = 0;
  state: TaskState = 'R';
  /** Real process start time (clock ticks since host boot): tells a reused pid apart. */
  startTime = 0;
  /** Kernel stack pointer between calls (top of its kernel stack when idle). */
  sp = 0n;
  /** The emulated calls this task is inside, outermost first. */
  readonly frames: Call[] = [];
  /** preempt_count(): preemption depth in the low byte, softirq/hardirq/NMI counts above. */
  preemptCount = 0;

  constructor(
    readonly pid: number,
    public tgid: number,
    public comm: string,
    public ppid: number,
    /** Kernel threads (swapper/N, kworker/...) have no user space. */
    readonly kthread = false,
  ) {}
}

/** What /proc says about one real process. */
export interface ProcInfo {
  pid: number;
  tgid: number;
  comm: string;
  ppid: number;
  cpu: number;
  startTime: number;
}

/** Reads /proc/<pid>/stat (and status for the tgid); undefined if the process is gone. */
export function readProcInfo(pid: number, procRoot = '/proc'): ProcInfo | undefined {
  let stat: string;
  try {
    stat = readFileSync(`${procRoot}/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  const comm = stat.slice(open + 1, close);
  // Fields after the comm, 0-based from field 3 (state).
  const rest = stat.slice(close + 2).split(' ');
  const ppid = Number(rest[1]);
  const startTime = Number(rest[19]);
  const cpu = Number(rest[36]);
  let tgid = pid;
  try {
    const m = /^Tgid:\s+(\d+)/m.exec(readFileSync(`${procRoot}/${pid}/status`, 'latin1'));
    if (m) tgid = Number(m[1]);
  } catch {
    /* gone between the two reads: keep pid */
  }
  return { pid, tgid, comm, ppid, cpu: Number.isFinite(cpu) ? cpu : 0, startTime };
}
