/** Helpers for the emulated kernel's tests: an emulator with kernel paths on, and recorders of calls and events. */
import { HostDriver, type HostOptions } from '../../src/host/driver.js';
import { FakeProcSource } from '../../src/host/proc_source.js';
import type { ExecContext } from '../../src/kernel/context.js';
import type { PtRegs } from '../../src/kernel/regs.js';
import type { Task } from '../../src/kernel/task.js';
import type { EmulatorOptions } from '../../src/index.js';
import type { Kernel } from '../../src/kernel/kernel.js';
import { testEmulator } from './emulator.js';

/** An emulator whose callers are processes of a scripted /proc (`proc`), mirrored by a host driver (`host`, not started). */
export function kernelEmu(opts: EmulatorOptions = {}, hostOpts: Omit<HostOptions, 'proc'> = {}) {
  const proc = new FakeProcSource();
  let host!: HostDriver;
  const e = testEmulator({ callPaths: true, seed: 7, ...opts, callers: (kernel) => (host = new HostDriver(kernel, { ...hostOpts, proc })).taskOf });
  return { ...e, k: e.kernel, proc, host };
}

export interface CallRec {
  name: string;
  depth: number;
  pid: number;
  regs: PtRegs;
  parent: bigint;
  /** The return address at entry ($stack0). */
  ret: bigint;
}

/** Hooks every traceable function (or those named) and records each entry. */
export function recordCalls(k: Kernel, only?: (name: string) => boolean): CallRec[] {
  const out: CallRec[] = [];
  const exec = k.exec;
  for (const f of k.symbols.traceable()) if (!only || only(f.name)) exec.patchFentry(f.id, true);
  exec.fentry = (ip: bigint, parent: bigint, regs: PtRegs, task: Task) => {
    const f = k.symbols.lookup(ip)!;
    out.push({ name: f.sym.name, depth: task.frames.length, pid: task.pid, regs, parent, ret: k.kernelMemory.readU64(regs.sp)! });
  };
  return out;
}

export function unhook(k: Kernel): void {
  k.exec.fentryPatched.fill(0);
}

export interface EvRec {
  name: string;
  ctx: ExecContext;
  args: Record<string, unknown>;
  comm: string;
  pid: number;
  cpu: number;
}

/** Attaches a probe to each tracepoint named and records what fires. */
export function recordEvents(k: Kernel, names: string[]): EvRec[] {
  const out: EvRec[] = [];
  for (const n of names) {
    k.tracepoints.register(n, ((ctx: ExecContext, args: Record<string, unknown>) =>
      out.push({ name: n, ctx: { ...ctx }, args, comm: ctx.task.comm, pid: ctx.task.pid, cpu: ctx.cpu })) as never);
  }
  return out;
}

/** Whether `want` appears in `seq` in order (not necessarily adjacent). */
export function inOrder(seq: readonly string[], want: readonly string[]): boolean {
  let i = 0;
  for (const s of seq) if (s === want[i]) i++;
  return i === want.length;
}

export const SCHED_EVENTS = ['sched_switch', 'sched_waking', 'sched_wakeup', 'sched_wakeup_new', 'sched_process_fork', 'sched_process_exec', 'sched_process_exit', 'sched_process_free', 'sched_process_wait'];
