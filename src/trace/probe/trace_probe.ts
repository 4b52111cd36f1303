/**
 * What every probe type shares (trace_probe.c): the parsed probe (struct
 * trace_probe), the event one or more probes feed (struct trace_probe_event
 * with its trace_event_call), and the base of each probe's dynamic event —
 * registering a new event or appending to an existing one, the error_log
 * entry of a failed registration, showing the arguments, matching a
 * `-:[group/]event [args]` command, and the release.
 */
import type { Kernel } from '../../kernel/kernel.js';
import { sprintSymbol } from '../dynevent/probe_memory.js';
import type { DynEvent, DynEventRegistry, ProbeType } from '../dynevent/trace_dynevent.js';
import { TRACE_ENTRY_SIZE, type EventField, type OutputContext, type TraceEventType, type TraceRecord } from '../event_type.js';
import type { EventFile } from '../events/event_file.js';
import { printSymbolHit } from '../ksym.js';
import { kstrtouint } from './kstr.js';
import { MAX_EVENT_NAME_LEN, type KRet, type ProbeArg, type ProbeArgs } from './parse_context.js';
import type { EventView } from './probe_env.js';
import type { ProbeLog } from './probe_log.js';
import { printProbeArgs } from './probe_print.js';
import { readU64LE } from '../../kernel/u64_le.js';

/** One parsed probe (struct trace_probe): its name, arguments and their record layout. */
export class TraceProbe {
  readonly args: readonly ProbeArg[];
  /** Bytes of argument data. */
  readonly size: number;
  /** Function arguments saved at entry (return probes): their entry-data size is 8 each. */
  readonly entryArgs: readonly number[];

  constructor(
    readonly group: string,
    readonly name: string,
    readonly isReturn: boolean,
    parsed: ProbeArgs,
  ) {
    this.args = parsed.args;
    this.size = parsed.size;
    this.entryArgs = parsed.entryArgs;
  }

  /** ` name=comm` for each argument, as every probe type's listing ends. */
  showArgs(): string {
    let s = '';
    for (const a of this.args) s += ` ${a.name}=${a.comm}`;
    return s;
  }

  /** trace_probe_compare_arg_type(): 0 if same types and names, else the 1-based first difference. */
  compareArgTypes(b: TraceProbe): number {
    const a = this;
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
  sameArgComms(b: TraceProbe): boolean {
    return this.args.every((x, i) => x.comm === b.args[i]?.comm);
  }

  /** trace_probe_match_command_args(): `name=comm` words match the first arguments. */
  matchCommandArgs(argv: readonly string[]): boolean {
    if (this.args.length < argv.length) return false;
    return argv.every((w, i) => w === `${this.args[i].name}=${this.args[i].comm}`);
  }
}

/**
 * Fields defined by trace_define_field() have no array length: the format
 * file shows `u8 name[]` (size still counts every element).
 */
export function arrayWithoutLength(type: string): string {
  return type.startsWith('__data_loc') ? type : type.replace(/\[[^\]]*\]/, '[]');
}

/**
 * The event of one or more probes (trace_probe_event and its
 * trace_event_call): the event type events/ shows, with the fields and print
 * fmt of its first probe's arguments; enabling it arms every probe.
 */
export class TraceProbeEvent implements TraceEventType {
  /** common_type: given when the event joins the events layer. */
  id = 0;
  readonly probes: ProbeDynEvent[] = [];
  /** Set by the events layer: enabled in some instance (TP_FLAG_TRACE/PROFILE). */
  enabled = false;
  /** Set by the events layer: open references (trace_event_dyn_busy), eprobes attached. */
  refs = 0;
  /** Values print quoted, braced or as symbols: a line never ends inside output(). */
  readonly outputNoNewline = true;

  constructor(
    private readonly reg: DynEventRegistry,
    readonly system: string,
    readonly name: string,
  ) {}

  /** The first probe: its arguments define the fields. */
  get primary(): ProbeDynEvent {
    return this.probes[0];
  }

