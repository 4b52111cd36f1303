/**
 * Loadable modules (struct module): what a module brings into the kernel —
 * its symbols (kallsyms with `[module]`, traceable functions), its trace
 * printk formats — and the kernel's list of loaded ones with their
 * notifier chain (MODULE_STATE_COMING / LIVE / GOING), which the subsystems
 * above follow as the kernel's follow theirs (ftrace records and `:mod:`
 * filters, probes waiting for a module, events).
 *
 * A module's definition is data (`sample_modules.ts`). Its symbols are part
 * of the symbol data from the start (`withLoadableModules`), so their
 * function ids and ftrace records never move; the kernel's view of kallsyms
 * shows them only while the module is loaded.
 */
import type { Btf } from './btf.js';
import type { ModuleBtfDef } from './btf_encode.js';
import type { Clock } from './clock.js';
import type { ExecContext } from './context.js';
import { HARDIRQ_OFFSET, SOFTIRQ_OFFSET } from './cpu.js';
import { fail } from './errno.js';
import type { KernelFeature } from './features.js';
import type { KernelMemory } from './kmem.js';
import type { PreemptIrq } from './preempt_irq.js';
import type { ModuleInfo, SymbolColumns } from './symbol_data.js';
import type { TraceRemoteDef } from './remote_event.js';
import type { KallsymsTable } from './symbol_table.js';
import { Task } from './task.js';
import type { TaskTable } from './tasks.js';

export interface ModuleSymbolDef {
  name: string;
  /** kallsyms type letter (t, T, d, D, b, r). */
  type: string;
  size: number;
  /** Has an __fentry__ call (listed in available_filter_functions). */
  traceable?: boolean;
}

/** A trace_printk() a module makes: the text it puts in the buffer. */
export interface ModulePrintk {
  text: string;
}

/** A call its init function makes: one of its functions, directly or as the irq_work it queues (hardirq context). */
export interface ModuleCall {
  /** The function the work runs in (the init itself is freed, so `init` names no symbol). */
  fn?: string;
  hardirq?: boolean;
  printk?: readonly ModulePrintk[];
}

/** A field of a module's event record, as its format file shows it. */
export interface ModuleEventField {
  type: string;
  name: string;
  offset: number;
  size: number;
  signed: boolean;
}

/** A TRACE_EVENT a module defines: its tracepoint and its record. */
export interface ModuleEventDef {
  system: string;
  name: string;
  fields: readonly ModuleEventField[];
  printFmt: string;
}

/** A tracepoint a module's code fires, with its arguments by field name. */
export interface ModuleFiring {
  event: string;
  args: Readonly<Record<string, string | number>>;
}

/**
 * A direct call a module attaches to a kernel function (register_ftrace_direct()):
 * its trampoline calls `fn`, which trace_printk()s what `print` names — the
 * task the function wakes (`wakee`), or its three first arguments (`args`).
 */
export interface ModuleDirectCall {
  target: string;
  fn: string;
  print: 'wakee' | 'args';
  /** The text before what it prints. */
  text: string;
}

/**
 * A timer its init arms over an object it allocates: `struct` (of its BTF)
 * with a `name`, the `timer` and a per-CPU int `counter`. Each second the
 * callback `fn(&obj->timer)` fires `event` with the name and this CPU's
 * count, then counts one more on this CPU.
 */
export interface ModuleTimerDef {
  fn: string;
  struct: string;
  name: string;
  event: string;
}

/**
 * What preemptirq_delay_test's init does and waits for: a kernel thread runs
 * `burst_size` sections (at most 10) with interrupts (`test_mode=irq`) or
 * preemption (`preempt`) off, or the two in turn (`alternate`), each a busy
 * wait of `delay` µs in `fn`, called from `caller`.
 */
export interface ModuleDelayTestDef {
  fn: string;
  caller: string;
}

