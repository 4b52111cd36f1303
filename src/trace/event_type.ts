/**
 * Trace event types: the binary layout a record has in the ring buffer (its
 * `format` file) and how the `trace` file prints it. Contract shared by the
 * ring buffer, the event subsystems and every tracer.
 */
import type { ExecContext } from '../kernel/context.js';

/** struct trace_entry: common_type u16, common_flags u8, common_preempt_count u8, common_pid s32. */
export const TRACE_ENTRY_SIZE = 8;

export interface EventField {
  /** C type as the format file shows it, e.g. 'unsigned long', 'char[16]', '__data_loc char[]'. */
  type: string;
  name: string;
  offset: number;
  size: number;
  signed: boolean;
}

/** One record read back from a ring buffer. */
export interface TraceRecord {
  cpu: number;
  /** Timestamp in trace-clock units (ns for the time clocks). */
  ts: bigint;
  /** The whole payload, common header included. */
  data: Buffer;
}

export interface OutputContext {
  /** Trace options in effect (sym-offset, sym-addr, hex, raw, ...), by option name. */
  option(name: string): boolean;
}

/** TRACE_EVENT_FL_IGNORE_ENABLE: an ftrace-internal event (no enable or filter file, not switchable). */
export const EVENT_FL_IGNORE_ENABLE = 1;
/** The event class has no reg(): it cannot be enabled and has no `id` file. */
export const EVENT_FL_NO_REG = 2;

export interface TraceEventType {
  /** common_type: the event id shown in the `id` file. */
  readonly id: number;
  readonly system: string;
  readonly name: string;
  /** Event-specific fields, after the common ones. */
  readonly fields: readonly EventField[];
  /** Text after `print fmt: ` in the format file. */
  readonly printFmt: string;
  /** The FUNCTION column of the trace output for one record. */
  output(rec: TraceRecord, ctx: OutputContext): string;
  /** EVENT_FL_* bits (none for ordinary events). */
  readonly flags?: number;
  /** The module that defines the event (for set_event's `:mod:`); undefined for vmlinux. */
  readonly module?: string;
  /** The BTF ids BPF attaches by (the `btf_ids` file, 7.3); undefined where the kernel shows none. */
  readonly btfIds?: EventBtfIds;
}

/** What an event's `btf_ids` file shows: the BTF object, the probe function's prototype (0: a shared dispatcher) and the record struct. */
export interface EventBtfIds {
  readonly obj: number;
  readonly raw: number;
  readonly tp: number;
}

/** Fills the common header of a record. */
export function writeCommonHeader(buf: Buffer, type: number, ctx: ExecContext): void {
  buf.writeUInt16LE(type, 0);
  buf.writeUInt8(ctx.flags & 0xff, 2);
  buf.writeUInt8(ctx.preemptCount & 0xff, 3);
  buf.writeInt32LE(ctx.task.pid, 4);
}
