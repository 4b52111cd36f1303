/**
 * The context a probe event's record carries (common_flags and
 * common_preempt_count), from the context the handler runs in.
 */
import type { ExecContext } from '../../kernel/context.js';

/**
 * tracing_gen_ctx_dec(): trace_event_buffer_reserve() takes one off the
 * packed context word, for the preemption the tracepoint itself added. With
 * nothing to take, the borrow runs into the flags (an int3 kprobe's
 * NMI|HARDIRQ|IRQS_OFF context records as `..Zff`, as on the kernel).
 */
export function genCtxDec(ctx: ExecContext): ExecContext {
  const word = ((ctx.flags & 0xff) << 24) | (ctx.preemptCount & 0xff);
  const dec = (word - 1) >>> 0;
  return { ...ctx, flags: dec >>> 24, preemptCount: dec & 0xff };
}

/** One more level of preemption in the depth nibble (capped as the kernel caps it). */
export function bumpPreempt(ctx: ExecContext, n = 1): ExecContext {
  const depth = Math.min((ctx.preemptCount & 0xf) + n, 0xf);
  return { ...ctx, preemptCount: (ctx.preemptCount & 0xf0) | depth };
}
