/**
 * fprobe (kernel/trace/fprobe.c): entry and exit handlers on a set of
 * functions, through ftrace. Two implementations, chosen by the profile's
 * fprobeBackend:
 *  - fgraph (`fprobe_fgraph.ts`, 7.x): entry-only fprobes share one ftrace_ops,
 *    fprobes with an exit handler share one fgraph_ops and keep their
 *    per-call header and entry data on the task's shadow stack;
 *  - rethook (`fprobe_rethook.ts`, 6.12): one ftrace_ops per fprobe, returns hooked
 *    through a rethook pool of `nrMaxactive` nodes per fprobe.
 * Handlers see the task; what an event recorded from them would show is
 * `kernel.context(task)` (the preempt depth of the kernel path included).
 */
import { fail } from '../kernel/errno.js';
import type { PtRegs } from '../kernel/regs.js';
import type { KernelFunction } from '../kernel/symbols.js';
import type { Task } from '../kernel/task.js';
import { functionsFromFilter, functionsFromNames } from './fprobe_filter.js';
import type { Ftrace } from './ftrace.js';

/**
 * Entry handler: ip is the function's ftrace address, retIp the return
 * address, regs ftrace_regs (7.2: a partial pt_regs) or pt_regs (6.12),
 * data the entry data (fprobes with an exit handler). A non-zero (or true)
 * result skips this call's exit handler without counting a miss (session).
 */
export type FprobeEntry = (fp: Fprobe, ip: bigint, retIp: bigint, regs: PtRegs, data: Buffer | undefined, task: Task) => number | boolean | void;
/** Exit handler: regs.ax holds the return value; retIp is where the call returns to. */
export type FprobeExit = (fp: Fprobe, ip: bigint, retIp: bigint, regs: PtRegs, data: Buffer | undefined, task: Task) => void;

/** FPROBE_FL_DISABLED / FPROBE_FL_KPROBE_SHARED. */
const FPROBE_FL_DISABLED = 1;
const FPROBE_FL_KPROBE_SHARED = 2;
/** MAX_FPROBE_DATA_SIZE of the fgraph backend: 15 longs. */
export const MAX_FPROBE_DATA_SIZE = 120;

export interface FprobeOptions {
  entry?: FprobeEntry;
  exit?: FprobeExit;
  /** Bytes kept from entry to exit per call (7.2: at most 120, aligned to 8). */
  entryDataSize?: number;
  /** 6.12: rethook nodes (default: functions x CPUs x 2). Ignored on 7.2. */
  nrMaxactive?: number;
  /** Shares its handlers with kprobes: skipped (a miss) while a kprobe runs on the CPU. */
  kprobeShared?: boolean;
  /** A name for stats. */
  name?: string;
}

let nextAddr = 0xffff888104a00000n;

/** struct fprobe. */
export class Fprobe {
  entry?: FprobeEntry;
  exit?: FprobeExit;
  entryDataSize: number;
  nrMaxactive: number;
  /** Calls whose handlers did not run for lack of room (shadow stack / rethook pool) or recursion. */
  nmissed = 0;
  /** Entry handler calls (the emulator's count). */
  nhit = 0;
  /** Exit handler calls. */
  nexit = 0;
  flags = 0;
  name?: string;
  /** Where the kernel would have allocated it: the pointer the 7.2 shadow-stack header encodes. */
  readonly ptr: bigint;
  /** @internal its low and high 32 bits. */
  readonly ptrLo: number;
  /** @internal */
  readonly ptrHi: number;
  /** @internal the ftrace core it is registered with and the functions it probes. */
  ftrace?: Ftrace;
  /** @internal */
  fns: readonly KernelFunction[] = [];

  constructor(opts: FprobeOptions) {
    this.entry = opts.entry;
    this.exit = opts.exit;
    this.entryDataSize = opts.entryDataSize ?? 0;
    this.nrMaxactive = opts.nrMaxactive ?? 0;
    this.name = opts.name;
    if (opts.kprobeShared) this.flags |= FPROBE_FL_KPROBE_SHARED;
    this.ptr = nextAddr;
    this.ptrLo = Number(nextAddr & 0xffffffffn);
    this.ptrHi = Number(nextAddr >> 32n);
    nextAddr += 0x100n;
  }

  get disabled(): boolean {
    return (this.flags & FPROBE_FL_DISABLED) !== 0;
  }

