/**
 * The call executor: running an emulated kernel function is entry (where
 * ftrace and kprobes hook in) → body (calls to children with real argument
 * values) → return through whatever address sits in the return slot.
 *
 * Return hooks work as on x86: fgraph and rethook replace the return address
 * on the stack with a trampoline and keep the real one; the executor "returns"
 * to whatever address the slot holds, running trampolines until it reaches a
 * real address — which must be the call site, or the emulated kernel has been
 * corrupted by a hook. This is what makes two return hooks on one function
 * see each other (a kretprobe'd caller seen from fgraph) as on the kernel.
 */
import type { CountingHooks } from './counted_calls.js';
import type { AddressSpace } from './memory.js';
import { ARG_REGS, PtRegs } from './regs.js';
import type { KernelFunction } from './symbols.js';
import type { Task } from './task.js';

export type Value = bigint;

/** Hooks that cannot leave a trace now: running what only they reach need not be done call by call. */
export interface QuietHooks {
  /** Whether every hook behind function `id`'s patched site is quiet. */
  quiet(id: number): boolean;
  /** Whether every hook behind every patched site is. */
  all(): boolean;
}

/**
 * ftrace's handler at a patched __fentry__ site. It may rewrite the return
 * address at regs.sp. `fn` is the function entered (saves an ip lookup).
 */
type FentryHandler = (ip: bigint, parentIp: bigint, regs: PtRegs, task: Task, fn?: KernelFunction) => void;

/** An int3 breakpoint (a kprobe not on an ftrace site). */
type BreakpointHandler = (addr: bigint, regs: PtRegs, task: Task) => void;

/** A return trampoline: runs when a function returns to its address; returns the address to go on to. */
type TrampolineHandler = (regs: PtRegs, task: Task) => bigint;

/** What a body returns: the value for %ax (void = 0), possibly after sleeping. */
type BodyResult = Value | number | void | Promise<Value | number | void>;
export type Body = (x: Call) => BodyResult;

/** One activation of a function: what a body can see and do. */
export class Call {
  constructor(
    readonly exec: Executor,
    readonly task: Task,
    readonly fn: KernelFunction,
    readonly regs: PtRegs,
    /** The real return address: just after the call instruction in the caller. */
    readonly callSite: bigint,
    readonly args: readonly Value[],
  ) {}

  /** This activation ended in a tail call: its callee returned for it. */
  tailed = false;

  /** Calls a child function from this one. */
  call(fn: string | KernelFunction, args: readonly (Value | number)[] = [], body?: Body): Value | Promise<Value> {
    return this.exec.call(this.task, fn, args, body);
  }

  /**
   * A tail call (`jmp callee`): this function's frame is replaced by the
   * callee's, which returns straight to this function's caller through the
   * same return slot. Must be the last thing the body does; return its value.
   */
  tail(fn: string | KernelFunction, args: readonly (Value | number)[] = [], body?: Body): Value | Promise<Value> {
    return this.exec.tailCall(this, fn, args, body);
  }
}

interface CallSiteModel {
  /** Offset in `caller` of the instruction after its call to `callee`. */
  (caller: KernelFunction, callee: KernelFunction): number;
}

/** FNV-1a: a stable hash for deterministic call-site offsets. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const defaultCallSite: CallSiteModel = (caller, callee) => {
  const start = caller.fentryOffset + 5;
  const span = Math.max(1, caller.size - start - 1);
  return start + (hash(`${caller.name}>${callee.name}`) % span) + 5;
};

interface ExecutorDeps {
  /** Resolves a function by name (the first one of that name). */
  resolve(name: string): KernelFunction | undefined;
  /** Number of function ids (size of per-function tables). */
  nrFunctions: number;
  kernelMemory: AddressSpace;
}

export class Executor {
  /** Per function id: its __fentry__ site calls ftrace. Read-only: set it with patchFentry(). */
  readonly fentryPatched: Uint8Array;
  /** How many sites are patched (observed asks on every system call: no scan). */
  private patchedCount = 0;
  /** Moves whenever a site is patched or restored, or a breakpoint set or cleared. */
  generation = 0;
  /** Where patched __fentry__ sites go. */
  fentry: FentryHandler = () => {};
  /** int3 breakpoints by address. */
  readonly breakpoints = new Map<bigint, BreakpointHandler>();
  /** Breakpoint offsets per function id, sorted: which addresses to check when it runs. */
  private readonly bpOffsets = new Map<number, number[]>();
  /** Return trampolines by address (return_to_handler, arch_rethook_trampoline, ...). */
  readonly trampolines = new Map<bigint, TrampolineHandler>();
  /** Bodies of functions that do something; others are leaves returning 0. */
  readonly bodies = new Map<string, Body>();
  callSite: CallSiteModel = defaultCallSite;
  /** Return address used for the outermost call of a chain (entry code). */
  entryReturn = 0n;
  /** Calls that returned to an address that was not their call site (a broken return hook). */
  corruptions = 0;
  /** Function calls run so far (the daemon's `load`). */
  calls = 0;

