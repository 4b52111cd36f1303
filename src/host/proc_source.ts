/**
 * What the host driver learns about the machine's processes: its /proc,
 * behind an interface so tests can script process lifetimes (a fork, an
 * exec that changes the comm, an exit, a reused pid).
 */
import { accessSync, closeSync, constants, openSync, readFileSync, readlinkSync, readSync } from 'node:fs';
import { type MountInfo, parseMountinfo } from './mountinfo.js';
import { expectSystemError } from './system_error.js';

/** A status file's affinity line (Cpus_allowed_list: 0-1). */
const CPUS_ALLOWED = /^Cpus_allowed_list:\s*(\S+)/m;

/** What /proc says about one real process. */
export interface ProcInfo {
  pid: number;
  tgid: number;
  comm: string;
  ppid: number;
  cpu: number;
  /** Start time (clock ticks since the machine booted). */
  startTime: number;
  /** Kernel priority as /proc/PID/stat shows it (prio - 100), and nice. */
  priority?: number;
  /** Scheduling policy (SCHED_NORMAL 0, SCHED_FIFO 1, ...). */
  policy?: number;
  state?: string;
}

export interface ProcSource {
  /** /proc/PID/stat (+ Tgid, unless the caller knows it: `tgid`): undefined when the process is gone (or a zombie). */
  stat(pid: number, tgid?: number): ProcInfo | undefined;
  /**
   * The comm of the process `pid` that started at `startTime`, undefined
   * when that process is gone: what a request of a known process needs to
   * know (has it exec'd?), cheaper than its whole stat.
   */
  comm(pid: number, startTime: number): string | undefined;
  /** readlink /proc/PID/exe. */
  exe(pid: number): string | undefined;
  /** readlink /proc/PID/cwd: undefined when unknown. */
  cwd(pid: number): string | undefined;
  /** /proc/PID/mountinfo: the mounts the process sees (undefined when unknown). */
  mounts?(pid: number): readonly MountInfo[] | undefined;
  /** How many times the process was switched in so far (/proc/PID/schedstat); undefined when gone or unknown. */
  switches?(pid: number): number | undefined;
  /** The CPUs it may run on (/proc/PID/status Cpus_allowed_list: its affinity); undefined when gone or unknown. */
  allowedCpus?(pid: number): readonly number[] | undefined;
  /** Start time (clock ticks since host boot) of processes that count as started with the emulator: older ones existed at "boot". */
  readonly bootTicks: number;
}

/**
 * Reads /proc/<pid>/stat (and status for the tgid, unless `knownTgid` says
 * it for a process of that start time); undefined if the process is gone.
 */
function readProcInfo(
  pid: number,
  procRoot = '/proc',
  knownTgid?: (startTime: number) => number | undefined,
  readStat: (pid: number) => string | undefined = (p) => {
    try {
      return readFileSync(`${procRoot}/${p}/stat`, 'latin1');
    } catch (e) {
      expectSystemError(e);
      return undefined;
    }
  },
): ProcInfo | undefined {
  const stat = readStat(pid);
  if (stat === undefined) return undefined;
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  if (open < 0 || close < 0) return undefined;
  const comm = stat.slice(open + 1, close);
  // Fields after the comm, 0-based from field 3 (state).
  const rest = stat.slice(close + 2).split(' ');
  const state = rest[0];
  if (state === 'Z' || state === 'X') return undefined;
  const ppid = Number(rest[1]);
  const priority = Number(rest[15]);
  const startTime = Number(rest[19]);
  const cpu = Number(rest[36]);
  const pol = Number(rest[38]);
  const policy = Number.isFinite(pol) ? pol : 0;
  let tgid = knownTgid?.(startTime) ?? -1;
  if (tgid >= 0) return { pid, tgid, comm, ppid, cpu: Number.isFinite(cpu) ? cpu : 0, startTime, priority: Number.isFinite(priority) ? priority : 20, policy, state };
  tgid = pid;
  try {
    const m = /^Tgid:\s+(\d+)/m.exec(readFileSync(`${procRoot}/${pid}/status`, 'latin1'));
    if (m) tgid = Number(m[1]);
  } catch (e) {
    expectSystemError(e); // gone between the two reads: keep pid
  }
  return { pid, tgid, comm, ppid, cpu: Number.isFinite(cpu) ? cpu : 0, startTime, priority: Number.isFinite(priority) ? priority : 20, policy, state };
}

/** The times a process was switched in: the third field of /proc/PID/schedstat. */
function parseSchedstat(text: string): number | undefined {
  const n = Number(text.trim().split(' ')[2]);
  return Number.isFinite(n) ? n : undefined;
}

