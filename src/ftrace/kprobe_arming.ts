/**
 * How a registered kprobe is made to fire (kernel/kprobes.c arm_kprobe(),
 * arch/x86/kernel/kprobes/{ftrace,core,opt}.c): on a function's __fentry__
 * site through ftrace (KPROBES_ON_FTRACE: one shared kprobe ftrace_ops,
 * `kprobe_ftrace_handler`, with SAVE_REGS — and IPMODIFY for probes with a
 * post handler); elsewhere through an int3 breakpoint of the executor,
 * replaced by a jump once the optimizer has run ([OPTIMIZED]).
 */
import type { PtRegs } from '../kernel/regs.js';
import type { KernelFunction } from '../kernel/symbols.js';
import type { Task } from '../kernel/task.js';
import type { Ftrace } from './ftrace.js';
import { FTRACE_OPS_FL_IPMODIFY, FTRACE_OPS_FL_SAVE_REGS, FtraceOps } from './ftrace_ops.js';
import { AggrKprobe, KPROBE_FLAG_DISABLED, KPROBE_FLAG_FTRACE, KPROBE_FLAG_GONE, KPROBE_FLAG_OPTIMIZED, type KprobeSlot } from './kprobe.js';
import { ftraceTestRecursionTrylock, ftraceTestRecursionUnlock } from './recursion.js';

/** The int3 a probe puts on its address: pre handlers see regs->ip just past it. */
export const INT3_INSN_SIZE = 1n;
const MCOUNT_INSN_SIZE = 5n;
/** JMP32_INSN_SIZE: an optimized probe replaces this many bytes with a jump. */
const JMP32_INSN_SIZE = 5;
/** OPTIMIZE_DELAY: the optimizer runs 5 jiffies (HZ=250) after a probe is armed. */
const OPTIMIZE_DELAY_NS = 5 * 4_000_000;

/** What an armed probe's hit goes to: the kprobe table and the handlers of a slot. */
export interface KprobeHits {
  get(addr: bigint): KprobeSlot | undefined;
  /** Runs the handlers of `s`, hit at `addr`; `afterIp` is regs.ip once the probed instruction has run. */
  hit(s: KprobeSlot, addr: bigint, regs: PtRegs, task: Task, afterIp: bigint): void;
}

function slotHasPost(s: KprobeSlot): boolean {
  return s instanceof AggrKprobe ? s.hasPost : !!s.post;
}

/** The arming of one kernel's kprobes: the shared kprobe ftrace ops, the breakpoints, the optimizer. */
export class KprobeArming {
  private readonly ftraceOps: FtraceOps;
  private readonly ipmodifyOps: FtraceOps;
  private ftraceEnabled = 0;
  private ipmodifyEnabled = 0;

  constructor(
    private readonly ftrace: Ftrace,
    private readonly hits: KprobeHits,
  ) {
    const func: FtraceOps['func'] = (ip, _parentIp, _op, regs, task) => this.ftraceHandler(ip, regs, task);
    this.ftraceOps = new FtraceOps({ func, funcSym: 'kprobe_ftrace_handler', flags: FTRACE_OPS_FL_SAVE_REGS });
    this.ipmodifyOps = new FtraceOps({ func, funcSym: 'kprobe_ftrace_handler', flags: FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY });
  }

  /** arm_kprobe(): ftrace ops filter or breakpoint, then jump optimization. */
  arm(s: KprobeSlot): void {
    const fn = s instanceof AggrKprobe ? s.fn : s.fn!;
    if (s.flags & KPROBE_FLAG_FTRACE) {
      this.armFtrace(fn, slotHasPost(s));
      return;
    }
    this.ftrace.exec.setBreakpoint(fn, s.fnOffset, (addr, regs, task) => this.int3Handler(addr, regs, task));
    this.optimize(s);
  }

  /** disarm_kprobe(). */
  disarm(s: KprobeSlot): void {
    const fn = s instanceof AggrKprobe ? s.fn : s.fn!;
    if (s.flags & KPROBE_FLAG_FTRACE) {
      this.disarmFtrace(fn, slotHasPost(s));
      return;
    }
    this.unoptimize(s);
    this.ftrace.exec.clearBreakpoint(fn, s.fnOffset);
  }

