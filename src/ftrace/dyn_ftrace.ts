/**
 * Function records (struct dyn_ftrace): one per traceable function, in the
 * order of available_filter_functions, each with the kernel's flag word —
 * the number of ftrace_ops attached in the low bits, the state bits above.
 */
import type { KernelFunction } from '../kernel/symbols.js';

export const FTRACE_FL_ENABLED = 0x80000000;
export const FTRACE_FL_REGS = 1 << 30;
export const FTRACE_FL_REGS_EN = 1 << 29;
export const FTRACE_FL_TRAMP = 1 << 28;
export const FTRACE_FL_TRAMP_EN = 1 << 27;
export const FTRACE_FL_IPMODIFY = 1 << 26;
export const FTRACE_FL_DISABLED = 1 << 25;
export const FTRACE_FL_DIRECT = 1 << 24;
export const FTRACE_FL_DIRECT_EN = 1 << 23;
export const FTRACE_FL_CALL_OPS = 1 << 22;
/** Ever enabled since boot (touched_functions). */
export const FTRACE_FL_TOUCHED = 1 << 20;
/** Ever patched by an IPMODIFY or DIRECT ops (sticky, the `M` column). */
export const FTRACE_FL_MODIFIED = 1 << 19;
/** The reference count: how many ops want this function. */
export const FTRACE_REF_MAX = (1 << 19) - 1;

export class FtraceRecords {
  /** Traceable functions in record order. */
  readonly fns: readonly KernelFunction[];
  /** Function id of each record. */
  readonly ids: Int32Array;
  /** Record index of each function id, -1 when not traceable. */
  readonly indexOf: Int32Array;
  /** The flag word of each record (unsigned: read with >>> 0 where the top bit matters). */
  readonly flags: Uint32Array;

  constructor(traceable: readonly KernelFunction[], nrFunctions: number) {
    this.fns = traceable;
    this.ids = Int32Array.from(traceable, (f) => f.id);
    this.indexOf = new Int32Array(nrFunctions).fill(-1);
    traceable.forEach((f, i) => (this.indexOf[f.id] = i));
    this.flags = new Uint32Array(traceable.length);
  }

  get count(): number {
    return this.fns.length;
  }

  /** ftrace_rec_count() of the record of function `id`. */
  refcount(id: number): number {
    const r = this.indexOf[id];
    return r < 0 ? 0 : this.flags[r] & FTRACE_REF_MAX;
  }

  /** The flag word of the record of function `id` (0 when it has none). */
  flagsOf(id: number): number {
    const r = this.indexOf[id];
    return r < 0 ? 0 : this.flags[r];
  }

  isTraceable(id: number): boolean {
    return id >= 0 && id < this.indexOf.length && this.indexOf[id] >= 0;
  }

  /** The ftrace ip of a function: where its __fentry__ call sits. */
  static ip(fn: KernelFunction): bigint {
    return fn.addr + BigInt(fn.fentryOffset);
  }
}

/** Records an update touched, each once, in the order touched (a whole-kernel update touches every record: no hashing). */
export class RecordSet {
  readonly list: Int32Array;
  private readonly seen: Uint8Array;
  size = 0;

  constructor(nrRecords: number) {
    this.list = new Int32Array(nrRecords);
    this.seen = new Uint8Array(nrRecords);
  }

  add(r: number): void {
    if (this.seen[r]) return;
    this.seen[r] = 1;
    this.list[this.size++] = r;
  }
}