/** Open /proc/PID/<file> descriptors kept at most per file name (least recently read closed first). */
const MAX_PROC_FDS = 256;

/**
 * /proc/PID/<name> read through a descriptor kept open per process: each
 * request of a process re-reads it with one pread instead of open + read +
 * close. A descriptor outlives nothing: once its process is gone, reading it
 * fails (ESRCH), and a new process with that pid gets a new one — so a
 * descriptor that still reads is the process it was opened for.
 */
class ProcFiles {
  private readonly fds = new Map<number, number>();
  private readonly buf = Buffer.allocUnsafe(4096);

  constructor(
    private readonly root: string,
    private readonly name: string,
  ) {}

  /**
   * What the descriptor kept for `pid` reads: always that process's, even
   * once the pid names another. Undefined (and the descriptor closed) when
   * none is kept or its process is gone.
   */
  readKept(pid: number): string | undefined {
    const fd = this.fds.get(pid);
    if (fd === undefined) return undefined;
    this.fds.delete(pid);
    const text = this.pread(fd);
    if (text !== undefined) {
      this.fds.set(pid, fd);
      return text;
    }
    closeSync(fd);
    return undefined;
  }

  /** The file of whatever process has `pid` now (through the kept descriptor while its process lives). */
  read(pid: number): string | undefined {
    const kept = this.readKept(pid);
    if (kept !== undefined) return kept;
    let nfd: number;
    try {
      nfd = openSync(`${this.root}/${pid}/${this.name}`, 'r');
    } catch (e) {
      expectSystemError(e);
      return undefined;
    }
    const text = this.pread(nfd);
    if (text === undefined) {
      closeSync(nfd);
      return undefined;
    }
    this.fds.set(pid, nfd);
    if (this.fds.size > MAX_PROC_FDS) {
      const [oldPid, oldFd] = this.fds.entries().next().value as [number, number];
      this.fds.delete(oldPid);
      closeSync(oldFd);
    }
    return text;
  }

  private pread(fd: number): string | undefined {
    try {
      const n = readSync(fd, this.buf, 0, this.buf.length, 0);
      return n > 0 ? this.buf.toString('latin1', 0, n) : undefined;
    } catch (e) {
      expectSystemError(e);
      return undefined;
    }
  }
}

/** The machine's /proc. */
export class HostProcSource implements ProcSource {
  private readonly statFiles: ProcFiles;
  private readonly commFiles: ProcFiles;
  private readonly schedstatFiles: ProcFiles;
  readonly bootTicks: number;

  constructor(private readonly root = '/proc') {
    this.bootTicks = readProcInfo(process.pid, root)?.startTime ?? 0;
    this.statFiles = new ProcFiles(root, 'stat');
    this.commFiles = new ProcFiles(root, 'comm');
    this.schedstatFiles = new ProcFiles(root, 'schedstat');
  }

  comm(pid: number, startTime: number): string | undefined {
    // A kept descriptor reads its own process's comm. Without one (never opened, or its process gone and
    // the pid perhaps another's by now), the pid must still be that process before its file is opened.
    const text = this.commFiles.readKept(pid) ?? (this.stat(pid)?.startTime === startTime ? this.commFiles.read(pid) : undefined);
    return text === undefined ? undefined : text.endsWith('\n') ? text.slice(0, -1) : text;
  }

  /** Tgids by pid and start time: a pid's thread group never changes while it lives. */
  private readonly tgids = new Map<number, { startTime: number; tgid: number }>();

  stat(pid: number, tgid?: number): ProcInfo | undefined {
    const info = readProcInfo(
      pid,
      this.root,
      (st) => {
        if (tgid !== undefined) return tgid;
        const c = this.tgids.get(pid);
        return c && c.startTime === st ? c.tgid : undefined;
      },
      (p) => this.statFiles.read(p),
    );
    if (info) {
      if (this.tgids.size > 4096) this.tgids.clear();
      this.tgids.set(pid, { startTime: info.startTime, tgid: info.tgid });
    }
    return info;
  }

  /** The path execve() was most likely given: argv[0] if it has a slash, else its match in the process's PATH, else /proc/PID/exe. */
  exe(pid: number): string | undefined {
    try {
      const argv0 = readFileSync(`${this.root}/${pid}/cmdline`, 'latin1').split('\0')[0] ?? '';
      if (argv0.includes('/')) return argv0;
      if (argv0) {
        const env = readFileSync(`${this.root}/${pid}/environ`, 'latin1').split('\0');
        const path = env.find((e) => e.startsWith('PATH='))?.slice(5);
        for (const d of path?.split(':') ?? []) {
          const f = `${d || '.'}/${argv0}`;
          try {
            accessSync(f, constants.X_OK);
            return f;
          } catch (e) {
            expectSystemError(e); // next
          }
        }
      }
    } catch (e) {
      expectSystemError(e); // gone, or not ours to read
    }
    try {
      return readlinkSync(`${this.root}/${pid}/exe`);
    } catch (e) {
      expectSystemError(e);
      return undefined;
    }
  }

