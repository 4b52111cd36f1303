/**
 * The `function` tracer (trace_functions.c): its trace array's ftrace_ops
 * records one ftrace/function event per traced call, optionally with a
 * stack trace (func_stack_trace), the arguments (func-args, 7.x) or repeats
 * folded into func_repeats events (func-no-repeats).
 */
import type { ExecContext } from '../../kernel/context.js';
import { fail } from '../../kernel/errno.js';
import type { FtraceFunc } from '../../ftrace/ftrace_ops.js';
import { ftraceTestRecursionTrylock, ftraceTestRecursionUnlock } from '../../ftrace/recursion.js';
import type { KernelProfile } from '../../kernel/profiles/profile.js';
import { ARG_REGS, type PtRegs } from '../../kernel/regs.js';
import type { TraceArray } from '../trace_array.js';
import type { Tracer, TracerOption } from '../tracer.js';
import { FTRACE_REGS_MAX_ARGS, TRACE_FN } from './fn_events.js';
import { FuncRepeats } from './func_repeats.js';
import { recordStack, stackEntries } from './kernel_stack.js';
import { ctxDec, writeRecord } from './record.js';
import { writeU64LE } from '../../kernel/u64_le.js';

const OPT_STACK = 'func_stack_trace';
const OPT_NO_REPEATS = 'func-no-repeats';
const OPT_ARGS = 'func-args';

/** trace_function(): one ftrace/function record (with the argument registers when `regs` is given). */
function traceFunction(tr: TraceArray, ip: bigint, parentIp: bigint, ctx: ExecContext, regs?: PtRegs): boolean {
  const len = 24 + (regs ? FTRACE_REGS_MAX_ARGS * 8 : 0);
  return writeRecord(tr, ctx, TRACE_FN, len, (buf, off) => {
    writeU64LE(buf, off + 8, ip);
    writeU64LE(buf, off + 16, parentIp);
    if (regs) for (let i = 0; i < FTRACE_REGS_MAX_ARGS; i++) writeU64LE(buf, off + 24 + 8 * i, regs.get(ARG_REGS[i]));
  });
}

/**
 * The callback of the option combination (select_trace_function()); undefined
 * when not allowed. `quiet`: whether it now returns at once for every call
 * (the array records nothing, and no repeat state moves before the write is refused).
 */
function selectFunc(tr: TraceArray, opts: ReadonlySet<string>): { func: FtraceFunc; sym: string; quiet: () => boolean } | undefined {
  const kernel = tr.tracing.kernel;
  const tasks = tr.tracing.ftrace.tasks;
  const af = tr.ftrace;
  const stack = opts.has(OPT_STACK);
  const norep = opts.has(OPT_NO_REPEATS);
  const args = opts.has(OPT_ARGS);
  if (args && (stack || norep)) return undefined;
  const silent = () => tr.silent;
  if (args) {
    return {
      sym: 'function_args_trace_call',
      quiet: silent,
      func: (ip, parentIp, _op, regs, task) => {
        if (!af.functionEnabled) return;
        const bit = ftraceTestRecursionTrylock(tasks, task);
        if (bit < 0) return;
        try {
          traceFunction(tr, ip, parentIp, kernel.context(task), regs);
        } finally {
          ftraceTestRecursionUnlock(tasks, task, bit);
        }
      },
    };
  }
  if (stack) {
    const repeats = norep ? (af.repeats ??= new FuncRepeats(tr)) : undefined;
    return {
      sym: norep ? 'function_stack_no_repeats_trace_call' : 'function_stack_trace_call',
      quiet: norep ? () => false : silent,
      // Runs with interrupts off and no recursion lock: the context is the traced one.
      func: (ip, parentIp, _op, _regs, task) => {
        if (!af.functionEnabled) return;
        const ctx = kernel.context(task);
        if (repeats) {
          if (repeats.isRepeat(ctx.cpu, ip, parentIp)) return;
          repeats.flush(ctx, ip, parentIp);
        }
        traceFunction(tr, ip, parentIp, ctx);
        recordStack(tr, ctx, stackEntries(task, true));
      },
    };
  }
  if (norep) {
    const repeats = (af.repeats ??= new FuncRepeats(tr));
    return {
      sym: 'function_no_repeats_trace_call',
      quiet: silent,
      func: (ip, parentIp, _op, _regs, task) => {
        if (!af.functionEnabled) return;
        const bit = ftraceTestRecursionTrylock(tasks, task);
        if (bit < 0) return;
        try {
          if (!tr.tracingOn) return;
          const ctx = ctxDec(kernel.context(task));
          if (repeats.isRepeat(ctx.cpu, ip, parentIp)) return;
          repeats.flush(ctx, ip, parentIp);
          traceFunction(tr, ip, parentIp, ctx);
        } finally {
          ftraceTestRecursionUnlock(tasks, task, bit);
        }
      },
    };
  }
  return {
    sym: 'function_trace_call',
    quiet: silent,
    func: (ip, parentIp, _op, _regs, task) => {
      if (!af.functionEnabled) return;
      const bit = ftraceTestRecursionTrylock(tasks, task);
      if (bit < 0) return;
      try {
        traceFunction(tr, ip, parentIp, ctxDec(kernel.context(task)));
      } finally {
        ftraceTestRecursionUnlock(tasks, task, bit);
      }
    },
  };
}

export function functionTracer(profile: KernelProfile): Tracer {
  const options: TracerOption[] = [
    { name: OPT_STACK, default: false },
    { name: OPT_NO_REPEATS, default: false },
  ];
  if (profile.functionArgs) options.push({ name: OPT_ARGS, default: false });
  const tracer: Tracer = {
    name: 'function',
    allowInstances: true,
    options,
    init(tr) {
      const af = tr.ftrace;
      const sel = selectFunc(tr, tr.tracerOptions.get('function') ?? new Set());
      if (!sel) fail('EINVAL');
      const ftrace = tr.tracing.ftrace;
      ftrace.setFunc(af.fa.ops, sel.func, sel.sym);
      af.fa.ops.quiet = sel.quiet;
      // tracing_start_function_trace()
      af.functionEnabled = false;
      ftrace.register(af.fa.ops);
      af.functionEnabled = true;
    },
    reset(tr) {
      const af = tr.ftrace;
      af.functionEnabled = false;
      const ftrace = tr.tracing.ftrace;
      if (ftrace.opsList.includes(af.fa.ops)) ftrace.unregister(af.fa.ops);
      ftrace.setFunc(af.fa.ops, () => {}, 'ftrace_stub');
      af.fa.ops.quiet = undefined;
      af.repeats = undefined;
    },
    start(tr) {
      // function_trace_start(): turning tracing on starts from an empty buffer.
      tr.reset();
    },
    setOption(tr, name, on) {
      // func_set_flag(): a new combination means a new callback, re-registered.
      if (tr.tracer !== tracer) return;
      const cur = new Set(tr.tracerOptions.get('function') ?? []);
      if (on) cur.add(name);
      else cur.delete(name);
      const sel = selectFunc(tr, cur);
      if (!sel) fail('EINVAL');
      const af = tr.ftrace;
      const ftrace = tr.tracing.ftrace;
      ftrace.unregister(af.fa.ops);
      ftrace.setFunc(af.fa.ops, sel.func, sel.sym);
      af.fa.ops.quiet = sel.quiet;
      ftrace.register(af.fa.ops);
    },
  };
  return tracer;
}
