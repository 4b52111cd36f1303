/**
 * Direct calls of loaded modules (register_ftrace_direct() /
 * unregister_ftrace_direct()): while a module with `direct` calls is loaded,
 * each is a DIRECT ftrace_ops on its target, whose trampoline calls the
 * module's function — here, what that function prints with trace_printk().
 */
import type { Kernel } from '../kernel/kernel.js';
import type { ModuleDirectCall, LoadedModule } from '../kernel/module.js';
import { ARG_REGS, type PtRegs } from '../kernel/regs.js';
import type { Task } from '../kernel/task.js';
import type { Ftrace } from './ftrace.js';
import { FTRACE_OPS_FL_DIRECT, FTRACE_OPS_FL_SAVE_REGS, FtraceOps } from './ftrace_ops.js';

/** The task whose task_struct is at `addr`, if the kernel has it. */
function taskAt(kernel: Kernel, addr: bigint): Task | undefined {
  for (const list of [kernel.tasks.all(), kernel.tasks.kthreads, kernel.tasks.idle]) {
    for (const t of list) if (t.addr === addr) return t;
  }
  return undefined;
}

function directText(kernel: Kernel, call: ModuleDirectCall, regs: PtRegs): string {
  const arg = (i: number) => regs.get(ARG_REGS[i]!);
  if (call.print === 'wakee') {
    const p = taskAt(kernel, arg(0));
    return `${call.text}${p?.comm ?? '<...>'}-${p?.pid ?? 0}\n`;
  }
  return `${call.text}vma=0x${arg(0).toString(16)} address=${arg(1).toString(16)} flags=${arg(2).toString(16)}\n`;
}

/** The direct calls of the loaded modules, attached and detached as they load and unload. */
export class ModuleDirectCalls {
  private readonly attached = new Map<LoadedModule, FtraceOps[]>();

  constructor(private readonly ftrace: Ftrace) {
    ftrace.kernel.modules.notifiers.add((mod, state) => {
      if (state === 'live') this.attach(mod);
      else if (state === 'going') this.detach(mod);
    });
  }

  private attach(mod: LoadedModule): void {
    const { ftrace } = this;
    const { kernel } = ftrace;
    const list: FtraceOps[] = [];
    for (const call of mod.def.direct ?? []) {
      const target = kernel.symbols.byName(call.target, '')[0];
      const fn = kernel.symbols.lookupName(call.fn, mod.def.name);
      if (!target || !fn) continue;
      const ops = new FtraceOps({
        func: (_ip, _parentIp, _op, regs, task) => kernel.tracePrintk?.(task, fn.addr, directText(kernel, call, regs)),
        funcSym: 'ftrace_stub',
        flags: FTRACE_OPS_FL_DIRECT | FTRACE_OPS_FL_SAVE_REGS,
      });
      ftrace.setFilterIds(ops, [target.id]);
      ftrace.register(ops);
      list.push(ops);
    }
    this.attached.set(mod, list);
  }

  private detach(mod: LoadedModule): void {
    for (const ops of this.attached.get(mod) ?? []) this.ftrace.unregister(ops);
    this.attached.delete(mod);
  }
}