  /** The ops armed ftrace kprobes of this kind share. */
  private opsFor(ipmodify: boolean): FtraceOps {
    return ipmodify ? this.ipmodifyOps : this.ftraceOps;
  }

  /** __arm_kprobe_ftrace(): the ip joins the shared ops' filter; the ops registers with its first ip. */
  private armFtrace(fn: KernelFunction, ipmodify: boolean): void {
    const ops = this.opsFor(ipmodify);
    const ftrace = this.ftrace;
    ftrace.setFilterIds(ops, [fn.id]);
    const cnt = ipmodify ? this.ipmodifyEnabled : this.ftraceEnabled;
    if (cnt === 0) {
      try {
        ftrace.register(ops);
      } catch (e) {
        ftrace.setFilterIds(ops, [fn.id], { remove: true });
        throw e;
      }
    }
    if (ipmodify) this.ipmodifyEnabled++;
    else this.ftraceEnabled++;
  }

  private disarmFtrace(fn: KernelFunction, ipmodify: boolean): void {
    const ops = this.opsFor(ipmodify);
    const cnt = ipmodify ? this.ipmodifyEnabled : this.ftraceEnabled;
    if (cnt === 1) this.ftrace.unregister(ops);
    if (ipmodify) this.ipmodifyEnabled--;
    else this.ftraceEnabled--;
    this.ftrace.setFilterIds(ops, [fn.id], { remove: true });
  }

  /**
   * optimize_kprobe(): an armed int3 probe without post handlers is marked
   * OPTIMIZED and queued for the optimizer (kprobes/list shows it at once),
   * which replaces int3 with a jump 5 jiffies later (if the function has
   * room for one). Until then hits come through int3.
   */
  optimize(s: KprobeSlot): void {
    if (s.flags & (KPROBE_FLAG_FTRACE | KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE | KPROBE_FLAG_OPTIMIZED)) return;
    if (slotHasPost(s)) return;
    const fn = s instanceof AggrKprobe ? s.fn : s.fn!;
    if (s.fnOffset + JMP32_INSN_SIZE > fn.size) return;
    s.flags |= KPROBE_FLAG_OPTIMIZED;
    s.optimizeAt = this.ftrace.kernel.clock.now() + OPTIMIZE_DELAY_NS;
  }

  unoptimize(s: KprobeSlot): void {
    s.flags &= ~KPROBE_FLAG_OPTIMIZED;
    s.optimizeAt = -1;
  }

  /** kprobe_optimizer(): a queued probe whose delay has passed has its jump now. */
  settle(s: KprobeSlot): void {
    if (s.optimizeAt >= 0 && this.ftrace.kernel.clock.now() >= s.optimizeAt) s.optimizeAt = -1;
  }

  /** kprobe_ftrace_handler(): the probe on this __fentry__ site, with regs->ip as after an int3. */
  private ftraceHandler(ip: bigint, regs: PtRegs, task: Task): void {
    const bit = ftraceTestRecursionTrylock(this.ftrace.tasks, task);
    if (bit < 0) return;
    // The events this handler records drop the depth it adds (trace_event_buffer_reserve()).
    task.preemptCount--;
    try {
      const s = this.hits.get(ip);
      if (!s || s.disabled) return;
      this.hits.hit(s, ip, regs, task, ip + MCOUNT_INSN_SIZE);
    } finally {
      task.preemptCount++;
      ftraceTestRecursionUnlock(this.ftrace.tasks, task, bit);
    }
  }

  /** kprobe_int3_handler() (or the optprobe trampoline once optimized). */
  private int3Handler(addr: bigint, regs: PtRegs, task: Task): void {
    const s = this.hits.get(addr);
    if (!s || s.disabled) return;
    this.settle(s);
    this.hits.hit(s, addr, regs, task, addr + INT3_INSN_SIZE);
  }
}
