/**
 * The ftrace-internal event types this layer writes (trace_entries.h):
 * ftrace/print (trace_marker, trace_puts) and ftrace/raw_data
 * (trace_marker_raw), with the ids the series' profile gives them.
 */
import type { EventField, OutputContext, TraceEventType, TraceRecord } from './event_type.js';
import { printIpSym } from './ksym.js';
import type { Tracing } from './tracing.js';

/** Extra printers an event type may have for the raw/hex/bin/fields output modes (else the kernel's defaults). */
export interface EventPrinters {
  /** `raw` option: the part after `pid cpu ts `. */
  raw?(rec: TraceRecord, ctx: OutputContext): string;
  /** `fields` option: the whole FUNCTION column. */
  fieldsOutput?(rec: TraceRecord, ctx: OutputContext): string;
  /** `printk-msg-only` (print-like events): the message alone. */
  msgOnly?(rec: TraceRecord): string;
  /** output() never ends in a newline: the line's is added without looking (a look flattens the string). */
  readonly outputNoNewline?: boolean;
}

export type PrintableEventType = TraceEventType & EventPrinters & {
  /** Internal ftrace types print `UNKNOWN TYPE n` with the `fields` option. */
  readonly internal?: boolean;
};

export interface FtraceEntryTypes {
  print: PrintableEventType;
  rawData: PrintableEventType;
}

/** struct print_entry: ip, then the NUL-terminated text. */
export const PRINT_ENTRY_BUF = 16;
/** struct raw_data_entry: id, then the bytes. */
const RAW_DATA_ENTRY_BUF = 12;

function field(type: string, name: string, offset: number, size: number, signed = false): EventField {
  return { type, name, offset, size, signed };
}

/** The text of a print record (up to its NUL). */
export function printBuf(data: Buffer): string {
  const end = data.indexOf(0, PRINT_ENTRY_BUF);
  return data.toString('latin1', PRINT_ENTRY_BUF, end < 0 ? data.length : end);
}

function printIp(data: Buffer): bigint {
  return data.readBigUInt64LE(8);
}

export function registerFtraceEntries(tracing: Tracing): FtraceEntryTypes {
  const ids = tracing.kernel.profile.ftraceEntryIds;
  const kernel = tracing.kernel;
  const print: PrintableEventType = {
    id: ids.print,
    system: 'ftrace',
    name: 'print',
    internal: true,
    fields: [field('unsigned long', 'ip', 8, 8), field('char[]', 'buf', 16, 0)],
    printFmt: '"%ps: %s", (void *)REC->ip, REC->buf',
    output(rec, ctx) {
      const flags = { symOffset: ctx.option('sym-offset'), symAddr: ctx.option('sym-addr') };
      return `${printIpSym(kernel, printIp(rec.data), flags)}: ${printBuf(rec.data)}`;
    },
    raw(rec) {
      return `# ${printIp(rec.data).toString(16)} ${printBuf(rec.data)}`;
    },
    msgOnly(rec) {
      return printBuf(rec.data);
    },
  };
  const rawDataOut = (rec: TraceRecord): string => {
    const d = rec.data;
    let s = `# ${d.readUInt32LE(8).toString(16)} buf:`;
    for (let i = RAW_DATA_ENTRY_BUF; i < d.length; i++) s += ` ${d[i].toString(16).padStart(2, '0')}`;
    return s + '\n';
  };
  const rawData: PrintableEventType = {
    id: ids.rawData,
    system: 'ftrace',
    name: 'raw_data',
    internal: true,
    fields: [field('unsigned int', 'id', 8, 4), field('char[]', 'buf', 12, 0)],
    printFmt: '"id:%04x %08x", REC->id, (int)REC->buf[0]',
    output: rawDataOut,
    raw: rawDataOut,
  };
  tracing.eventTypes.register(print);
  tracing.eventTypes.register(rawData);
  return { print, rawData };
}
