/**
 * enabled_functions and touched_functions (ftrace.c t_show() with the
 * ENABLED / TOUCHED iterators): one line per record in use (or ever used),
 * with its reference count, the R/I/D/O/M columns, and where its call site
 * goes — an ops' own trampoline (and, since 7.x, the sub-ops a manager ops
 * traces for), or the static caller and whatever it calls.
 */
import { sprintSymbol } from '../kernel/kallsyms.js';
import {
  FTRACE_FL_CALL_OPS,
  FTRACE_FL_DIRECT,
  FTRACE_FL_ENABLED,
  FTRACE_FL_IPMODIFY,
  FTRACE_FL_MODIFIED,
  FTRACE_FL_REGS,
  FTRACE_FL_TOUCHED,
  FTRACE_FL_TRAMP_EN,
  FTRACE_REF_MAX,
} from './dyn_ftrace.js';
import type { Ftrace } from './ftrace.js';
import { hashContains } from './ftrace_hash.js';
import {
  FTRACE_OPS_FL_ALLOC_TRAMP,
  FTRACE_OPS_FL_DYNAMIC,
  FTRACE_OPS_FL_ENABLED,
  FTRACE_OPS_FL_GRAPH,
  FTRACE_OPS_FL_RCU,
  FTRACE_OPS_FL_RECURSION,
  type FtraceOps,
} from './ftrace_ops.js';

export class FunctionListing {
  constructor(private readonly ftrace: Ftrace) {}

  private get symbols() {
    return this.ftrace.kernel.symbols;
  }

  /** %pS of an address, trampolines (which kallsyms cannot name here) as bare addresses. */
  private pS(addr: bigint): string {
    if (this.ftrace.trampolines.contains(addr)) return `0x${addr.toString(16)}`;
    return sprintSymbol(this.symbols, addr);
  }

  /** %pS of a kernel function by name. */
  private pSym(name: string): string {
    const s = this.symbols.lookupName(name);
    return s ? sprintSymbol(this.symbols, s.addr) : name;
  }

  /** enabled_functions. */
  enabled(): string {
    return this.list(FTRACE_FL_ENABLED);
  }

  /** touched_functions. */
  touched(): string {
    return this.list(FTRACE_FL_TOUCHED);
  }

  private list(bit: number): string {
    const { records } = this.ftrace;
    let out = '';
    for (let r = 0; r < records.count; r++) {
      const f = records.flags[r];
      if (f & bit) out += this.line(r) + '\n';
    }
    return out;
  }

  private line(r: number): string {
    const { records } = this.ftrace;
    const fn = records.fns[r];
    const f = records.flags[r];
    let s = fn.module ? `${fn.name} [${fn.module}]` : fn.name;
    s += ` (${f & FTRACE_REF_MAX})`;
    s += f & FTRACE_FL_REGS ? ' R' : '  ';
    s += f & FTRACE_FL_IPMODIFY ? ' I' : '  ';
    s += f & FTRACE_FL_DIRECT ? ' D' : '  ';
    s += f & FTRACE_FL_CALL_OPS ? ' O' : '  ';
    s += f & FTRACE_FL_MODIFIED ? ' M ' : '   ';
    if (f & FTRACE_FL_TRAMP_EN) {
      const list = this.ftrace.trampOpsOf(fn.id);
      if (!list.length) s += '\ttramp: ERROR!';
      for (const ops of list) {
        s += `\ttramp: ${this.pS(ops.trampoline)} (${this.pSym(ops.funcSym)})`;
        s += this.trampolineFunc(ops, f);
        s += this.subops(ops, fn.id);
      }
    } else {
      s += this.trampolineFunc(undefined, f);
    }
    return s;
  }

  /** ` ->%pS` of arch_ftrace_trampoline_func(): what the trampoline (or the static caller) calls. */
  private trampolineFunc(ops: FtraceOps | undefined, _flags: number): string {
    if (ops && ops.flags & FTRACE_OPS_FL_ALLOC_TRAMP) return ` ->${this.pSym(opsGetFunc(ops))}`;
    if (ops && ops.trampoline) return '';
    // ftrace_caller / ftrace_regs_caller: their call goes to ftrace_trace_function.
    const list = this.ftrace.opsList;
    if (list.length === 0) return ` ->${this.pSym('ftrace_stub')}`;
    if (list.length === 1 && !(list[0].flags & (FTRACE_OPS_FL_DYNAMIC | FTRACE_OPS_FL_RCU))) return ` ->${this.pSym(opsGetFunc(list[0]))}`;
    return ` ->${this.pSym('arch_ftrace_ops_list_func')}`;
  }

  /** print_subops(): the users a manager ops traces this function for. */
  private subops(ops: FtraceOps, id: number): string {
    if (!this.ftrace.kernel.profile.showsSubops) return '';
    let s = '';
    for (const sub of ops.subops) {
      if (!(sub.flags & FTRACE_OPS_FL_ENABLED) || !hashContains(sub.funcHash, id)) continue;
      if (!s) s = '\tsubops:';
      if (sub.flags & FTRACE_OPS_FL_GRAPH) {
        // A graph sub-ops belongs to an fgraph_ops: print its entry and return callbacks.
        const gops = sub.private as { entrySym?: string; retSym?: string } | undefined;
        if (gops?.entrySym && gops.retSym) {
          s += ` {ent:${this.pSym(gops.entrySym)} ret:${this.pSym(gops.retSym)}}`;
          continue;
        }
      }
      s += sub.trampoline ? ` {${this.pS(sub.trampoline)} (${this.pSym(sub.funcSym)})}` : ` {${this.pSym(sub.funcSym)}}`;
    }
    return s;
  }
}

/** ftrace_ops_get_func(): what a trampoline calls for `ops`. */
function opsGetFunc(ops: FtraceOps): string {
  return ops.flags & (FTRACE_OPS_FL_RECURSION | FTRACE_OPS_FL_RCU) ? 'ftrace_ops_assist_func' : ops.funcSym;
}
