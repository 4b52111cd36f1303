/**
 * A TRACE_EVENT of the kernel: its layout from the catalogue, printed through
 * its print fmt with "name: " in front, as trace_raw_output_<event>() does.
 */
import type { EventBtfIds, EventField, OutputContext, TraceEventType, TraceRecord } from '../event_type.js';
import type { StaticEventSpec } from './catalogue.js';
import { PrintFmtPrinter } from './print_fmt/printer.js';
import type { PrintEnv, PrintOptions } from './print_fmt/value.js';

/** Where an event type finds symbols, pointer hashing and kernel memory when it prints. */
export type PrintEnvSource = () => PrintEnv;

function printOptions(ctx: OutputContext | undefined): PrintOptions {
  if (!ctx) return { hashPtr: true, bitmaskList: false };
  return { hashPtr: ctx.option('hash-ptr'), bitmaskList: ctx.option('bitmask-list') };
}

export class StaticEventType implements TraceEventType {
  readonly id: number;
  readonly system: string;
  readonly name: string;
  readonly fields: readonly EventField[];
  readonly printFmt: string;
  readonly btfIds?: EventBtfIds;
  private printerCache?: PrintFmtPrinter;

  constructor(
    spec: StaticEventSpec,
    protected readonly env: PrintEnvSource = () => ({}),
    private readonly consts?: ReadonlyMap<string, bigint>,
    /** EVENT_FL_* (ftrace-internal types only). */
    readonly flags?: number,
  ) {
    this.id = spec.id;
    this.system = spec.system;
    this.name = spec.name;
    this.fields = spec.fields;
    this.printFmt = spec.printFmt;
    this.btfIds = spec.btfIds;
  }

  get printer(): PrintFmtPrinter {
    return (this.printerCache ??= new PrintFmtPrinter(this.printFmt, this.fields, this.consts));
  }

  output(rec: TraceRecord, ctx: OutputContext): string {
    return `${this.name}: ${this.printer.print(rec.data, this.env(), printOptions(ctx))}`;
  }
}