export interface ModuleDef {
  /** The module's name as the kernel knows it (`trace_printk`; modprobe also takes `trace-printk`). */
  name: string;
  /** Built only with this feature (a Kconfig option Debian leaves off): else modprobe finds no such module. */
  feature?: KernelFeature;
  /** Its parameters and their defaults (module_param); others given at load are ignored, as the kernel does. */
  params?: Readonly<Record<string, string>>;
  /** Its init's timed sections. */
  delayTest?: ModuleDelayTestDef;
  /** Its text symbols then its data symbols, each in address order. */
  symbols: readonly ModuleSymbolDef[];
  /** The format strings of its trace_printk() calls (printk_formats). */
  printkFormats?: readonly string[];
  /** What its init function does, in order. */
  init?: readonly ModuleCall[];
  /** Its trace events (events/<system>/ while it is loaded). */
  events?: readonly ModuleEventDef[];
  /** The direct calls it attaches to kernel functions while loaded. */
  direct?: readonly ModuleDirectCall[];
  /** What its kernel thread does each second while the module is loaded. */
  thread?: { fn: string; fires: readonly ModuleFiring[] };
  /** The timer its init arms. */
  timer?: ModuleTimerDef;
  /** Its BTF (/sys/kernel/btf/<module>), split over vmlinux's. */
  btf?: ModuleBtfDef;
  /** The trace remote its init registers (trace_remote_register()). */
  traceRemote?: TraceRemoteDef;
  /** It has an init but no exit function: delete_module() refuses it (EBUSY) and /proc/modules says `[permanent]`. */
  permanent?: boolean;
}

/** What a module's code needs of the kernel it runs in. */
export interface ModuleHost {
  readonly symbols: KallsymsTable;
  readonly cpus: readonly { curr: Task }[];
  call<T>(task: Task, name: string, args?: readonly (bigint | number)[], work?: () => T): T | undefined;
  /** trace_printk(): where its text goes (the tracing layer's, when there is one). */
  tracePrintk?: (task: Task, ip: bigint, text: string) => void;
  readonly tracepoints: { fire(name: string, ctx: ExecContext, args: Readonly<Record<string, unknown>>): void };
  context(task: Task): ExecContext;
  readonly kmem: KernelMemory;
  /** alloc_percpu(): zeroed bytes on every CPU; the __percpu pointer. */
  allocPercpu(size: number): bigint;
  perCpuPtr(ptr: bigint, cpu: number): bigint;
  moduleTypes(module: string): Btf | undefined;
  readonly features: ReadonlySet<KernelFeature>;
  readonly preemptIrq: PreemptIrq;
  readonly tasks: TaskTable;
  readonly clock: Clock;
}

/** How often a module's kernel thread wakes and its timer fires (the sample's: once a second). */
const THREAD_PERIOD_MS = 1000;

/** A module's state, as the notifier chain reports it. */
export type ModuleState = 'coming' | 'live' | 'going';

export type ModuleNotifier = (mod: LoadedModule, state: ModuleState) => void;

export interface LoadedModule {
  readonly def: ModuleDef;
  /** Start of its text (its /proc/modules address). */
  readonly base: bigint;
  /** Core size in bytes (lsmod's Size). */
  readonly size: number;
  /** Who holds it (try_module_get()): rmmod is EBUSY while above 0. */
  refs: number;
  /** Its parameters' values (defaults, then what the load gave). */
  readonly params: Readonly<Record<string, string>>;
  /** Its kernel thread's wake-ups, while loaded. */
  thread?: ReturnType<typeof setInterval>;
  /** Its timer's object (at `obj`, its `timer` member at `timerAt`) and expiries, while loaded. */
  timer?: { obj: bigint; timerAt: bigint; counter: bigint; expiries: ReturnType<typeof setInterval> };
}

/** PID_MAX_LIMIT on 64-bit: no pid reaches it. */
const PID_MAX_LIMIT = 4194304;

/** Where loadable modules' text begins: above the modules the symbol data was taken with. */
const LOADABLE_BASE = 0xffffffffc0c00000n;
/** Address space each loadable module gets (text, then data at half of it). */
const LOADABLE_STRIDE = 0x10000n;
const DATA_OFFSET = 0x8000n;

const TEXT_TYPES = new Set(['t', 'T', 'w', 'W']);

function align16(n: number): number {
  return (n + 15) & ~15;
}

