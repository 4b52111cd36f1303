/**
 * A parsed probe (struct trace_probe) and the event it belongs to (struct
 * trace_probe_event): location, arguments, record layout, `format` fields and
 * print fmt, and the comparisons appending a probe to an event relies on.
 */
import type { EventField } from '../event_type.js';
import { TRACE_ENTRY_SIZE } from '../event_type.js';
import type { ProbeArg } from './parse_context.js';
import type { EventView } from './probe_env.js';

export interface KprobeLocation {
  kind: 'kprobe';
  /** `[mod:]symbol` as written, undefined for an address probe. */
  symbol?: string;
  offset: number;
  /** Address probe: the address written; after registration, the probed address. */
  addr?: bigint;
  /** rp.maxactive: as given, or the default once registered (0 while deferred). */
  maxactive: number;
}

export interface FprobeLocation {
  kind: 'fprobe';
  /** Function (glob) or tracepoint name. */
  symbol: string;
  tracepoint: boolean;
  /** fp.nr_maxactive (6.12 only; 7.x takes none). */
  maxactive: number;
}

export interface EprobeLocation {
  kind: 'eprobe';
  system: string;
  event: string;
  /** The `if` filter, as rebuilt from argv (space-joined). */
  filter?: string;
  attached: EventView;
}

export interface UprobeLocation {
  kind: 'uprobe';
  path: string;
  offset: bigint;
  refCtrOffset: bigint;
}

export type ProbeLocation = KprobeLocation | FprobeLocation | EprobeLocation | UprobeLocation;
export type ProbeKind = ProbeLocation['kind'];

/** One probe point with its arguments (a dyn_event in the dynamic_events list). */
export interface TraceProbe {
  readonly loc: ProbeLocation;
  group: string;
  event: string;
  isReturn: boolean;
  readonly args: readonly ProbeArg[];
  /** Bytes of argument data. */
  readonly size: number;
  /** Function arguments saved at entry (return probes): their entry-data size is 8 each. */
  readonly entryArgs: readonly number[];
  /** Event this probe feeds (shared by appended probes). */
  ev?: ProbeEvent;
}

/** The trace event of one or more probes (trace_probe_event + trace_event_call). */
export class ProbeEvent {
  readonly probes: TraceProbe[] = [];
  /** Set by the events layer: enabled in some instance (TP_FLAG_TRACE/PROFILE). */
  enabled = false;
  /** Set by the events layer: open references (trace_event_dyn_busy), eprobes attached. */
  refs = 0;
  constructor(
    readonly system: string,
    readonly name: string,
  ) {}

  /** The first probe: its arguments define the fields. */
  get primary(): TraceProbe {
    return this.probes[0];
  }

  get kind(): ProbeKind {
    return this.primary.loc.kind;
  }

  /** Fields before the arguments: `__probe_ip`, or `__probe_func` + `__probe_ret_ip`; none for eprobes. */
  headFields(): EventField[] {
    const p = this.primary;
    if (p.loc.kind === 'eprobe') return [];
    const ul = (name: string, offset: number): EventField => ({ type: 'unsigned long', name, offset, size: 8, signed: false });
    return p.isReturn
      ? [ul('__probe_func', TRACE_ENTRY_SIZE), ul('__probe_ret_ip', TRACE_ENTRY_SIZE + 8)]
      : [ul('__probe_ip', TRACE_ENTRY_SIZE)];
  }

  /** Offset where argument data starts in a record. */
  argsOffset(): number {
    return TRACE_ENTRY_SIZE + this.headFields().length * 8;
  }

  /** Event-specific fields as the `format` file lists them (traceprobe_define_arg_fields). */
  fields(): EventField[] {
    const base = this.argsOffset();
    return [
      ...this.headFields(),
      ...this.primary.args.map((a) => ({
        type: a.fmt ? arrayWithoutLength(a.fmt) : a.type.fmttype,
        name: a.name,
        offset: base + a.offset,
        size: a.type.size * (a.count || 1),
        signed: a.type.signed,
      })),
    ];
  }

  /** As eprobes and the registry's lookups see it. */
  view(): EventView {
    return { system: this.system, name: this.name, fields: this.fields(), kind: this.kind };
  }

  /** Text after `print fmt: ` (__set_print_fmt). */
  printFmt(): string {
    const p = this.primary;
    let fmt: string;
    let head: string;
    if (p.loc.kind === 'eprobe') {
      fmt = '';
      head = '';
    } else if (p.isReturn) {
      fmt = '(%lx <- %lx)';
      head = ', REC->__probe_func, REC->__probe_ret_ip';
    } else {
      fmt = '(%lx)';
      head = ', REC->__probe_ip';
    }
    let s = `"${fmt}`;
    for (const a of p.args) {
      s += ` ${a.name}=`;
      s += a.count ? `{${Array(a.count).fill(a.type.fmt).join(',')}}` : a.type.fmt;
    }
    s += `"${head}`;
    for (const a of p.args) {
      const one = (suffix: string): string => (a.type.string ? `, __get_str(${a.name}${suffix})` : `, REC->${a.name}${suffix}`);
      if (a.count) for (let j = 0; j < a.count; j++) s += one(`[${j}]`);
      else s += one('');
    }
    return s;
  }
}

/**
 * Fields defined by trace_define_field() have no array length: the format
 * file shows `u8 name[]` (size still counts every element).
 */
export function arrayWithoutLength(type: string): string {
  return type.startsWith('__data_loc') ? type : type.replace(/\[[^\]]*\]/, '[]');
}

/** trace_probe_compare_arg_type(): 0 if same types and names, else the 1-based first difference. */
export function compareArgTypes(a: TraceProbe, b: TraceProbe): number {
  if (a.args.length < b.args.length) return a.args.length + 1;
  if (a.args.length > b.args.length) return b.args.length + 1;
  for (let i = 0; i < a.args.length; i++) {
    const x = a.args[i];
    const y = b.args[i];
    if (x.type !== y.type || x.count !== y.count || x.name !== y.name) return i + 1;
  }
  return 0;
}

/** Same fetch expressions, argument by argument (the part of has_same_*probe after the location). */
export function sameArgComms(a: TraceProbe, b: TraceProbe): boolean {
  return a.args.every((x, i) => x.comm === b.args[i]?.comm);
}

/** trace_probe_match_command_args(): `name=comm` words match the first arguments. */
export function matchCommandArgs(tp: TraceProbe, argv: readonly string[]): boolean {
  if (tp.args.length < argv.length) return false;
  return argv.every((w, i) => w === `${tp.args[i].name}=${tp.args[i].comm}`);
}
