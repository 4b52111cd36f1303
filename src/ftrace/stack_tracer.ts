/**
 * The stack tracer (trace_stack.c): while enabled
 * (/proc/sys/kernel/stack_tracer_enabled), an ftrace_ops over the functions
 * of stack_trace_filter looks at how deep each call's kernel stack is, and
 * keeps the deepest stack seen: each return address with the depth where
 * it sits and the size of its frame (stack_trace, stack_max_size).
 */
import { sprintSymbol } from '../kernel/kallsyms.js';
import { THREAD_SIZE } from '../kernel/kmem.js';
import type { PtRegs } from '../kernel/regs.js';
import type { Task } from '../kernel/task.js';
import type { Ftrace } from './ftrace.js';
import { FtraceOps } from './ftrace_ops.js';

/** Kernel stacks are aligned on their size. */
const STACK_SIZE = BigInt(THREAD_SIZE);
const STACK_TRACE_ENTRIES = 500;
/** Length of the __fentry__ call: its return address is ip + this. */
const MCOUNT_INSN_SIZE = 5n;

interface StackEntry {
  addr: bigint;
  /** Bytes from the top of the stack to where the address sits. */
  depth: number;
}

export class StackTracer {
  readonly ops: FtraceOps;
  /** stack_tracer_enabled (the sysctl). */
  enabled = false;
  /** stack_max_size. */
  maxSize = 0;
  private entries: StackEntry[] = [];
  /** disable_stack_tracer: nesting guard. */
  private busy = false;

  constructor(private readonly ftrace: Ftrace) {
    this.ops = new FtraceOps({
      funcSym: 'stack_trace_call',
      func: (ip, _parentIp, _op, regs, task) => this.call(ip, regs, task),
    });
  }

  /** stack_trace_sysctl(): registers or unregisters the ops when the value flips. */
  setEnabled(on: boolean): void {
    if (on === this.enabled) return;
    if (on) this.ftrace.register(this.ops);
    else this.ftrace.unregister(this.ops);
    this.enabled = on;
  }

  /** stack_trace_call(). */
  private call(ip: bigint, regs: PtRegs, task: Task): void {
    if (this.busy) return;
    this.busy = true;
    task.preemptCount++;
    try {
      this.check(ip + MCOUNT_INSN_SIZE, regs, task);
    } finally {
      task.preemptCount--;
      this.busy = false;
    }
  }

  /** check_stack(): a deeper stack than seen so far is saved with where each return address sits. */
  private check(ret: bigint, regs: PtRegs, task: Task): void {
    // The return address into the traced function sits just below its own return slot.
    const here = regs.sp - 8n;
    const top = (here & ~(STACK_SIZE - 1n)) + STACK_SIZE;
    const thisSize = Number(top - here);
    if (thisSize <= this.maxSize) return;
    this.maxSize = thisSize;
    const mem = this.ftrace.exec.memory;
    // stack_trace_save() unwinds to the real return addresses...
    const trace: { addr: bigint; loc: bigint }[] = [{ addr: ret, loc: here }];
    for (let i = task.frames.length - 1; i >= 0 && trace.length < STACK_TRACE_ENTRIES - 1; i--) {
      const f = task.frames[i];
      if (!f.callSite) break;
      trace.push({ addr: f.callSite, loc: f.regs.sp });
    }
    // ...which are then looked for on the stack itself: one hidden by a return hook is not found.
    const entries: StackEntry[] = [];
    for (const t of trace) {
      if (t.loc >= top) continue;
      if (mem.readU64(t.loc) !== t.addr && t !== trace[0]) continue;
      entries.push({ addr: t.addr, depth: Number(top - t.loc) });
    }
    this.entries = entries;
  }

  /** stack_max_size write: a new maximum to beat. */
  setMaxSize(v: number): void {
    this.maxSize = v;
  }

  /** stack_trace. */
  show(): string {
    const n = this.entries.length;
    let s = `        Depth    Size   Location    (${n} entries)\n        -----    ----   --------\n`;
    if (!this.enabled && !this.maxSize) {
      s +=
        '#\n#  Stack tracer disabled\n#\n' +
        "# To enable the stack tracer, either add 'stacktrace' to the\n" +
        '# kernel command line\n' +
        "# or 'echo 1 > /proc/sys/kernel/stack_tracer_enabled'\n#\n";
    }
    for (let i = 0; i < n; i++) {
      const e = this.entries[i];
      const size = i + 1 === n ? e.depth : e.depth - this.entries[i + 1].depth;
      s += `${String(i).padStart(3)}) ${String(e.depth).padStart(8)}   ${String(size).padStart(5)}   ${sprintSymbol(this.ftrace.kernel.symbols, e.addr)}\n`;
    }
    return s;
  }
}