  set disabled(on: boolean) {
    if (on) this.flags |= FPROBE_FL_DISABLED;
    else this.flags &= ~FPROBE_FL_DISABLED;
  }

  get kprobeShared(): boolean {
    return (this.flags & FPROBE_FL_KPROBE_SHARED) !== 0;
  }

  /** Registered now. */
  get registered(): boolean {
    return this.ftrace !== undefined;
  }

  /** The functions it is on (while registered). */
  get functions(): readonly KernelFunction[] {
    return this.fns;
  }
}

/** What each series' fprobe implementation does. */
export interface FprobeBackend {
  register(fp: Fprobe, fns: readonly KernelFunction[]): void;
  unregister(fp: Fprobe): void;
}

/**
 * register_fprobe() / register_fprobe_syms(): `filter` is a string of globs
 * separated by spaces (`notFilter` likewise excludes), or a list of exact
 * function names. The profile's fprobeNoMatchErrno when nothing matches,
 * E2BIG (fgraph: entry data over MAX_FPROBE_DATA_SIZE), its
 * fprobeReregisterErrno when registered already, ENOSPC (no fgraph slot
 * left), EBUSY.
 */
export function registerFprobe(ftrace: Ftrace, fp: Fprobe, filter: string | readonly string[], notFilter?: string): void {
  const kernel = ftrace.kernel;
  if (fp.ftrace) fail(kernel.profile.fprobeReregisterErrno);
  let fns: KernelFunction[];
  try {
    fns = typeof filter === 'string' ? functionsFromFilter(kernel, filter, notFilter) : functionsFromNames(kernel, filter);
  } catch (e) {
    // Nothing matches: ENOENT, or EINVAL where the filter is set through ftrace_set_filter().
    if (typeof filter === 'string' && (e as { code?: string }).code === 'ENOENT') fail(kernel.profile.fprobeNoMatchErrno);
    throw e;
  }
  ftrace.fprobeBackend.register(fp, fns);
  fp.ftrace = ftrace;
  fp.fns = fns;
  ftrace.fprobes.add(fp);
}

/** unregister_fprobe(): EINVAL if it is not registered. Calls in flight return normally; their exit handlers are not called. */
export function unregisterFprobe(ftrace: Ftrace, fp: Fprobe): void {
  if (fp.ftrace !== ftrace) fail('EINVAL');
  ftrace.fprobeBackend.unregister(fp);
  fp.ftrace = undefined;
  fp.fns = [];
  ftrace.fprobes.delete(fp);
}

/** disable_fprobe(): soft-disable (handlers skipped, hooks stay). */
export function disableFprobe(fp: Fprobe): void {
  fp.disabled = true;
}

export function enableFprobe(fp: Fprobe): void {
  fp.disabled = false;
}

/**
 * __fprobe_handler() / __fprobe_kprobe_handler(): the entry handler (a
 * kprobe-shared one is a miss while a kprobe runs on the CPU). A handler
 * that throws is a bug in its user: logged, never passed to the probed code.
 */
export function callFprobeEntry(ftrace: Ftrace, fp: Fprobe, ip: bigint, retIp: bigint, regs: PtRegs, data: Buffer | undefined, task: Task): number | boolean | void {
  const entry = fp.entry;
  if (!entry) {
    fp.nhit++;
    return 0;
  }
  try {
    if (fp.kprobeShared) {
      const kp = ftrace.kprobes;
      if (kp.kprobeRunning(task)) {
        fp.nmissed++;
        return 0;
      }
      fp.nhit++;
      return kp.asBusy(task, () => entry(fp, ip, retIp, regs, data, task));
    }
    fp.nhit++;
    return entry(fp, ip, retIp, regs, data, task);
  } catch (e) {
    ftrace.hookFailed(e);
    return 0;
  }
}

/** The exit handler, guarded the same way. */
export function callFprobeExit(ftrace: Ftrace, fp: Fprobe, ip: bigint, retIp: bigint, regs: PtRegs, data: Buffer | undefined, task: Task): void {
  const exit = fp.exit;
  if (!exit) return;
  fp.nexit++;
  try {
    exit(fp, ip, retIp, regs, data, task);
  } catch (e) {
    ftrace.hookFailed(e);
  }
}

/** SIZE_IN_LONG(). */
export function sizeInLong(bytes: number): number {
  return Math.ceil(bytes / 8);
}