/** Module names as the kernel keeps them: `-` becomes `_`. */
export function moduleName(name: string): string {
  return name.replace(/-/g, '_');
}

function layout(def: ModuleDef, k: number): { base: bigint; addrs: bigint[]; text: number; data: number } {
  const base = LOADABLE_BASE + LOADABLE_STRIDE * BigInt(k);
  let text = 0;
  let data = 0;
  const addrs = def.symbols.map((s) => {
    if (TEXT_TYPES.has(s.type)) {
      const a = base + BigInt(text);
      text += align16(s.size);
      return a;
    }
    const a = base + DATA_OFFSET + BigInt(data);
    data += align16(s.size);
    return a;
  });
  return { base, addrs, text, data };
}

/**
 * Symbol data with loadable modules appended after the modules it was taken
 * with: each one's symbols, traceable functions after the others, and a
 * `loadable` ModuleInfo that keeps it hidden until a kernel loads it.
 */
export function withLoadableModules(cols: SymbolColumns, defs: readonly ModuleDef[]): SymbolColumns {
  const names = [...cols.names];
  const n0 = names.length;
  const extra = defs.reduce((s, d) => s + d.symbols.length, 0);
  const addrHi = new Uint32Array(n0 + extra);
  const addrLo = new Uint32Array(n0 + extra);
  const types = new Uint8Array(n0 + extra);
  const mods = new Uint8Array(n0 + extra);
  addrHi.set(cols.addrHi);
  addrLo.set(cols.addrLo);
  types.set(cols.types);
  mods.set(cols.mods);
  const modules: ModuleInfo[] = [...cols.modules];
  const traceable = [...cols.traceable];
  const fentry = [...cols.fentry];
  let i = n0;
  defs.forEach((def, k) => {
    const { base, addrs, text, data } = layout(def, k);
    modules.push({
      name: def.name,
      loadable: true,
      regions: [
        { kind: 'text', start: base, size: Math.max(text, 1) },
        { kind: 'data', start: base + DATA_OFFSET, size: Math.max(data, 1) },
      ],
    });
    def.symbols.forEach((s, j) => {
      names.push(s.name);
      addrHi[i] = Number(addrs[j]! >> 32n);
      addrLo[i] = Number(addrs[j]! & 0xffffffffn);
      types[i] = s.type.charCodeAt(0);
      mods[i] = modules.length;
      if (s.traceable) {
        traceable.push(i);
        fentry.push(4); // after the endbr64, as in the distribution's modules
      }
      i++;
    });
  });
  return { names, addrHi, addrLo, types, mods, modules, traceable: Uint32Array.from(traceable), fentry: Uint8Array.from(fentry) };
}

/** The kernel's list of modules (kernel/module/main.c): load, unload, and who follows them. */
export class Modules {
  /** Loaded modules, newest first (the order of /proc/modules). */
  private loadedList: LoadedModule[] = [];
  /** The notifier chain: told of every module coming, live and going. */
  readonly notifiers = new Set<ModuleNotifier>();
  /** Who may hold a module (an open file of one of its events): rmmod is EBUSY while one does. */
  readonly holders = new Set<(mod: LoadedModule) => boolean>();

  constructor(
    private readonly host: ModuleHost,
    private readonly defs: readonly ModuleDef[],
  ) {}

  private symbols(): KallsymsTable {
    return this.host.symbols;
  }

  /** The definition of a module this kernel can load (its symbol data holds it). */
  find(name: string): ModuleDef | undefined {
    const n = moduleName(name);
    if (!this.symbols().loadableModules().includes(n)) return undefined;
    const def = this.defs.find((d) => d.name === n);
    return def && (!def.feature || this.host.features.has(def.feature)) ? def : undefined;
  }

  get loaded(): readonly LoadedModule[] {
    return this.loadedList;
  }

  get(name: string): LoadedModule | undefined {
    const n = moduleName(name);
    return this.loadedList.find((m) => m.def.name === n);
  }

