/**
 * ftrace_ops: one user of the function-entry hook — its callback, its
 * filter/notrace hashes, its flags — and, for a manager ops (fgraph's
 * graph_ops), the sub-ops whose functions it traces on their behalf.
 */
import type { PtRegs } from '../kernel/regs.js';
import type { Task } from '../kernel/task.js';
import { FtraceHash, type FuncHash } from './ftrace_hash.js';

export const FTRACE_OPS_FL_ENABLED = 1 << 0;
export const FTRACE_OPS_FL_DYNAMIC = 1 << 1;
export const FTRACE_OPS_FL_SAVE_REGS = 1 << 2;
/** The callback does not protect itself against recursion: call it through ftrace_ops_assist_func. */
export const FTRACE_OPS_FL_RECURSION = 1 << 4;
export const FTRACE_OPS_FL_STUB = 1 << 5;
export const FTRACE_OPS_FL_DELETED = 1 << 7;
export const FTRACE_OPS_FL_ALLOC_TRAMP = 1 << 11;
export const FTRACE_OPS_FL_IPMODIFY = 1 << 12;
/** Honours set_ftrace_pid / set_ftrace_notrace_pid of its trace array. */
export const FTRACE_OPS_FL_PID = 1 << 13;
export const FTRACE_OPS_FL_RCU = 1 << 14;
export const FTRACE_OPS_FL_DIRECT = 1 << 17;
/** Enabled as a sub-ops of a manager ops. */
export const FTRACE_OPS_FL_SUBOP = 1 << 18;
/** Registered with fgraph. */
export const FTRACE_OPS_FL_GRAPH = 1 << 19;
/** No FTRACE_OPS_FL_SAVE_ARGS bit exists on x86: ftrace_regs always carries the arguments. */
export const FTRACE_OPS_FL_SAVE_ARGS = 0;

/**
 * An ftrace callback: ip is the traced function's __fentry__ address,
 * parentIp the return address into its caller, regs the registers at entry
 * (regs.sp points at the return slot), task the running task, id the traced
 * function's id (what hashes are keyed by).
 */
export type FtraceFunc = (ip: bigint, parentIp: bigint, op: FtraceOps, regs: PtRegs, task: Task, id: number) => void;

/** What an ops with FTRACE_OPS_FL_PID asks of its trace array (set_ftrace_pid / set_ftrace_notrace_pid). */
export interface FtracePidFilter {
  /** ftrace_pids_enabled(): some pid list is set. */
  pidsEnabled(): boolean;
  /** The per-CPU ftrace_ignore_pid says this task is not traced. */
  ignores(task: Task): boolean;
}

interface FtraceOpsInit {
  func: FtraceFunc;
  /** Kernel symbol of the C function this stands for (enabled_functions prints it). */
  funcSym: string;
  flags?: number;
  /** Share another ops' hashes (fgraph ops use their trace array's function ops hashes). */
  funcHash?: FuncHash;
  private?: unknown;
  pids?: FtracePidFilter;
}

export class FtraceOps {
  func: FtraceFunc;
  funcSym: string;
  flags: number;
  /** The filter and notrace hashes (possibly shared with another ops, as func_hash is a pointer). */
  funcHash: FuncHash;
  private: unknown;
  pids?: FtracePidFilter;
  /** Address of its dynamically allocated trampoline, 0 when none. */
  trampoline = 0n;
  /** ops->func while set_ftrace_pid is in effect replaced by ftrace_pid_func. */
  savedFunc?: FtraceFunc;
  savedFuncSym?: string;
  /** Sub-ops of a manager ops, newest first. */
  readonly subops: FtraceOps[] = [];
  /** The manager of a sub-ops. */
  managed?: FtraceOps;
  /** Whether its callback now returns at once for every call, changing nothing (a tracer whose buffer records nothing). */
  quiet?: () => boolean;

  constructor(init: FtraceOpsInit) {
    this.func = init.func;
    this.funcSym = init.funcSym;
    this.flags = init.flags ?? 0;
    this.funcHash = init.funcHash ?? { filter: new FtraceHash(), notrace: new FtraceHash() };
    this.private = init.private;
    this.pids = init.pids;
  }

  get enabled(): boolean {
    return (this.flags & FTRACE_OPS_FL_ENABLED) !== 0;
  }

  get filterHash(): FtraceHash {
    return this.funcHash.filter;
  }

  get notraceHash(): FtraceHash {
    return this.funcHash.notrace;
  }
}
