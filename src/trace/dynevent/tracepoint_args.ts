/**
 * A tracepoint's arguments as its probe stub receives them. The emulated
 * kernel fires tracepoints with the values of their event's fields; a
 * tracepoint probe (`t:`) fetches by the C prototype (`btf_trace_<name>`:
 * `struct task_struct *prev`, `bool preempt`, ...). This rebuilds the
 * prototype's values: a parameter named like a field takes its value, a
 * task pointer the task_struct of the pid field that names it, strings
 * their kernel address.
 */
import { resolveType, type FuncParam } from '../../kernel/ctypes.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { KernelStrings } from '../events/record_builder.js';

function toBig(v: unknown, strings: KernelStrings): bigint {
  switch (typeof v) {
    case 'bigint':
      return BigInt.asUintN(64, v);
    case 'number':
      return Number.isFinite(v) ? BigInt.asUintN(64, BigInt(Math.trunc(v))) : 0n;
    case 'boolean':
      return v ? 1n : 0n;
    case 'string':
      return strings.addressOf(v);
    default:
      return 0n;
  }
}

/** `struct task_struct *`? */
function isTaskPointer(p: FuncParam): boolean {
  const t = resolveType(p.type);
  if (t.kind !== 'ptr') return false;
  const target = resolveType(t.target);
  return (target.kind === 'struct' || target.kind === 'union') && target.name === 'task_struct';
}

/** The pid field that tells which task a `struct task_struct *NAME` parameter is. */
function pidFieldOf(name: string, args: Readonly<Record<string, unknown>>): unknown {
  for (const k of [`${name}_pid`, name === 'p' || name === 'task' || name === 'tsk' || name === 'curr' ? 'pid' : '']) {
    if (k && k in args) return args[k];
  }
  return undefined;
}

/** Values of `params` (the stub's, without its `void *__data`) from a tracepoint's field values. */
export function tracepointParams(
  kernel: Kernel,
  params: readonly FuncParam[],
  args: Readonly<Record<string, unknown>>,
  strings: KernelStrings,
): bigint[] {
  // sched_switch's event shows a preempted task's state as TASK_REPORT_MAX; the call passed preempt=true, state 0
  const preempted = 'prev_state' in args && (toBig(args.prev_state, strings) & 0x100n) !== 0n;
  return params.map((p) => {
    if (preempted && p.name === 'preempt') return 1n;
    if (preempted && p.name === 'prev_state') return 0n;
    if (p.name in args) return toBig(args[p.name], strings);
    if (isTaskPointer(p)) {
      const pid = pidFieldOf(p.name, args);
      const task = pid !== undefined ? kernel.tasks.get(Number(pid)) : undefined;
      return task?.addr ?? 0n;
    }
    return 0n;
  });
}
