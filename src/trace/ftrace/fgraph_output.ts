/**
 * How the function_graph tracer prints (print_graph_function_flags() and
 * friends in trace_functions_graph.c): an entry followed by its own return
 * prints as a leaf `func();`, otherwise `func() {` and a later `}`; columns
 * (CPU, TASK/PID, time, DURATION with its overhead mark) as the tracer
 * options ask; context-switch separators between tasks on a CPU; other
 * events as comments inside the graph.
 */
import type { Kernel } from '../../kernel/kernel.js';
import type { TraceRecord } from '../event_type.js';
import type { PrintableEventType } from '../ftrace_entries.js';
import { printBuf } from '../ftrace_entries.js';
import { printIpSym } from '../ksym.js';
import { delayMark, latencyTraceHeader, latFlags } from '../output.js';
import type { RingBuffer } from '../ring_buffer.js';
import type { TraceArray } from '../trace_array.js';
import type { TracerPrintContext } from '../tracer.js';
import { FTRACE_REGS_MAX_ARGS, TRACE_FN, TRACE_GRAPH_ENT, TRACE_GRAPH_RET, argsOf } from './fn_events.js';
import { printFunctionArgs } from './function_args.js';
import { TRACE_STACK } from './kernel_stack.js';
import { readU64LE } from '../../kernel/u64_le.js';

const TRACE_GRAPH_INDENT = 2;
const FTRACE_RETFUNC_DEPTH = 50;
const TRACE_GRAPH_PROCINFO_LENGTH = 14;

/** Lookahead a reader may offer: the next record on the current record's CPU. */
interface GraphLookahead {
  peekSameCpu?(): TraceRecord | null;
  skipSameCpu?(): void;
}

interface CpuData {
  lastPid: number;
  depth: number;
  depthIrq: number;
  enterFuncs: bigint[];
}

/** struct fgraph_data of one reader: per-CPU state across the lines it prints. */
class GraphIterState {
  readonly cpu: CpuData[];
  constructor(nr: number) {
    this.cpu = Array.from({ length: nr }, () => ({ lastPid: -1, depth: 0, depthIrq: -1, enterFuncs: new Array(FTRACE_RETFUNC_DEPTH).fill(0n) }));
  }
}

const readers = new WeakMap<object, GraphIterState>();

function stateOf(ctx: TracerPrintContext): GraphIterState {
  let s = readers.get(ctx);
  if (!s) readers.set(ctx, (s = new GraphIterState(ctx.tr.tracing.kernel.nrCpus)));
  return s;
}

/** The tracer flags (options) in effect for function_graph on this array. */
class Flags {
  readonly set: ReadonlySet<string>;
  constructor(tr: TraceArray) {
    this.set = tr.tracerOptions.get('function_graph') ?? new Set();
  }
  has(name: string): boolean {
    return this.set.has(name);
  }
}

function maxBytesForCpu(kernel: Kernel): number {
  return String(Math.max(0, kernel.nrCpus - 1)).length;
}

/** print_graph_cpu(). */
function graphCpu(kernel: Kernel, cpu: number): string {
  return ` ${String(cpu).padStart(maxBytesForCpu(kernel))}) `;
}

/** print_graph_proc(): `comm-pid` centred in 14 columns (comm cut to 7). */
function graphProc(tr: TraceArray, pid: number): string {
  const comm = tr.tracing.cmdlines.find(pid).slice(0, 7);
  const s = `${comm}-${pid}`;
  const spaces = s.length < TRACE_GRAPH_PROCINFO_LENGTH ? TRACE_GRAPH_PROCINFO_LENGTH - s.length : 0;
  const left = Math.floor(spaces / 2);
  return ' '.repeat(left) + s + ' '.repeat(spaces - left);
}

/** trace_print_graph_duration(): `12.345 us ` padded so the column lines up. */
function graphDuration(durationNs: number): string {
  const usecs = Math.floor(durationNs / 1000);
  const nsecs = durationNs - usecs * 1000;
  const u = String(usecs);
  let s = u;
  let len = u.length;
  if (len < 7) {
    const digits = Math.min(5, 8 - len) - 1;
    const ns = String(nsecs).padStart(3, '0').slice(0, digits);
    s += `.${ns}`;
    len += ns.length + 1;
  }
  s += ' us ';
  for (let i = len; i < 8; i++) s += ' ';
  return s;
}

type Fill = 'full' | 'start' | 'end' | undefined;

