/**
 * The records the function tracers write (trace_entries.h): ftrace/function
 * (TRACE_FN), ftrace/funcgraph_entry and ftrace/funcgraph_exit, with the
 * layouts and formats the series' profile gives them, and how the trace
 * file prints them when no tracer prints them itself.
 */
import type { Kernel } from '../../kernel/kernel.js';
import type { EventField, OutputContext, TraceRecord } from '../event_type.js';
import type { PrintableEventType } from '../ftrace_entries.js';
import { printIpSym } from '../ksym.js';
import type { Tracing } from '../tracing.js';
import { printFunctionArgs } from './function_args.js';
import { readU64LE } from '../../kernel/u64_le.js';

export const TRACE_FN = 1;
export const TRACE_GRAPH_RET = 10;
export const TRACE_GRAPH_ENT = 11;

/** FTRACE_REGS_MAX_ARGS: argument registers an entry record may carry. */
export const FTRACE_REGS_MAX_ARGS = 6;

function field(type: string, name: string, offset: number, size: number, signed = false): EventField {
  return { type, name, offset, size, signed };
}

/** Layout of funcgraph_exit: where its fields sit (retval only with FUNCTION_GRAPH_RETVAL). */
export interface GraphRetLayout {
  retval?: number;
  depth: number;
  overrun: number;
  calltime: number;
  rettime: number;
  size: number;
}

interface FnEventTypes {
  function: PrintableEventType;
  graphEnt: PrintableEventType;
  graphRet: PrintableEventType;
  /** Size of a funcgraph_entry record without arguments. */
  graphEntSize: number;
  graphRet_: GraphRetLayout;
}

/** The function-name part of a function record, as trace_fn_trace() prints it. */
export function printFn(kernel: Kernel, rec: TraceRecord, ctx: OutputContext): string {
  const d = rec.data;
  const ip = readU64LE(d, 8);
  const parent = readU64LE(d, 16);
  const flags = { symOffset: ctx.option('sym-offset'), symAddr: ctx.option('sym-addr') };
  let s = printIpSym(kernel, ip, flags);
  if (d.length >= 24 + FTRACE_REGS_MAX_ARGS * 8) s += printFunctionArgs(kernel, argsOf(d, 24), ip);
  if (ctx.option('print-parent') && parent) s += ` <-${printIpSym(kernel, parent, flags)}`;
  return s;
}

export function argsOf(d: Buffer, off: number): bigint[] {
  const out: bigint[] = [];
  for (let i = 0; i < FTRACE_REGS_MAX_ARGS; i++) out.push(readU64LE(d, off + i * 8));
  return out;
}

export function registerFnEvents(tracing: Tracing, retval: boolean): FnEventTypes {
  const kernel = tracing.kernel;
  const { functionArgs } = kernel.profile;
  const unsignedDepth = kernel.profile.graphDepth === 'unsigned';
  const hex = (v: bigint) => v.toString(16);

  const fn: PrintableEventType = {
    id: TRACE_FN,
    system: 'ftrace',
    name: 'function',
    internal: true,
    fields: functionArgs
      ? [field('unsigned long', 'ip', 8, 8), field('unsigned long', 'parent_ip', 16, 8), field('unsigned long', 'args[]', 24, 0)]
      : [field('unsigned long', 'ip', 8, 8), field('unsigned long', 'parent_ip', 16, 8)],
    printFmt: '" %ps <-- %ps", (void *)REC->ip, (void *)REC->parent_ip',
    output: (rec, ctx) => printFn(kernel, rec, ctx),
    outputNoNewline: true,
    raw: (rec) => `${hex(readU64LE(rec.data, 8))} ${hex(readU64LE(rec.data, 16))}`,
  };

  const graphEntSize = unsignedDepth ? 24 : 20;
  const entFields = [field('unsigned long', 'func', 8, 8), unsignedDepth ? field('unsigned long', 'depth', 16, 8) : field('int', 'depth', 16, 4, true)];
  if (functionArgs) entFields.push(field('unsigned long', 'args[]', graphEntSize, 0));
  const graphEnt: PrintableEventType = {
    id: TRACE_GRAPH_ENT,
    system: 'ftrace',
    name: 'funcgraph_entry',
    internal: true,
    fields: entFields,
    printFmt: unsignedDepth ? '"--> %ps (%lu)", (void *)REC->func, REC->depth' : '"--> %ps (%d)", (void *)REC->func, REC->depth',
    output(rec) {
      const d = rec.data;
      const depth = unsignedDepth ? readU64LE(d, 16).toString() : String(d.readInt32LE(16));
      return `--> ${printIpSym(kernel, readU64LE(d, 8), { symOffset: false, symAddr: false })} (${depth})`;
    },
  };

  const layout: GraphRetLayout = retval
    ? { retval: 16, depth: 24, overrun: 28, calltime: 32, rettime: 40, size: 48 }
    : { depth: 16, overrun: 20, calltime: 24, rettime: 32, size: 40 };
  const dep = unsignedDepth ? 'unsigned int' : 'int';
  const fmtD = unsignedDepth ? '%u' : '%d';
  const retFields = [field('unsigned long', 'func', 8, 8)];
  if (retval) retFields.push(field('unsigned long', 'retval', 16, 8));
  retFields.push(
    field(dep, 'depth', layout.depth, 4, !unsignedDepth),
    field('unsigned int', 'overrun', layout.overrun, 4),
    field('unsigned long long', 'calltime', layout.calltime, 8),
    field('unsigned long long', 'rettime', layout.rettime, 8),
  );
  const graphRet: PrintableEventType = {
    id: TRACE_GRAPH_RET,
    system: 'ftrace',
    name: 'funcgraph_exit',
    internal: true,
    fields: retFields,
    printFmt: retval
      ? `"<-- %ps (${fmtD}) (start: %llx  end: %llx) over: ${fmtD} retval: %lx", (void *)REC->func, REC->depth, REC->calltime, REC->rettime, REC->depth, REC->retval`
      : `"<-- %ps (${fmtD}) (start: %llx  end: %llx) over: ${fmtD}", (void *)REC->func, REC->depth, REC->calltime, REC->rettime, REC->depth`,
    output(rec) {
      const d = rec.data;
      const depth = unsignedDepth ? d.readUInt32LE(layout.depth) : d.readInt32LE(layout.depth);
      let s =
        `<-- ${printIpSym(kernel, readU64LE(d, 8), { symOffset: false, symAddr: false })} (${depth}) ` +
        `(start: ${hex(readU64LE(d, layout.calltime))}  end: ${hex(readU64LE(d, layout.rettime))}) over: ${depth}`;
      if (layout.retval !== undefined) s += ` retval: ${hex(readU64LE(d, layout.retval))}`;
      return s;
    },
  };

  for (const t of [fn, graphEnt, graphRet]) {
    if (!tracing.eventTypes.byId(t.id)) tracing.eventTypes.register(t);
  }
  return { function: fn, graphEnt, graphRet, graphEntSize, graphRet_: layout };
}