  constructor(private readonly deps: ExecutorDeps) {
    this.fentryPatched = new Uint8Array(deps.nrFunctions);
  }

  /** Patches (or restores to a nop) the __fentry__ site of function `id` (ftrace does, as records are enabled). */
  patchFentry(id: number, on: boolean): void {
    const was = this.fentryPatched[id] !== 0;
    if (was === on) return;
    this.fentryPatched[id] = on ? 1 : 0;
    this.patchedCount += on ? 1 : -1;
    this.generation++;
  }

  /** Whether function `id` reaches a hook when it runs (its ftrace site is patched, or it holds a breakpoint). */
  hooked(id: number): boolean {
    return this.fentryPatched[id] !== 0 || this.bpOffsets.has(id);
  }

  /** Whether function `id` holds a breakpoint. */
  hasBreakpoint(id: number): boolean {
    return this.bpOffsets.has(id);
  }

  /** What the hooks behind patched sites do when they only count calls (ftrace sets it: the function profiler). */
  counting?: CountingHooks;
  /** Which hooks behind patched sites now return at once, changing nothing (ftrace sets it: a tracer recording nothing). */
  quietness?: QuietHooks;

  /** Whether running function `id` now can leave a trace: a breakpoint, or a patched site with a hook that is not quiet. */
  seen(id: number): boolean {
    if (this.bpOffsets.has(id)) return true;
    return this.fentryPatched[id] !== 0 && !this.quietness?.quiet(id);
  }

  /** Who a patched site calls changed, not whether it is patched: what is known of subtrees is stale. */
  hooksChanged(): void {
    this.generation++;
  }

  /** The kernel address space calls run in (stacks, return slots). */
  get memory(): AddressSpace {
    return this.deps.kernelMemory;
  }

  /** Resolves a function by name (undefined if the kernel has none of that name). */
  resolve(name: string): KernelFunction | undefined {
    return this.deps.resolve(name);
  }

  /**
   * Whether any hook can observe a call now: a breakpoint, or a patched
   * __fentry__ site whose hooks are not all quiet. Work nobody can see may be skipped (the background activity
   * does so to stay cheap).
   */
  get observed(): boolean {
    if (this.breakpoints.size > 0) return true;
    if (this.patchedCount === 0) return false;
    if (this.loudGen !== this.generation) {
      this.loudGen = this.generation;
      this.loud = !this.quietness?.all();
    }
    return this.loud;
  }

  private loudGen = -1;
  private loud = true;

  define(name: string, body: Body): void {
    this.bodies.set(name, body);
  }

  setBreakpoint(fn: KernelFunction, offset: number, handler: BreakpointHandler): void {
    this.breakpoints.set(fn.addr + BigInt(offset), handler);
    const offs = this.bpOffsets.get(fn.id) ?? [];
    if (!offs.includes(offset)) offs.push(offset);
    offs.sort((a, b) => a - b);
    this.bpOffsets.set(fn.id, offs);
    this.generation++;
  }

  clearBreakpoint(fn: KernelFunction, offset: number): void {
    this.breakpoints.delete(fn.addr + BigInt(offset));
    const offs = (this.bpOffsets.get(fn.id) ?? []).filter((o) => o !== offset);
    if (offs.length) this.bpOffsets.set(fn.id, offs);
    else this.bpOffsets.delete(fn.id);
    this.generation++;
  }

  /**
   * Runs `fn` in `task` with integer arguments `args`. Returns its %ax, or a
   * promise of it if the body sleeps. `site` overrides the return address
   * (a call made through an intermediate that left no frame).
   */
  call(task: Task, fnOrName: string | KernelFunction, args: readonly (Value | number)[] = [], body?: Body, site?: bigint): Value | Promise<Value> {
    const fn = typeof fnOrName === 'string' ? this.deps.resolve(fnOrName) : fnOrName;
    if (!fn) throw new Error(`emulated kernel: no function ${String(fnOrName)}`);
    const mem = this.deps.kernelMemory;
    const values = toValues(args);
    const regs = new PtRegs();
    regs.setArgs(values);

    // Arguments past the sixth go on the stack, then the call pushes the return address.
    const caller = task.frames[task.frames.length - 1];
    const callSite = site ?? (caller ? caller.fn.addr + BigInt(this.callSite(caller.fn, fn)) : this.entryReturn);
    const savedSp = task.sp;
    let sp = savedSp;
    for (let i = values.length - 1; i >= ARG_REGS.length; i--) {
      sp -= 8n;
      mem.writeU64(sp, values[i]);
    }
    sp -= 8n;
    mem.writeU64(sp, callSite);
    regs.sp = sp;
    regs.ip = fn.addr;
    return this.run(new Call(this, task, fn, regs, callSite, values), body ?? this.bodies.get(fn.name), savedSp);
  }

