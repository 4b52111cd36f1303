/**
 * The kernel's symbol table (kallsyms), with the ftrace view of it: which
 * functions have an __fentry__ call site and may be traced.
 *
 * Contract shared by every layer; the built-in model and the machine's
 * running kernel (src/host/symbols.ts) both implement it.
 */
export interface KernelSymbol {
  name: string;
  /** Absolute address (kernel addresses do not fit in a double). */
  addr: bigint;
  /** Size in bytes (distance to the next symbol for kallsyms-only symbols). */
  size: number;
  /** kallsyms type letter: t T W d D r R b B ... */
  type: string;
  /** Module name, undefined for vmlinux. */
  module?: string;
}

export interface KernelFunction extends KernelSymbol {
  /** Dense index of this function in the table: the key hot paths use instead of the address. */
  id: number;
  /** Listed in available_filter_functions (has a patchable __fentry__ call). */
  traceable: boolean;
  /** Offset of the __fentry__ call from the symbol (4 after an endbr64, else 0): the ftrace ip is addr + this. */
  fentryOffset: number;
}

export interface SymbolLookup {
  readonly sym: KernelSymbol;
  readonly offset: number;
}

export interface SymbolTable {
  /** Every function, traceable or not, by id. */
  readonly functions: readonly KernelFunction[];
  /** All functions of this name (non-unique names exist); `module` narrows to one module ('' for vmlinux). */
  byName(name: string, module?: string): KernelFunction[];
  /** The symbol containing `addr`, for %pS-style `func+0x4/0x370` output. */
  lookup(addr: bigint): SymbolLookup | undefined;
  /** Traceable functions in available_filter_functions order. */
  traceable(): readonly KernelFunction[];
}