/** print_graph_duration(). */
function durationCol(tr: TraceArray, flags: Flags, durationNs: number, fill?: Fill): string {
  if (!flags.has('funcgraph-duration') || !tr.options.has('context-info')) return '';
  if (fill === 'full') return '              |  ';
  if (fill === 'start') return '  ';
  if (fill === 'end') return ' |';
  const mark = flags.has('funcgraph-overhead') ? `${delayMark(durationNs)} ` : '  ';
  return mark + graphDuration(durationNs) + '|  ';
}

/** print_graph_abs_time(): seconds and (truncated) microseconds. */
function absTime(ts: bigint): string {
  const secs = ts / 1_000_000_000n;
  const usecs = (ts % 1_000_000_000n) / 1000n;
  return `${String(secs).padStart(5)}.${String(usecs).padStart(6, '0')} |  `;
}

/** verif_pid(): a separator when the CPU switched to another task. */
function verifPid(tr: TraceArray, st: GraphIterState, cpu: number, pid: number): string {
  const d = st.cpu[cpu];
  if (!d || d.lastPid === pid) return '';
  const prev = d.lastPid;
  d.lastPid = pid;
  if (prev === -1) return '';
  const kernel = tr.tracing.kernel;
  return (
    ' ------------------------------------------\n' +
    graphCpu(kernel, cpu) +
    graphProc(tr, prev) +
    ' => ' +
    graphProc(tr, pid) +
    '\n ------------------------------------------\n\n'
  );
}

/** print_graph_prologue(). */
function prologue(ctx: TracerPrintContext, st: GraphIterState, flags: Flags, rec: TraceRecord): string {
  const tr = ctx.tr;
  const pid = rec.data.readInt32LE(4);
  let s = verifPid(tr, st, rec.cpu, pid);
  if (!tr.options.has('context-info')) return s;
  if (flags.has('funcgraph-abstime')) s += absTime(rec.ts);
  if (flags.has('funcgraph-cpu')) s += graphCpu(tr.tracing.kernel, rec.cpu);
  if (flags.has('funcgraph-proc')) s += graphProc(tr, pid) + ' | ';
  if (tr.options.has('latency-format')) s += ` ${latFlags(tr.profile, rec.data[2], rec.data[3])} | `;
  return s;
}

/** The irq entry code (__irqentry_text): calls into it are interrupts. */
function inIrqEntry(kernel: Kernel, addr: bigint): boolean {
  const t = kernel.symbols;
  const a = t.lookupName('__irqentry_text_start')?.addr;
  const b = t.lookupName('__irqentry_text_end')?.addr;
  return a !== undefined && b !== undefined && addr >= a && addr < b;
}

function fnName(kernel: Kernel, ip: bigint): string {
  return printIpSym(kernel, ip, { symOffset: false, symAddr: false });
}

function entryArgs(kernel: Kernel, rec: TraceRecord, func: bigint): string | undefined {
  if (rec.data.length < 24 + FTRACE_REGS_MAX_ARGS * 8) return undefined;
  return printFunctionArgs(kernel, argsOf(rec.data, 24), func);
}

interface GraphRet {
  func: bigint;
  retval?: bigint;
  depth: number;
  overrun: number;
  calltime: bigint;
  rettime: bigint;
}

function readRet(tr: TraceArray, d: Buffer): GraphRet {
  const intDepth = tr.profile.graphDepth === 'int';
  const retval = tr.tracing.kernel.features.has('graph-retval');
  const base = retval ? 24 : 16;
  return {
    func: readU64LE(d, 8),
    retval: retval ? readU64LE(d, 16) : undefined,
    depth: intDepth ? d.readInt32LE(base) : d.readUInt32LE(base),
    overrun: d.readUInt32LE(base + 4),
    calltime: readU64LE(d, base + 8),
    rettime: readU64LE(d, base + 16),
  };
}

function readEntDepth(tr: TraceArray, d: Buffer): number {
  return tr.profile.graphDepth === 'int' ? d.readInt32LE(16) : Number(BigInt.asIntN(64, readU64LE(d, 16)));
}

/** print_graph_retval(): `func(); /* ret=... *\/` or `} /* func ret=... *\/` (the label is the profile's). */
function retvalText(kernel: Kernel, flags: Flags, entryText: string | undefined, ret: GraphRet): string {
  const hex = flags.has('funcgraph-retval-hex');
  const printRetval = flags.has('funcgraph-retval');
  const retval = ret.retval ?? 0n;
  let err = 0n;
  if (printRetval && retval && !hex) {
    // A 32-bit negative value is an int error code.
    err = retval & 0x80000000n && retval >> 32n === 0n ? BigInt.asIntN(32, retval) : BigInt.asIntN(64, retval);
    if (!(err < 0n && err >= -4095n)) err = 0n;
  }
  let s: string;
  if (entryText !== undefined) {
    s = entryText;
    if (printRetval) s += ' /*';
  } else s = `} /* ${fnName(kernel, ret.func)}`;
  const label = kernel.profile.graphRetvalLabel;
  if (printRetval) s += hex || err === 0n ? `${label}0x${retval.toString(16)}` : `${label}${err}`;
  if (entryText === undefined || printRetval) s += ' */';
  return s;
}