  /** `x` jumps to `fn`: see Call.tail. */
  tailCall(x: Call, fnOrName: string | KernelFunction, args: readonly (Value | number)[] = [], body?: Body): Value | Promise<Value> {
    const fn = typeof fnOrName === 'string' ? this.deps.resolve(fnOrName) : fnOrName;
    if (!fn) throw new Error(`emulated kernel: no function ${String(fnOrName)}`);
    const { task } = x;
    x.tailed = true;
    const i = task.frames.lastIndexOf(x);
    if (i >= 0) task.frames.splice(i, 1);
    const values = toValues(args);
    const regs = new PtRegs();
    regs.setArgs(values);
    // Same return slot, left as it is (a return hook on x already replaced it).
    regs.sp = x.regs.sp;
    regs.ip = fn.addr;
    return this.run(new Call(this, task, fn, regs, x.callSite, values), body ?? this.bodies.get(fn.name), task.sp);
  }

  private run(x: Call, body: Body | undefined, savedSp: bigint): Value | Promise<Value> {
    const { task } = x;
    this.calls++;
    task.frames.push(x);
    task.sp = x.regs.sp;
    let result: BodyResult;
    try {
      this.enter(x);
      result = body?.(x);
    } catch (e) {
      unwind(x, savedSp);
      throw e;
    }
    if (result instanceof Promise) {
      return result.then(
        (v) => this.finish(x, v, savedSp),
        (e) => {
          unwind(x, savedSp);
          throw e;
        },
      );
    }
    return this.finish(x, result, savedSp);
  }

  private finish(x: Call, v: Value | number | void, savedSp: bigint): Value {
    if (!x.tailed) return this.leave(x, v, savedSp);
    // The tail callee already returned through the slot.
    unwind(x, savedSp);
    return BigInt.asUintN(64, BigInt(v ?? 0));
  }

  /** Function entry: breakpoints before the fentry site, ftrace, then breakpoints in the body. */
  private enter(x: Call): void {
    const { fn, regs, task, callSite } = x;
    const offs = this.bpOffsets.size ? this.bpOffsets.get(fn.id) : undefined;
    if (offs) for (const o of offs) if (o < fn.fentryOffset) this.hitBreakpoint(x, o);
    if (this.fentryPatched[fn.id]) {
      const ip = fn.addr + BigInt(fn.fentryOffset);
      regs.ip = ip;
      this.fentry(ip, callSite, regs, task, fn);
    }
    if (offs) for (const o of offs) if (o >= fn.fentryOffset) this.hitBreakpoint(x, o);
    regs.ip = fn.addr;
  }

  private hitBreakpoint(x: Call, offset: number): void {
    const addr = x.fn.addr + BigInt(offset);
    const h = this.breakpoints.get(addr);
    if (!h) return;
    x.regs.ip = addr;
    h(addr, x.regs, x.task);
  }

  /** Return: %ax set, then follow the return slot through trampolines to the caller. */
  private leave(x: Call, result: Value | number | void, savedSp: bigint): Value {
    const ax = typeof result === 'bigint' && result >= 0n && result <= U64_MAX ? result : BigInt.asUintN(64, BigInt(result ?? 0));
    const { regs, task } = x;
    regs.ax = ax;
    const slot = regs.sp;
    let addr = this.deps.kernelMemory.readU64(slot) ?? 0n;
    // After `ret`, sp is above the slot: trampolines see the caller's stack.
    regs.sp = slot + 8n;
    // A slot that still holds the call site was left alone by every hook (no trampoline sits at a call site).
    if (addr !== x.callSite) {
      for (let hops = 0; hops < 64; hops++) {
        const t = this.trampolines.get(addr);
        if (!t) break;
        regs.ip = addr;
        addr = t(regs, task);
      }
    }
    unwind(x, savedSp);
    if (addr !== x.callSite) this.corruptions++;
    return ax;
  }
}

const U64_MAX = (1n << 64n) - 1n;

/** Pops `x` off its task's frames (wherever it is: a tail call may have left it), and restores the stack pointer. */
function unwind(x: Call, savedSp: bigint): void {
  const frames = x.task.frames;
  if (frames[frames.length - 1] === x) frames.pop();
  else {
    const i = frames.lastIndexOf(x);
    if (i >= 0) frames.splice(i, 1);
  }
  x.task.sp = savedSp;
}

function toValues(args: readonly (Value | number)[]): Value[] {
  const out = new Array<Value>(args.length);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    out[i] = typeof a === 'bigint' ? (a >= 0n && a <= U64_MAX ? a : BigInt.asUintN(64, a)) : BigInt.asUintN(64, BigInt(a));
  }
  return out;
}