  /** Fields before the arguments: `__probe_ip`, or `__probe_func` + `__probe_ret_ip`; none for eprobes. */
  private headFields(): EventField[] {
    const p = this.primary;
    if (p.type === 'eprobe') return [];
    const ul = (name: string, offset: number): EventField => ({ type: 'unsigned long', name, offset, size: 8, signed: false });
    return p.tp.isReturn
      ? [ul('__probe_func', TRACE_ENTRY_SIZE), ul('__probe_ret_ip', TRACE_ENTRY_SIZE + 8)]
      : [ul('__probe_ip', TRACE_ENTRY_SIZE)];
  }

  /** Offset where argument data starts in a record: after the head fields' 8 bytes each. */
  argsOffset(): number {
    const p = this.primary;
    return TRACE_ENTRY_SIZE + (p.type === 'eprobe' ? 0 : p.tp.isReturn ? 16 : 8);
  }

  /** Event-specific fields as the `format` file lists them (traceprobe_define_arg_fields). */
  get fields(): EventField[] {
    const base = this.argsOffset();
    return [
      ...this.headFields(),
      ...this.primary.tp.args.map((a) => ({
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
    return { system: this.system, name: this.name, fields: this.fields, kind: this.primary.type };
  }

  /** Text after `print fmt: ` (__set_print_fmt). */
  get printFmt(): string {
    const p = this.primary;
    let fmt: string;
    let head: string;
    if (p.type === 'eprobe') {
      fmt = '';
      head = '';
    } else if (p.tp.isReturn) {
      fmt = '(%lx <- %lx)';
      head = ', REC->__probe_func, REC->__probe_ret_ip';
    } else {
      fmt = '(%lx)';
      head = ', REC->__probe_ip';
    }
    let s = `"${fmt}`;
    for (const a of p.tp.args) {
      s += ` ${a.name}=`;
      s += a.count ? `{${Array(a.count).fill(a.type.fmt).join(',')}}` : a.type.fmt;
    }
    s += `"${head}`;
    for (const a of p.tp.args) {
      const one = (suffix: string): string => (a.type.string ? `, __get_str(${a.name}${suffix})` : `, REC->${a.name}${suffix}`);
      if (a.count) for (let j = 0; j < a.count; j++) s += one(`[${j}]`);
      else s += one('');
    }
    return s;
  }

  /** print_*_event(): `name: (head) args`. */
  output(rec: TraceRecord, ctx: OutputContext): string {
    const p = this.primary;
    if (!p) return `${this.name}: (unknown)`;
    const head = `${this.name}: ${p.printHead(rec.data, ctx)}`;
    if (!p.tp.args.length) return head;
    const kernel = this.reg.live().kernel;
    return head + printProbeArgs(p.tp.args, rec.data, this.argsOffset(), (a) => sprintSymbol(kernel, a));
  }

  /** The event goes on in its first trace array (enable_trace_*probe()): every probe, undone if one refuses. */
  enable(): void {
    this.enabled = true;
    const done: ProbeDynEvent[] = [];
    try {
      for (const p of this.probes) {
        p.enable();
        done.push(p);
      }
    } catch (e) {
      for (const p of done) p.disable();
      this.enabled = false;
      throw e;
    }
  }

  /** Off in the last one. */
  disable(): void {
    for (const p of this.probes) p.disable();
    this.enabled = false;
  }

  /** One trace array's file going on or off. */
  fileEnabled(file: EventFile, on: boolean): void {
    // tracing_update_buffers(): the first use grows the buffers
    if (on) file.tr.updateBuffers();
    for (const p of this.probes) p.fileEnabled(file, on);
  }
}

/**
 * A probe's dynamic event (the part trace_kprobe, trace_fprobe, trace_eprobe
 * and trace_uprobe have in common): its parsed probe, the event it feeds,
 * and what the dynamic_events list asks of it.
 */
export abstract class ProbeDynEvent implements DynEvent {
  abstract readonly type: ProbeType;
  /** The event this probe feeds: its own until appended to another's (trace_probe_append()). */
  event: TraceProbeEvent;

  constructor(
    protected readonly reg: DynEventRegistry,
    readonly tp: TraceProbe,
  ) {
    this.event = new TraceProbeEvent(reg, tp.group, tp.name);
    this.event.probes.push(this);
  }

  /** The listing up to the arguments: `p:group/event place`. */
  protected abstract showHead(): string;
  /** Does the first word after `-:[group/]event` name this probe's place. */
  protected abstract matchHead(word: string): boolean;
  /** __register_trace_*probe(): put the probe in place (0, or why not). */
  abstract register(): KRet;
  /** Take it out again (the event is gone or no longer has it). */
  protected abstract unregister(): void;
  /** Arm it: its event went on. May refuse with a KernelError. */
  abstract enable(): void;
  abstract disable(): void;
  /** The head of a trace line, before the arguments: `(ip)`, `(func <- ret)`, `(sys.event)`. */
  abstract printHead(data: Buffer, ctx: OutputContext): string;

  /** One trace array's file of the event going on or off (eprobes attach per array). */
  fileEnabled(_file: EventFile, _on: boolean): void {}

  /** Of the same kind as `other`, so one event may have both (else DIFF_PROBE_TYPE). */
  sameKind(other: ProbeDynEvent): boolean {
    return this.tp.isReturn === other.tp.isReturn;
  }

  show(): string {
    return this.showHead() + this.tp.showArgs();
  }

  match(system: string | undefined, event: string, argv: readonly string[]): boolean {
    if (event !== '' && this.tp.name !== event) return false;
    if (system !== undefined && this.tp.group !== system) return false;
    if (!argv.length) return true;
    if (!this.matchHead(argv[0])) return false;
    return this.tp.matchCommandArgs(argv.slice(1));
  }

  isBusy(): boolean {
    return this.event.enabled;
  }

  /** unregister_trace_*probe(): the last probe of an enabled or held event may not go. */
  free(): KRet {
    const ev = this.event;
    if (ev.probes.length === 1) {
      if (this.reg.isBusy(ev)) return 'EBUSY';
      this.reg.unregisterEvent(ev);
    }
    this.reg.remove(this);
    this.unregister();
    ev.probes.splice(ev.probes.indexOf(this), 1);
    return 0;
  }

  /** A new event for this probe: EVENT_EXIST if the name is taken, then the probe's own registration. */
  registerNew(log: ProbeLog): KRet {
    if (this.reg.registerEvent(this.event)) {
      log.setIndex(0);
      log.err(0, 'EVENT_EXIST');
      return 'EEXIST';
    }
    const ret = this.register();
    if (ret) {
      this.reg.unregisterEvent(this.event);
      return ret;
    }
    this.reg.add(this);
    return 0;
  }
}

/** A probe type whose events take more probes (kprobe, fprobe, uprobe). */
export interface AppendableProbe extends ProbeDynEvent {
  /** has_same_*probe(): at the same place as `other` (the arguments are compared too). */
  sameLocation(other: ProbeDynEvent): boolean;
}

/**
 * register_trace_*probe(): a new event, or one more probe on the event of
 * that name and type — if of the same kind (DIFF_PROBE_TYPE), with the same
 * argument types (DIFF_ARG_TYPE) and not the same probe again (SAME_PROBE).
 */
export function registerOrAppend(p: AppendableProbe, reg: DynEventRegistry, log: ProbeLog): KRet {
  const old = reg.probeEvent(p.type, p.tp.group, p.tp.name);
  if (!old) return p.registerNew(log);
  const to = old.primary;
  if (!p.sameKind(to)) {
    log.setIndex(0);
    log.err(0, 'DIFF_PROBE_TYPE');
    return 'EEXIST';
  }
  const diff = p.tp.compareArgTypes(to.tp);
  if (diff) {
    // arguments start at index 2
    log.setIndex(diff + 1);
    log.err(0, 'DIFF_ARG_TYPE');
    return 'EEXIST';
  }
  if (old.probes.some((q) => p.sameLocation(q) && q.tp.sameArgComms(p.tp))) {
    log.setIndex(0);
    log.err(0, 'SAME_PROBE');
    return 'EEXIST';
  }
  // trace_probe_append(): from now on the probe feeds the old event (and leaves it again if it cannot register)
  old.probes.push(p);
  p.event = old;
  const ret = p.register();
  if (ret) {
    old.probes.splice(old.probes.indexOf(p), 1);
    return ret;
  }
  reg.add(p);
  return 0;
}

/** The MAXACTIVE of `r<N>[:…]` (kretprobes; 6.12's `f<N>` too): a number from 1 to `max`. */
export function parseMaxactive(word: string, colon: number, max: number, log: ProbeLog): number | 'EINVAL' {
  const len = colon >= 0 ? colon - 1 : word.length - 1;
  if (len > MAX_EVENT_NAME_LEN - 1) {
    log.err(1, 'BAD_MAXACT');
    return 'EINVAL';
  }
  const r = kstrtouint(word.slice(1, 1 + len));
  if (!r.ok || r.value === 0n) {
    log.err(1, 'BAD_MAXACT');
    return 'EINVAL';
  }
  if (r.value > BigInt(max)) {
    log.err(1, 'MAXACT_TOO_BIG');
    return 'EINVAL';
  }
  return Number(r.value);
}

/** The error_log entry of a failed probe registration (kprobes and fprobes), at the probe's place. */
export function logRegisterError(log: ProbeLog, ret: KRet): void {
  if (!ret) return;
  log.setIndex(1);
  if (ret === 'EILSEQ') log.err(0, 'BAD_INSN_BNDRY');
  else if (ret === 'ENOENT') log.err(0, 'BAD_PROBE_ADDR');
  else if (ret !== 'ENOMEM' && ret !== 'EEXIST') log.err(0, 'FAIL_REG_PROBE');
}

/** print_*_event()'s head of a function probe: `(ip)`, or `(func <- ret_ip)` for a return probe. */
export function probeIpHead(kernel: Kernel, isReturn: boolean, data: Buffer, ctx: OutputContext): string {
  const symAddr = ctx.option('sym-addr');
  return isReturn
    ? `(${probeIpSym(kernel, u64At(data, TRACE_ENTRY_SIZE + 8), true, symAddr)} <- ${probeIpSym(kernel, u64At(data, TRACE_ENTRY_SIZE), false, symAddr)})`
    : `(${probeIpSym(kernel, u64At(data, TRACE_ENTRY_SIZE), true, symAddr)})`;
}

/** A head field of a record, 0 when the record is too short to hold it. */
function u64At(data: Buffer, off: number): bigint {
  return off + 8 <= data.length ? readU64LE(data, off) : 0n;
}

/** The kretprobe trampoline a return address shows when a kretprobe hooked the return (is_kretprobe_trampoline()). */
const KRETPROBE_TRAMPOLINES = ['arch_rethook_trampoline', '__kretprobe_trampoline'];

function isKretprobeTrampoline(kernel: Kernel, ip: bigint): boolean {
  for (const name of KRETPROBE_TRAMPOLINES) if (kernel.symbols.lookupName(name)?.addr === ip) return true;
  return false;
}

/** seq_print_ip_sym() with kretprobed(): a kretprobe trampoline prints as `[unknown/kretprobe'd]`. */
function probeIpSym(kernel: Kernel, ip: bigint, offset: boolean, symAddr: boolean): string {
  if (ip === 0n) return '0';
  const hit = kernel.symbols.lookup(ip);
  // A trampoline's address starts its symbol: most ips are ruled out by the lookup alone.
  if (hit?.offset === 0 && isKretprobeTrampoline(kernel, ip)) {
    return `[unknown/kretprobe'd]${symAddr ? ` <${ip.toString(16).padStart(16, '0')}>` : ''}`;
  }
  return printSymbolHit(hit, ip, offset, symAddr);
}
