/**
 * Error reporting of the probe parsers (trace_probe_log): the kernel's error
 * texts, and the error_log entries a failed command leaves — subsystem,
 * message, the command as the kernel rebuilds it, and the caret position.
 */
import type { ErrnoName } from '../../kernel/errno.js';
import type { KernelProfile } from '../../kernel/profiles/profile.js';

/** The ERRORS table of trace_probe.h (text is ABI: byte for byte). */
const TP_ERR = {
  FILE_NOT_FOUND: 'Failed to find the given file',
  NO_REGULAR_FILE: 'Not a regular file',
  BAD_REFCNT: 'Invalid reference counter offset',
  REFCNT_OPEN_BRACE: 'Reference counter brace is not closed',
  BAD_REFCNT_SUFFIX: 'Reference counter has wrong suffix',
  BAD_UPROBE_OFFS: 'Invalid uprobe offset',
  BAD_MAXACT_TYPE: 'Maxactive is only for function exit',
  BAD_MAXACT: 'Invalid maxactive number',
  MAXACT_TOO_BIG: 'Maxactive is too big',
  BAD_PROBE_ADDR: 'Invalid probed address or symbol',
  NON_UNIQ_SYMBOL: 'The symbol is not unique',
  BAD_RETPROBE: 'Retprobe address must be an function entry',
  NO_TRACEPOINT: 'Tracepoint is not found',
  BAD_TP_NAME: 'Invalid character in tracepoint name',
  BAD_ADDR_SUFFIX: 'Invalid probed address suffix',
  NO_GROUP_NAME: 'Group name is not specified',
  GROUP_TOO_LONG: 'Group name is too long',
  BAD_GROUP_NAME: 'Group name must follow the same rules as C identifiers',
  NO_EVENT_NAME: 'Event name is not specified',
  EVENT_TOO_LONG: 'Event name is too long',
  BAD_EVENT_NAME: 'Event name must follow the same rules as C identifiers',
  EVENT_EXIST: 'Given group/event name is already used by another event',
  RETVAL_ON_PROBE: '$retval is not available on probe',
  NO_RETVAL: "This function returns 'void' type",
  BAD_STACK_NUM: 'Invalid stack number',
  BAD_ARG_NUM: 'Invalid argument number',
  BAD_VAR: 'Invalid $-variable specified',
  BAD_REG_NAME: 'Invalid register name',
  BAD_MEM_ADDR: 'Invalid memory address',
  BAD_IMM: 'Invalid immediate value',
  IMMSTR_NO_CLOSE: "String is not closed with '\"'",
  FILE_ON_KPROBE: 'File offset is not available with kprobe',
  BAD_FILE_OFFS: 'Invalid file offset value',
  SYM_ON_UPROBE: 'Symbol is not available with uprobe',
  TOO_MANY_OPS: 'Dereference is too much nested',
  DEREF_NEED_BRACE: 'Dereference needs a brace',
  BAD_DEREF_OFFS: 'Invalid dereference offset',
  DEREF_OPEN_BRACE: 'Dereference brace is not closed',
  COMM_CANT_DEREF: '$comm can not be dereferenced',
  BAD_FETCH_ARG: 'Invalid fetch argument',
  ARRAY_NO_CLOSE: 'Array is not closed',
  BAD_ARRAY_SUFFIX: 'Array has wrong suffix',
  BAD_ARRAY_NUM: 'Invalid array size',
  ARRAY_TOO_BIG: 'Array number is too big',
  BAD_TYPE: 'Unknown type is specified',
  BAD_STRING: 'String accepts only memory argument',
  BAD_SYMSTRING: "Symbol String doesn't accept data/userdata",
  BAD_BITFIELD: 'Invalid bitfield',
  ARG_NAME_TOO_LONG: 'Argument name is too long',
  NO_ARG_NAME: 'Argument name is not specified',
  BAD_ARG_NAME: 'Argument name must follow the same rules as C identifiers',
  USED_ARG_NAME: 'This argument name is already used',
  ARG_TOO_LONG: 'Argument expression is too long',
  NO_ARG_BODY: 'No argument expression',
  BAD_INSN_BNDRY: 'Probe point is not an instruction boundary',
  FAIL_REG_PROBE: 'Failed to register probe event',
  DIFF_PROBE_TYPE: 'Probe type is different from existing probe',
  DIFF_ARG_TYPE: 'Argument type or name is different from existing probe',
  SAME_PROBE: 'There is already the exact same probe event',
  NO_EVENT_INFO: 'This requires both group and event name to attach',
  BAD_ATTACH_EVENT: 'Attached event does not exist',
  BAD_ATTACH_ARG: 'Attached event does not have this field',
  NO_EP_FILTER: "No filter rule after 'if'",
  NOSUP_BTFARG: 'BTF is not available or not supported',
  NO_BTFARG: 'This variable is not found at this probe point',
  NO_BTF_ENTRY: 'No BTF entry for this probe point',
  BAD_VAR_ARGS: '$arg* must be an independent parameter without name etc.',
  NOFENTRY_ARGS: '$arg* can be used only on function entry or exit',
  DOUBLE_ARGS: '$arg* can be used only once in the parameters',
  ARGS_2LONG: '$arg* failed because the argument list is too long',
  ARGIDX_2BIG: '$argN index is too big',
  NO_PTR_STRCT: 'This is not a pointer to union/structure.',
  NOSUP_DAT_ARG: 'Non pointer structure/union argument is not supported.',
  BAD_HYPHEN: "Failed to parse single hyphen. Forgot '>'?",
  NO_BTF_FIELD: 'This field is not found.',
  BAD_BTF_TID: 'Failed to get BTF type info.',
  BAD_TYPE4STR: 'This type does not fit for string.',
  NEED_STRING_TYPE: '$comm and immediate-string only accepts string type',
  TOO_MANY_ARGS: 'Too many arguments are specified',
  TOO_MANY_EARGS: 'Too many entry arguments specified',
  EVENT_TOO_BIG: 'Event too big (too many fields?)',
  TYPECAST_NOT_EVENT: 'Typecasts are only for eprobe fields',
  // 7.3: BTF typecasts, $current, this_cpu_*(), nesting
  NOSUP_PERCPU: 'Per-cpu variable access is only for kernel probes',
  NO_EVENT_FIELD: 'This event field is not found.',
  TOO_MANY_NESTED: 'Too many nested typecasts/dereferences',
  TYPECAST_BAD_ARROW: 'Typecast field option does not support -> operator',
  TYPECAST_NOT_ALIGNED: 'Typecast field option is not byte-aligned',
  TYPECAST_REQ_FIELD: 'Typecast requires a field access',
  TYPECAST_SYM_OFFSET: '@SYM+/-OFFSET with typecast needs parentheses',
} as const;