  cwd(pid: number): string | undefined {
    try {
      return readlinkSync(`${this.root}/${pid}/cwd`);
    } catch (e) {
      expectSystemError(e);
      return undefined;
    }
  }

  switches(pid: number): number | undefined {
    // Read for every watched process about every scheduler tick: one pread each.
    const text = this.schedstatFiles.read(pid);
    return text === undefined ? undefined : parseSchedstat(text);
  }

  allowedCpus(pid: number): readonly number[] | undefined {
    try {
      const m = CPUS_ALLOWED.exec(readFileSync(`${this.root}/${pid}/status`, 'latin1'));
      return m ? parseCpuList(m[1]!) : undefined;
    } catch (e) {
      expectSystemError(e);
      return undefined;
    }
  }

  /** Mount tables by mount namespace, re-read at most once a second (they rarely change). */
  private readonly mountTables = new Map<string, { at: number; mounts: readonly MountInfo[] }>();

  /** Each process's mount namespace, as last read (a process rarely moves to another: unshare, setns). */
  private readonly mountNs = new Map<number, { at: number; ns: string }>();

  mounts(pid: number): readonly MountInfo[] | undefined {
    const now = Date.now();
    let known = this.mountNs.get(pid);
    if (!known || now - known.at >= 1000) {
      try {
        known = { at: now, ns: readlinkSync(`${this.root}/${pid}/ns/mnt`) };
      } catch (e) {
        expectSystemError(e);
        this.mountNs.delete(pid);
        return undefined;
      }
      if (this.mountNs.size > 4096) this.mountNs.clear();
      this.mountNs.set(pid, known);
    }
    const ns = known.ns;
    const c = this.mountTables.get(ns);
    if (c && now - c.at < 1000) return c.mounts;
    try {
      const mounts = parseMountinfo(readFileSync(`${this.root}/${pid}/mountinfo`, 'utf8'));
      if (this.mountTables.size > 64) this.mountTables.clear();
      this.mountTables.set(ns, { at: now, mounts });
      return mounts;
    } catch (e) {
      expectSystemError(e);
      return c?.mounts;
    }
  }
}

/** A scripted /proc for tests: set what each pid shows; delete to make it exit. */
export class FakeProcSource implements ProcSource {
  readonly procs = new Map<number, ProcInfo & { exe?: string; cwd?: string; switches?: number; allowed?: number[] }>();
  bootTicks = 1000;
  /** What every process sees as its mounts. */
  mountTable: MountInfo[] = [{ id: 1, mountPoint: '/', fstype: 'ext4', source: '/dev/vda1', options: 'rw', dev: '254:1' }];

  set(info: Partial<ProcInfo> & { pid: number; comm: string; exe?: string; cwd?: string; switches?: number; allowed?: number[] }): void {
    this.procs.set(info.pid, { tgid: info.pid, ppid: 1, cpu: 0, startTime: this.bootTicks + 1, ...info });
  }

  stat(pid: number): ProcInfo | undefined {
    const p = this.procs.get(pid);
    return p && { ...p };
  }

  comm(pid: number, startTime: number): string | undefined {
    const p = this.procs.get(pid);
    return p && p.startTime === startTime ? p.comm : undefined;
  }

  exe(pid: number): string | undefined {
    return this.procs.get(pid)?.exe;
  }

  cwd(pid: number): string | undefined {
    return this.procs.get(pid)?.cwd;
  }

  mounts(): readonly MountInfo[] {
    return this.mountTable;
  }

  switches(pid: number): number | undefined {
    return this.procs.get(pid)?.switches;
  }

  allowedCpus(pid: number): readonly number[] | undefined {
    return this.procs.get(pid)?.allowed;
  }
}

/** The CPUs this process may run on, as /proc shows them ("0-1"). */
export function ownCpuList(): string | undefined {
  return CPUS_ALLOWED.exec(readFileSync('/proc/self/status', 'latin1'))?.[1];
}

/** A cpulist (`0-3,5`) as its CPU numbers. */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.split(',')) {
    if (!part) continue;
    const [a, b] = part.split('-').map(Number);
    if (a === undefined || Number.isNaN(a)) continue;
    for (let c = a; c <= (b ?? a); c++) cpus.push(c);
  }
  return cpus;
}
