/**
 * func-no-repeats: consecutive calls of the same function from the same
 * place are counted, not recorded, and written as one ftrace/func_repeats
 * event (count and time of the last call) when another call comes.
 */
import type { ExecContext } from '../../kernel/context.js';
import type { EventField } from '../event_type.js';
import type { PrintableEventType } from '../ftrace_entries.js';
import { secsUsecs } from '../output.js';
import type { TraceArray } from '../trace_array.js';
import type { Tracing } from '../tracing.js';
import { printFn } from './fn_events.js';
import { writeRecord } from './record.js';
import { readU64LE, writeU64LE } from '../../kernel/u64_le.js';

interface LastCall {
  ip: bigint;
  parentIp: bigint;
  count: number;
  tsLastCall: number;
}

const U16_MAX = 0xffff;

function field(type: string, name: string, offset: number, size: number): EventField {
  return { type, name, offset, size, signed: false };
}

export function registerFuncRepeats(tracing: Tracing): PrintableEventType {
  const kernel = tracing.kernel;
  const id = kernel.profile.ftraceEntryIds.funcRepeats;
  const t: PrintableEventType = {
    id,
    system: 'ftrace',
    name: 'func_repeats',
    internal: true,
    fields: [
      field('unsigned long', 'ip', 8, 8),
      field('unsigned long', 'parent_ip', 16, 8),
      field('u16', 'count', 24, 2),
      field('u16', 'top_delta_ts', 26, 2),
      field('u32', 'bottom_delta_ts', 28, 4),
    ],
    printFmt:
      '" %ps <-%ps\\t(repeats:%u  delta: -%llu)", (void *)REC->ip, (void *)REC->parent_ip, REC->count, (((u64)(REC)->top_delta_ts << 32) | (REC)->bottom_delta_ts)',
    output(rec, ctx) {
      const d = rec.data;
      const delta = (BigInt(d.readUInt16LE(26)) << 32n) | BigInt(d.readUInt32LE(28));
      return `${printFn(kernel, rec, ctx)} (repeats: ${d.readUInt16LE(24)}, last_ts: ${secsUsecs(Number(rec.ts - delta))})`;
    },
    raw(rec) {
      const d = rec.data;
      return `${readU64LE(d, 8).toString(16)} ${readU64LE(d, 16).toString(16)} ${d.readUInt16LE(24)}`;
    },
  };
  if (!tracing.eventTypes.byId(id)) tracing.eventTypes.register(t);
  return t;
}

/** The last call of each CPU, and how many times it came again since. */
export class FuncRepeats {
  private readonly last: LastCall[];

  constructor(private readonly tr: TraceArray) {
    this.last = Array.from({ length: tr.tracing.kernel.nrCpus }, () => ({ ip: 0n, parentIp: 0n, count: 0, tsLastCall: 0 }));
  }

  /** is_repeat_check(): the same call again is only counted. */
  isRepeat(cpu: number, ip: bigint, parentIp: bigint): boolean {
    const l = this.last[cpu];
    if (l.ip === ip && l.parentIp === parentIp && l.count < U16_MAX) {
      l.tsLastCall = this.tr.clock.now();
      l.count++;
      return true;
    }
    return false;
  }

  /** process_repeats(): writes the pending repeats, then remembers this call. */
  flush(ctx: ExecContext, ip: bigint, parentIp: bigint): void {
    const l = this.last[ctx.cpu];
    if (l.count) {
      const delta = BigInt(Math.max(0, this.tr.clock.now() - l.tsLastCall));
      const id = this.tr.profile.ftraceEntryIds.funcRepeats;
      writeRecord(this.tr, ctx, id, 32, (buf, off) => {
        writeU64LE(buf, off + 8, l.ip);
        writeU64LE(buf, off + 16, l.parentIp);
        buf.writeUInt16LE(l.count, off + 24);
        buf.writeUInt16LE(Number((delta >> 32n) & 0xffffn), off + 26);
        buf.writeUInt32LE(Number(delta & 0xffffffffn), off + 28);
      });
      l.count = 0;
    }
    l.ip = ip;
    l.parentIp = parentIp;
  }
}