export type TpErr = keyof typeof TP_ERR;

/** The ERRORS table of a series: the kernel's texts, with those its profile rewords. */
export function probeErrorTexts(profile: KernelProfile): Readonly<Record<TpErr, string>> {
  return { ...TP_ERR, FILE_ON_KPROBE: profile.fileOnKprobeError };
}

/**
 * One error_log entry, as tracing_log_err() records it:
 * `[ts] <loc>: error: <message>`, `  Command: <command>`, caret at `pos`.
 */
export interface ErrorLogEntry {
  /** Subsystem (`trace_kprobe`, `trace_fprobe`, `event_probe`, `dynevent`, `synthetic_events`, ...). */
  loc: string;
  message: string;
  command: string;
  /** Caret column in `command` (may exceed it: the kernel caps nothing). */
  pos: number;
}

/** trace_probe_log: the command being parsed and the argument errors refer to. */
export class ProbeLog {
  index = 0;
  private readonly texts: Readonly<Record<TpErr, string>>;
  constructor(
    readonly subsystem: string,
    readonly argv: readonly string[],
    private readonly sink: ErrorLogEntry[],
    profile: KernelProfile,
  ) {
    this.texts = probeErrorTexts(profile);
  }

  setIndex(i: number): void {
    this.index = i;
  }

  /** __trace_probe_log_err(): the caret goes at `offset` within argv[index]. */
  err(offset: number, err: TpErr): void {
    const { argv } = this;
    if (!argv.length) return;
    let len = 0;
    let pos = 0;
    for (let i = 0; i < argv.length; i++) {
      if (i === this.index) pos = len;
      len += argv[i].length + 1;
    }
    if (this.index >= argv.length) {
      pos = len;
      offset = 0;
    }
    // error_log keeps the position in a u16
    this.sink.push({ loc: this.subsystem, message: this.texts[err], command: argv.join(' '), pos: (pos + offset) & 0xffff });
  }
}