/** print_graph_entry_leaf(). */
function entryLeaf(ctx: TracerPrintContext, st: GraphIterState, flags: Flags, rec: TraceRecord, ret: GraphRet): string {
  const tr = ctx.tr;
  const kernel = tr.tracing.kernel;
  const func = readU64LE(rec.data, 8);
  const depth = readEntDepth(tr, rec.data);
  const duration = Number(ret.rettime - ret.calltime);
  const d = st.cpu[rec.cpu];
  d.depth = depth - 1;
  if (depth >= 0 && depth < FTRACE_RETFUNC_DEPTH) d.enterFuncs[depth] = 0n;
  let s = durationCol(tr, flags, duration);
  s += ' '.repeat(Math.max(0, depth) * TRACE_GRAPH_INDENT);
  const args = entryArgs(kernel, rec, func);
  const call = fnName(kernel, ret.func) + (args !== undefined ? `${args};` : '();');
  if (flags.has('funcgraph-retval')) s += retvalText(kernel, flags, call, ret);
  else s += call;
  return s + '\n';
}

/** print_graph_entry_nested(). */
function entryNested(ctx: TracerPrintContext, st: GraphIterState, flags: Flags, rec: TraceRecord): string {
  const tr = ctx.tr;
  const kernel = tr.tracing.kernel;
  const func = readU64LE(rec.data, 8);
  const depth = readEntDepth(tr, rec.data);
  const d = st.cpu[rec.cpu];
  d.depth = depth;
  if (depth >= 0 && depth < FTRACE_RETFUNC_DEPTH) d.enterFuncs[depth] = func;
  let s = durationCol(tr, flags, 0, 'full');
  s += ' '.repeat(Math.max(0, depth) * TRACE_GRAPH_INDENT);
  s += fnName(kernel, func);
  s += entryArgs(kernel, rec, func) ?? '()';
  return s + ' {\n';
}

/** get_return_for_leaf(): the return of this very call right after it on the same CPU. */
function returnForLeaf(ctx: TracerPrintContext & GraphLookahead, rec: TraceRecord): GraphRet | null {
  if (!ctx.peekSameCpu) return null;
  const next = ctx.peekSameCpu();
  if (!next || next.data.readUInt16LE(0) !== TRACE_GRAPH_RET) return null;
  if (next.data.readInt32LE(4) !== rec.data.readInt32LE(4)) return null;
  if (readU64LE(next.data, 8) !== readU64LE(rec.data, 8)) return null;
  const ret = readRet(ctx.tr, next.data);
  ctx.skipSameCpu?.();
  return ret;
}

function printEntry(ctx: TracerPrintContext & GraphLookahead, st: GraphIterState, flags: Flags, rec: TraceRecord): string {
  const kernel = ctx.tr.tracing.kernel;
  const func = readU64LE(rec.data, 8);
  const depth = readEntDepth(ctx.tr, rec.data);
  // check_irq_entry(): without funcgraph-irqs, interrupt code is left out.
  if (!flags.has('funcgraph-irqs')) {
    const d = st.cpu[rec.cpu];
    if (d.depthIrq >= 0) return '';
    if (inIrqEntry(kernel, func)) {
      d.depthIrq = depth;
      return '';
    }
  }
  const s = prologue(ctx, st, flags, rec);
  const leaf = returnForLeaf(ctx, rec);
  return s + (leaf ? entryLeaf(ctx, st, flags, rec, leaf) : entryNested(ctx, st, flags, rec));
}

