/**
 * struct kprobe and the aggregate probe that stands for several kprobes on
 * one address (include/linux/kprobes.h, kernel/kprobes.c): what a probe is;
 * registering one is kprobes.ts, arming it kprobe_arming.ts.
 */
import type { PtRegs } from '../kernel/regs.js';
import type { KernelFunction } from '../kernel/symbols.js';
import type { Task } from '../kernel/task.js';
import type { Kretprobe } from './kretprobes.js';

export const KPROBE_FLAG_GONE = 1;
export const KPROBE_FLAG_DISABLED = 2;
export const KPROBE_FLAG_OPTIMIZED = 4;
export const KPROBE_FLAG_FTRACE = 8;
export const KPROBE_FLAG_ON_FUNC_ENTRY = 16;

/** Where a probe goes: a symbol (+offset), or an address (+offset). */
export interface KprobeSpec {
  symbol?: string;
  offset?: number;
  addr?: bigint;
}

/** Pre handler: runs before the probed instruction; true means it changed regs.ip (the post handler is skipped). */
export type KprobePre = (p: Kprobe, regs: PtRegs, task: Task) => boolean | void;
/** Post handler: runs after the probed instruction. */
export type KprobePost = (p: Kprobe, regs: PtRegs, task: Task) => void;

/** struct kprobe. */
export class Kprobe {
  symbol?: string;
  offset: number;
  /** The probed address: given, or resolved (and adjusted past endbr64) at registration. */
  addr: bigint;
  pre?: KprobePre;
  post?: KprobePost;
  /** Hits lost to recursion (a kprobe hit while another kprobe's handler ran on that CPU). */
  nmissed = 0;
  /** Times its pre handler ran (the emulator's count; trace_kprobe keeps its own). */
  nhit = 0;
  flags = 0;
  /** A name for stats (`kprobes/kp1`). */
  name?: string;
  /** The kretprobe this kprobe is the entry of. */
  kretprobe?: Kretprobe;
  /** @internal the function probed and the offset in it, once registered. */
  fn?: KernelFunction;
  /** @internal */
  fnOffset = 0;
  /** @internal when (clock ns) the optimizer turns the armed int3 into a jump; -1: not pending. */
  optimizeAt = -1;

  constructor(spec: KprobeSpec & { pre?: KprobePre; post?: KprobePost; name?: string }) {
    this.symbol = spec.symbol;
    this.offset = spec.offset ?? 0;
    this.addr = spec.addr ?? 0n;
    this.pre = spec.pre;
    this.post = spec.post;
    this.name = spec.name;
  }

  get disabled(): boolean {
    return (this.flags & (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE)) !== 0;
  }

  get gone(): boolean {
    return (this.flags & KPROBE_FLAG_GONE) !== 0;
  }

  /** Runs through ftrace (KPROBE_FLAG_FTRACE). */
  get ftrace(): boolean {
    return (this.flags & KPROBE_FLAG_FTRACE) !== 0;
  }

  /** Its own OPTIMIZED flag (set when queued for the optimizer); `Kprobes.isOptimized(p)` tells whether the jump is in (and sees aggregates). */
  get optimized(): boolean {
    return (this.flags & KPROBE_FLAG_OPTIMIZED) !== 0;
  }
}

/** The probes sharing one address (aggr_kprobe). Its list is newest first. */
export class AggrKprobe {
  flags: number;
  nmissed = 0;
  readonly list: Kprobe[] = [];
  optimizeAt = -1;

  constructor(
    readonly addr: bigint,
    readonly fn: KernelFunction,
    readonly fnOffset: number,
    first: Kprobe,
  ) {
    this.flags = first.flags & ~KPROBE_FLAG_OPTIMIZED;
    this.list.push(first);
  }

  get disabled(): boolean {
    return (this.flags & (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE)) !== 0;
  }

  get hasPost(): boolean {
    return this.list.some((p) => p.post && !p.gone);
  }
}

/** What the kprobe table holds at an address. */
export type KprobeSlot = Kprobe | AggrKprobe;
