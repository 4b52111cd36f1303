/**
 * The state one probe definition is parsed with (traceprobe_parse_context)
 * and the parsed arguments it accumulates (struct trace_probe's args).
 */
import type { ErrnoName } from '../../kernel/errno.js';
import type { FuncParam, FuncProto, ResolvedType, StructType } from '../../kernel/ctypes.js';
import { THREAD_SIZE } from '../../kernel/kmem.js';
import type { FetchInsn, FetchType } from './fetch.js';
import type { EventView, ProbeEnv } from './probe_env.js';
import type { ProbeLog } from './probe_log.js';

/** TPARG_FL_*: where the probe sits, which decides what an argument may fetch. */
export const TPARG = {
  RETURN: 1,
  KERNEL: 2,
  FENTRY: 4,
  TEVENT: 8,
  USER: 16,
  FPROBE: 32,
  TPOINT: 64,
} as const;
const LOC_MASK = 0x1f;

export const isFunctionEntry = (flags: number): boolean => (flags & LOC_MASK) === (TPARG.KERNEL | TPARG.FENTRY);
export const isFunctionReturn = (flags: number): boolean => (flags & LOC_MASK) === (TPARG.KERNEL | TPARG.RETURN);

export const MAX_TRACE_ARGS = 128;
export const MAX_ARGSTR_LEN = 63;
export const MAX_ARRAY_LEN = 64;
export const MAX_ARG_NAME_LEN = 32;
export const MAX_BTF_ARGS_LEN = 128;
export const MAX_DENTRY_ARGS_LEN = 256;
export const MAX_PROBE_EVENT_SIZE = 3072;
export const MAX_EVENT_NAME_LEN = 64;
/** THREAD_SIZE / sizeof(long). */
export const PARAM_MAX_STACK = THREAD_SIZE / 8;

/** One parsed argument (struct probe_arg). */
export interface ProbeArg {
  name: string;
  /** The fetch expression as written (after $arg / %pd expansion): what listings show after `name=`. */
  comm: string;
  type: FetchType;
  /** Array length, 0 for scalars. */
  count: number;
  /** Offset of the value in the record, from the end of the probe's fixed fields. */
  offset: number;
  /** `<fmttype>[<count>]` for arrays. */
  fmt?: string;
  /** Stored as __data_loc (strings). */
  dynamic: boolean;
  code: FetchInsn[];
}

/** The arguments of one probe (the parts of struct trace_probe the parser fills). */
export class ProbeArgs {
  readonly args: ProbeArg[] = [];
  /** Bytes of argument data in a record. */
  size = 0;
  /** Function arguments saved at entry for a return probe (FETCH_OP_ARG numbers, in order). */
  readonly entryArgs: number[] = [];
  constructor(readonly nrArgs: number) {}

  /** __store_entry_arg(): the entry-data offset of argument `argnum`. */
  storeEntryArg(argnum: number): number {
    let i = this.entryArgs.indexOf(argnum);
    if (i < 0) i = this.entryArgs.push(argnum) - 1;
    return i * 8;
  }

  /** traceprobe_get_entry_data_size(). */
  entryDataSize(): number {
    return this.entryArgs.length * 8;
  }
}

/** A pointer into a fetch program: the kernel's `struct fetch_insn **pcode`. */
export interface CodeRef {
  code: FetchInsn[];
  i: number;
}

export interface ParseContext {
  readonly env: ProbeEnv;
  readonly log: ProbeLog;
  flags: number;
  /** Attached event for eprobes (TPARG_FL_TEVENT). */
  event?: EventView;
  /** Function whose BTF prototype names the arguments. */
  funcname?: string;
  /** BTF context, set once queried successfully. */
  btf?: { proto: FuncProto; params: readonly FuncParam[] };
  /** Typecast target of the current argument (eprobes). */
  structType?: StructType;
  lastType?: ResolvedType;
  lastBitoffs: number;
  lastBitsize: number;
  tp: ProbeArgs;
  /** Caret offset within the current argument. */
  offset: number;
}

export function newContext(env: ProbeEnv, log: ProbeLog, flags: number): ParseContext {
  return { env, log, flags, lastBitoffs: 0, lastBitsize: 0, tp: new ProbeArgs(0), offset: 0 };
}

/** A kernel-style result: 0 for success, else the errno the command fails with. */
export type KRet = 0 | ErrnoName;
