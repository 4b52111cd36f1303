/**
 * Kernel stack traces in the buffer (ftrace/kernel_stack, __trace_stack()):
 * the return addresses of the emulated call stack of the running task, as
 * the func_stack_trace option, the `stacktrace` command and the
 * `stacktrace` option of events record them.
 */
import type { ExecContext } from '../../kernel/context.js';
import type { Task } from '../../kernel/task.js';
import type { EventField } from '../event_type.js';
import type { PrintableEventType } from '../ftrace_entries.js';
import { printIpSym } from '../ksym.js';
import type { TraceArray } from '../trace_array.js';
import type { Tracing } from '../tracing.js';
import { writeRecord } from './record.js';
import { readU64LE, writeU64LE } from '../../kernel/u64_le.js';

export const TRACE_STACK = 4;
/** Where an ftrace trampoline stands in a stack (FTRACE_TRAMPOLINE_MARKER). */
const FTRACE_TRAMPOLINE_MARKER = 0x7fffffffn;
const MAX_ENTRIES = 128;

function field(type: string, name: string, offset: number, size: number, signed = false): EventField {
  return { type, name, offset, size, signed };
}

export function registerKernelStack(tracing: Tracing): PrintableEventType {
  const kernel = tracing.kernel;
  const existing = tracing.eventTypes.byId(TRACE_STACK) as PrintableEventType | undefined;
  if (existing) return existing;
  const t: PrintableEventType = {
    id: TRACE_STACK,
    system: 'ftrace',
    name: 'kernel_stack',
    internal: true,
    fields: [field('int', 'size', 8, 4, true), field('unsigned long', 'caller[8]', 16, 64)],
    printFmt:
      '"\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n" "\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n" "\\t=> %ps\\n\\t=> %ps\\n", ' +
      '(void *)REC->caller[0], (void *)REC->caller[1], (void *)REC->caller[2], (void *)REC->caller[3], ' +
      '(void *)REC->caller[4], (void *)REC->caller[5], (void *)REC->caller[6], (void *)REC->caller[7]',
    output(rec, ctx) {
      const d = rec.data;
      const flags = { symOffset: ctx.option('sym-offset'), symAddr: ctx.option('sym-addr') };
      let s = '<stack trace>\n';
      for (let off = 16; off + 8 <= d.length; off += 8) {
        const p = readU64LE(d, off);
        if (p === 0xffffffffffffffffn) break;
        s += p === FTRACE_TRAMPOLINE_MARKER ? ' => [FTRACE TRAMPOLINE]\n' : ` => ${printIpSym(kernel, p, flags)}\n`;
      }
      return s;
    },
  };
  tracing.eventTypes.register(t);
  return t;
}

/**
 * The return addresses of a task's emulated stack, innermost first: an
 * address inside the innermost function, then each call site out to the
 * entry code. `trampoline`: the traced call came through an ftrace trampoline.
 */
export function stackEntries(task: Task, trampoline = false): bigint[] {
  const out: bigint[] = [];
  if (trampoline) out.push(FTRACE_TRAMPOLINE_MARKER);
  const frames = task.frames;
  if (!frames.length) return out;
  const inner = frames[frames.length - 1].fn;
  out.push(inner.addr + BigInt(inner.fentryOffset + 5));
  for (let i = frames.length - 1; i >= 0 && out.length < MAX_ENTRIES; i--) {
    const cs = frames[i].callSite;
    if (!cs) break;
    out.push(cs);
  }
  return out;
}

/** __ftrace_trace_stack(): records `entries` (default: the task's stack) as a kernel_stack event. */
export function recordStack(tr: TraceArray, ctx: ExecContext, entries = stackEntries(ctx.task)): boolean {
  const n = entries.length;
  return writeRecord(tr, ctx, TRACE_STACK, 16 + 8 * n, (buf, off) => {
    buf.writeInt32LE(n, off + 8);
    buf.writeInt32LE(0, off + 12);
    for (let i = 0; i < n; i++) writeU64LE(buf, off + 16 + 8 * i, BigInt.asUintN(64, entries[i]));
  });
}