  /**
   * init_module(): ENOENT for a module this kernel has not, EEXIST when
   * loaded already. `params`: NAME=VALUE as modprobe passes them.
   */
  load(name: string, params: Readonly<Record<string, string>> = {}): LoadedModule {
    const def = this.find(name);
    if (!def) fail('ENOENT');
    if (this.get(def.name)) fail('EEXIST');
    const k = this.defs.indexOf(def);
    const { base, text, data } = layout(def, k);
    const values = { ...def.params };
    for (const [p, v] of Object.entries(params)) if (def.params && p in def.params) values[p] = v;
    const mod: LoadedModule = { def, base, size: align16(text) + align16(data) + 4096, refs: 0, params: values };
    this.symbols().setLoaded(def.name, true);
    this.loadedList = [mod, ...this.loadedList];
    this.notify(mod, 'coming');
    this.runInit(mod);
    if (def.delayTest) this.runDelayTest(mod, def.delayTest);
    this.notify(mod, 'live');
    if (def.thread) {
      mod.thread = setInterval(() => this.runThread(mod), THREAD_PERIOD_MS);
      mod.thread.unref();
    }
    if (def.timer) this.armTimer(mod, def.timer);
    return mod;
  }

  /** Its init's kzalloc() of the timer's object, alloc_percpu(int) of its counter, timer_setup() and mod_timer(). */
  private armTimer(mod: LoadedModule, t: ModuleTimerDef): void {
    const host = this.host;
    const st = host.moduleTypes(mod.def.name)?.struct(t.struct);
    if (!st) return; // without its BTF, no layout of the object
    const at = (member: string): bigint => BigInt((st.members.find((m) => m.name === member)?.bitOffset ?? 0) / 8);
    const obj = host.kmem.kmalloc(st.size);
    host.kmem.space.zero(obj, st.size);
    const counter = host.allocPercpu(4);
    host.kmem.space.writeU64(obj + at('name'), host.kmem.kstr(t.name));
    host.kmem.space.writeU64(obj + at('counter'), counter);
    const expiries = setInterval(() => this.runTimer(mod), THREAD_PERIOD_MS);
    expiries.unref();
    mod.timer = { obj, timerAt: obj + at('timer'), counter, expiries };
  }

  /** One expiry of a module's timer, in softirq context on CPU 0: its callback traces the count, then counts. */
  runTimer(mod: LoadedModule): void {
    const t = mod.def.timer;
    const timer = mod.timer;
    if (!t || !timer) return;
    const host = this.host;
    const task = host.cpus[0]!.curr;
    const mem = host.kmem.space;
    const count = () => host.perCpuPtr(timer.counter, task.cpu);
    task.preemptCount += SOFTIRQ_OFFSET;
    try {
      host.call(task, t.fn, [timer.timerAt], () => {
        host.tracepoints.fire(t.event, host.context(task), { name: t.name, count: (mem.readU32(count()) ?? 0) | 0 });
        mem.writeUint(count(), 4, ((mem.readU32(count()) ?? 0) + 1) >>> 0);
      });
    } finally {
      task.preemptCount -= SOFTIRQ_OFFSET;
    }
  }

  /** One wake-up of a module's kernel thread: its function runs and fires its tracepoints. */
  runThread(mod: LoadedModule): void {
    const t = mod.def.thread;
    if (!t) return;
    const host = this.host;
    const task = host.cpus[0]!.curr;
    host.call(task, t.fn, [], () => {
      for (const f of t.fires) host.tracepoints.fire(f.event, host.context(task), f.args);
    });
  }

  /** do_init_module(): its init runs in the loading task (the current one of CPU 0 here), its irq_work in hardirq context. */
  private runInit(mod: LoadedModule): void {
    const host = this.host;
    const task = host.cpus[0]!.curr;
    const initIp = mod.base + 0x4000n; // .init.text, after the core text
    for (const step of mod.def.init ?? []) {
      const ip = step.fn ? (host.symbols.lookupName(step.fn, mod.def.name)?.addr ?? initIp) : initIp;
      const work = () => {
        for (const p of step.printk ?? []) host.tracePrintk?.(task, ip, p.text);
      };
      if (step.hardirq) {
        task.preemptCount += HARDIRQ_OFFSET;
        task.irqsOff++;
      }
      try {
        if (step.fn) host.call(task, step.fn, [], work);
        else work();
      } finally {
        if (step.hardirq) {
          task.preemptCount -= HARDIRQ_OFFSET;
          task.irqsOff--;
        }
      }
    }
  }

