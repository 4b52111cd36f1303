/**
 * Memory and symbols as probe handlers see them: kernel memory is the
 * executor's address space (stacks, objects), user memory the current
 * task's `mm` when the kernel gives it one; `%pS` / symstr through kallsyms.
 */
import type { Kernel } from '../../kernel/kernel.js';
import type { Task } from '../../kernel/task.js';
import type { ProbeMemory } from '../probe/fetch_exec.js';

/** sprint_symbol(): `name+0xoff/0xsize [mod]`, `0x<hex>` when no symbol holds the address. */
export function sprintSymbol(kernel: Kernel, addr: bigint): string {
  const hit = addr ? kernel.symbols.lookup(addr) : undefined;
  if (!hit) return `0x${addr.toString(16)}`;
  let s = `${hit.sym.name}+0x${hit.offset.toString(16)}/0x${hit.sym.size.toString(16)}`;
  if (hit.sym.module) s += ` [${hit.sym.module}]`;
  return s;
}

/** The memory a probe reads while `task` runs. */
export function probeMemory(kernel: Kernel, task: Task | undefined): ProbeMemory {
  const kmem = kernel.exec.memory;
  const mm = task?.mm;
  return {
    readKernel: (addr, len) => kmem.read(addr, len),
    readUser: (addr, len) => mm?.read(addr, len),
    sprintSymbol: (addr) => sprintSymbol(kernel, addr),
    current: task?.addr ?? 0n,
    thisCpuPtr: (ptr) => kernel.perCpuPtr(ptr, task?.cpu ?? 0),
  };
}