function printReturn(ctx: TracerPrintContext, st: GraphIterState, flags: Flags, rec: TraceRecord): string {
  const tr = ctx.tr;
  const kernel = tr.tracing.kernel;
  const ret = readRet(tr, rec.data);
  const d = st.cpu[rec.cpu];
  // check_irq_return()
  if (!flags.has('funcgraph-irqs') && d.depthIrq !== -1) {
    if (d.depthIrq >= ret.depth) d.depthIrq = -1;
    return '';
  }
  let funcMatch = true;
  d.depth = ret.depth - 1;
  if (ret.depth >= 0 && ret.depth < FTRACE_RETFUNC_DEPTH) {
    if (d.enterFuncs[ret.depth] !== ret.func) funcMatch = false;
    d.enterFuncs[ret.depth] = 0n;
  }
  let s = prologue(ctx, st, flags, rec);
  s += durationCol(tr, flags, Number(ret.rettime - ret.calltime));
  s += ' '.repeat(Math.max(0, ret.depth) * TRACE_GRAPH_INDENT);
  if (flags.has('funcgraph-retval')) s += retvalText(kernel, flags, undefined, ret);
  else if (funcMatch && !flags.has('funcgraph-tail')) s += '}';
  else s += `} /* ${fnName(kernel, ret.func)} */`;
  s += '\n';
  if (flags.has('funcgraph-overrun')) s += ` (Overruns: ${ret.overrun})\n`;
  return s;
}

/** print_graph_comment(): another event, shown as a comment at the current depth. */
function printComment(ctx: TracerPrintContext, st: GraphIterState, flags: Flags, rec: TraceRecord): string | undefined {
  const tr = ctx.tr;
  const type = rec.data.readUInt16LE(0);
  const ev = tr.tracing.eventTypes.byId(type) as PrintableEventType | undefined;
  if (!ev) return undefined;
  const depth = st.cpu[rec.cpu]?.depth ?? 0;
  let s = prologue(ctx, st, flags, rec);
  s += durationCol(tr, flags, 0, 'full');
  if (depth > 0) s += ' '.repeat((depth + 1) * TRACE_GRAPH_INDENT);
  let text = type === tr.tracing.ftraceTypes.print.id ? printBuf(rec.data) : ev.output(rec, ctx);
  if (text.endsWith('\n')) text = text.slice(0, -1);
  return `${s}/* ${text} */\n`;
}

/** print_graph_function(): the tracer's print_line; undefined leaves the record to the default printer. */
export function printGraphLine(rec: TraceRecord, ctx: TracerPrintContext): string | undefined {
  const type = rec.data.readUInt16LE(0);
  if (type === TRACE_STACK || type === TRACE_FN) return undefined;
  const st = stateOf(ctx);
  const flags = new Flags(ctx.tr);
  if (type === TRACE_GRAPH_ENT) return printEntry(ctx as TracerPrintContext & GraphLookahead, st, flags, rec);
  if (type === TRACE_GRAPH_RET) return printReturn(ctx, st, flags, rec);
  return printComment(ctx, st, flags, rec);
}

/** print_lat_header(). */
function latHeader(flags: Flags): string {
  const spaces = ' '.repeat(37);
  let size = 0;
  if (flags.has('funcgraph-abstime')) size += 16;
  if (flags.has('funcgraph-cpu')) size += 4;
  if (flags.has('funcgraph-proc')) size += 17;
  const p = spaces.slice(0, size);
  return (
    `#${p}  _-----=> irqs-off        \n` +
    `#${p} / _----=> need-resched    \n` +
    `#${p}| / _---=> hardirq/softirq \n` +
    `#${p}|| / _--=> preempt-depth   \n` +
    `#${p}||| /                      \n`
  );
}

/** print_graph_headers_flags(). */
export function printGraphHeader(ctx: TracerPrintContext): string {
  const tr = ctx.tr;
  if (!tr.options.has('context-info')) return '';
  const flags = new Flags(tr);
  const lat = tr.options.has('latency-format');
  let s = '';
  if (lat) {
    // print_trace_header() first, unless there is nothing to show.
    const it = ctx as TracerPrintContext & { empty?(): boolean; buffer?: RingBuffer };
    if (it.empty?.()) return '';
    if (it.buffer) s += latencyTraceHeader(tr, it.buffer);
    s += latHeader(flags);
  }
  s += '#';
  if (flags.has('funcgraph-abstime')) s += '     TIME       ';
  if (flags.has('funcgraph-cpu')) s += ' CPU';
  if (flags.has('funcgraph-proc')) s += '  TASK/PID       ';
  if (lat) s += '||||   ';
  if (flags.has('funcgraph-duration')) s += '  DURATION   ';
  s += '               FUNCTION CALLS\n';
  s += '#';
  if (flags.has('funcgraph-abstime')) s += '      |         ';
  if (flags.has('funcgraph-cpu')) s += ' |  ';
  if (flags.has('funcgraph-proc')) s += '   |    |        ';
  if (lat) s += '||||   ';
  if (flags.has('funcgraph-duration')) s += '   |   |      ';
  s += '               |   |   |   |\n';
  return s;
}