  /**
   * preemptirq_delay_test's sections, one after the other, in a kernel
   * thread of its own (`<test_mode>_test`, on CPU `cpu_affinity` or 0):
   * interrupts or preemption off, a busy wait of `delay` µs, then back on;
   * the thread is stopped once they are done, and only then does the load
   * return (wait_for_completion()).
   */
  private runDelayTest(mod: LoadedModule, t: ModuleDelayTestDef): void {
    const host = this.host;
    const p = mod.params;
    // A pid no task has: from the top of pid_max down (the machine's processes get low ones first).
    let pid = PID_MAX_LIMIT - 1;
    while (host.tasks.get(pid)) pid--;
    const task = host.tasks.add(new Task(pid, pid, `${p.test_mode}_test`, 2, true));
    const cpu = Number(p.cpu_affinity);
    task.cpu = cpu >= 0 && cpu < host.cpus.length ? cpu : 0;
    try {
      this.delaySections(mod, t, task);
    } finally {
      task.exited = true;
      host.tasks.delete(pid);
    }
  }

  private delaySections(mod: LoadedModule, t: ModuleDelayTestDef, task: Task): void {
    const host = this.host;
    const p = mod.params;
    const delayUs = Math.max(0, Number(p.delay) || 0);
    const burst = Math.min(Math.max(Number(p.burst_size) || 0, 0), 10);
    const addr = (fn: string, off: bigint): bigint => (host.symbols.lookupName(fn, mod.def.name)?.addr ?? mod.base) + off;
    const ip = addr(t.fn, 0x2dn);
    const parent = host.symbols.lookupName(t.caller)?.addr ?? 0n;
    for (let i = 0; i < burst; i++) {
      const irq = p.test_mode === 'irq' || (p.test_mode === 'alternate' && i % 2 === 0);
      if (!irq && p.test_mode !== 'preempt' && p.test_mode !== 'alternate') continue;
      if (irq) host.preemptIrq.irqDisable(task, ip, parent);
      else host.preemptIrq.preemptDisable(task, ip, parent);
      this.busyWait(BigInt(Math.round(delayUs * 1000)));
      const end = ip + 0x40n;
      if (irq) host.preemptIrq.irqEnable(task, end, parent);
      else host.preemptIrq.preemptEnable(task, end, parent);
    }
  }

  /**
   * busy_wait(): spins until `ns` of the kernel's clock have passed. The
   * emulator spins too: a wait on the event loop would let the rest of the
   * kernel run meanwhile and stretch the section by however long that takes.
   */
  private busyWait(ns: bigint): void {
    const clock = this.host.clock;
    const end = clock.nowNs() + ns;
    while (clock.nowNs() < end);
  }

  /** delete_module(): ENOENT when not loaded, EBUSY while something holds it. */
  unload(name: string): void {
    const mod = this.get(name);
    if (!mod) fail('ENOENT');
    if (mod.def.permanent) fail('EBUSY');
    if (mod.refs > 0 || [...this.holders].some((h) => h(mod))) fail('EBUSY');
    clearInterval(mod.thread);
    if (mod.timer) {
      clearInterval(mod.timer.expiries);
      this.host.kmem.free(mod.timer.obj);
    }
    this.notify(mod, 'going');
    this.loadedList = this.loadedList.filter((m) => m !== mod);
    this.symbols().setLoaded(mod.def.name, false);
  }

  private notify(mod: LoadedModule, state: ModuleState): void {
    for (const n of this.notifiers) n(mod, state);
  }
}

/** /proc/modules (lsmod reads it): name, size, references, users, state, address. */
export function procModulesText(modules: Modules): string {
  return modules.loaded.map((m) => `${m.def.name} ${m.size} ${m.refs} ${m.def.permanent ? '[permanent],' : '-'} Live 0x${m.base.toString(16)}\n`).join('');
}
