/**
 * What the kernel does not show about its return hooks, the emulator does
 * (`tracefs-emu stats`): per backend, the shadow stacks fgraph gave tasks
 * and how much of them is in use, the rethook pools (allocated / in use /
 * missed), the hits and misses of every fprobe, kretprobe and kprobe, and the
 * functions whose return is hooked by more than one mechanism at once — the
 * double hooking fprobe's move to fgraph (6.14) removed.
 */
import type { Kernel } from '../kernel/kernel.js';
import type { Task } from '../kernel/task.js';
import type { Fprobe } from './fprobe.js';
import { FprobeRethook } from './fprobe_rethook.js';
import type { Ftrace } from './ftrace.js';
import { hashContains } from './ftrace_hash.js';
import { AggrKprobe } from './kprobe.js';
import { SHADOW_STACK_SIZE } from './shadow_stack.js';

export interface TaskStackUsage {
  pid: number;
  comm: string;
  /** Bytes of the 4096 holding frames and data now. */
  bytesInUse: number;
  /** Traced calls the task is inside now. */
  depth: number;
  /** Calls lost to a full stack. */
  overrun: number;
}

export interface RethookPoolStats {
  owner: string;
  nodeSize: number;
  allocated: number;
  inUse: number;
  missed: number;
  bytes: number;
}

export interface ProbeStats {
  name: string;
  /** Where its return hook lives: fgraph, rethook, or none (entry only). */
  backend: 'fgraph' | 'rethook' | 'ftrace' | 'int3';
  functions: number;
  hits: number;
  exits?: number;
  missed: number;
  disabled: boolean;
  maxactive?: number;
}

export interface DoubleHook {
  function: string;
  /** One entry per return-address replacement a call of it gets: `fgraph(users)`, `rethook:OWNER`. */
  hooks: string[];
}

export interface HookStats {
  series: string;
  fgraph: {
    /** fgraph_ops registered (of 16). */
    users: string[];
    tasksWithStack: number;
    bytesAllocated: number;
    bytesInUse: number;
    overruns: number;
    /** Tasks using their stack now, most first. */
    perTask: TaskStackUsage[];
  };
  rethook: {
    pools: RethookPoolStats[];
    allocated: number;
    inUse: number;
    missed: number;
    bytes: number;
    /** Calls whose return slot a hook replaced after another hook had (fgraph or rethook): hooked twice. */
    stackedHooks: number;
  };
  fprobes: ProbeStats[];
  kretprobes: ProbeStats[];
  kprobes: ProbeStats[];
  doubleHooked: DoubleHook[];
}

function allTasks(kernel: Kernel): Task[] {
  return [...kernel.tasks.idle, ...kernel.tasks.all()];
}

function fprobeName(fp: Fprobe, i: number): string {
  return fp.name ?? `fprobe#${i}(${fp.functions[0]?.name ?? '?'}${fp.functions.length > 1 ? ',…' : ''})`;
}

export function collectHookStats(ftrace: Ftrace, opts: { perTaskLimit?: number } = {}): HookStats {
  const { kernel, fgraph, kprobes, rethooks: core, fprobeBackend } = ftrace;
  const rethookFprobes = fprobeBackend instanceof FprobeRethook ? fprobeBackend : undefined;

  // ---- fgraph shadow stacks
  const users: string[] = [];
  for (let i = 0; i < 16; i++) {
    const g = fgraph.ops(i);
    if (g) users.push(`${i}:${g.entrySym}/${g.retSym}`);
  }
  let withStack = 0;
  let inUse = 0;
  let overruns = 0;
  const perTask: TaskStackUsage[] = [];
  for (const t of allTasks(kernel)) {
    const st = ftrace.tasks.peek(t);
    if (!st?.retStack) continue;
    withStack++;
    overruns += st.traceOverrun;
    const bytes = st.currRetStack * 8;
    inUse += bytes;
    if (bytes) perTask.push({ pid: t.pid, comm: t.comm, bytesInUse: bytes, depth: st.currRetDepth + 1, overrun: st.traceOverrun });
  }
  perTask.sort((a, b) => b.bytesInUse - a.bytesInUse || a.pid - b.pid);
  if (opts.perTaskLimit !== undefined) perTask.length = Math.min(perTask.length, opts.perTaskLimit);

  // ---- rethook pools
  const pools: RethookPoolStats[] = [...core.live].map((rh) => ({
    owner: rh.owner,
    nodeSize: rh.size,
    allocated: rh.allocated,
    inUse: rh.inUse,
    missed: rh.misses,
    bytes: rh.bytes,
  }));
  const sum = (k: keyof RethookPoolStats) => pools.reduce((s, p) => s + (p[k] as number), 0);

  // ---- probes
  const fps = [...ftrace.fprobes];
  const fprobes: ProbeStats[] = fps.map((fp, i) => ({
    name: fprobeName(fp, i),
    backend: fp.exit ? kernel.profile.fprobeBackend : 'ftrace',
    functions: fp.functions.length,
    hits: fp.nhit,
    exits: fp.nexit,
    missed: fp.nmissed,
    disabled: fp.disabled,
    ...(rethookFprobes && fp.exit ? { maxactive: rethookFprobes.registration(fp)?.rethook?.allocated } : {}),
  }));
  const kretprobes: ProbeStats[] = [...kprobes.kretprobes].map((rp) => ({
    name: rp.name ?? rp.kp.symbol ?? `0x${rp.kp.addr.toString(16)}`,
    backend: 'rethook',
    functions: 1,
    hits: rp.kp.nhit,
    exits: rp.nhit,
    missed: rp.nmissed + rp.kp.nmissed,
    disabled: rp.kp.disabled,
    maxactive: rp.maxactive,
  }));
  const kps: ProbeStats[] = [];
  for (const s of kprobes.slots()) {
    for (const p of s instanceof AggrKprobe ? s.list : [s]) {
      if (p.kretprobe) continue;
      kps.push({ name: p.name ?? `${p.symbol ?? ''}+${p.offset}`, backend: p.ftrace ? 'ftrace' : 'int3', functions: 1, hits: p.nhit, missed: p.nmissed, disabled: p.disabled });
    }
  }

  // ---- functions whose return is hooked more than once
  const hooks = new Map<number, string[]>();
  const add = (id: number, h: string) => {
    const l = hooks.get(id);
    if (l) l.push(h);
    else hooks.set(id, [h]);
  };
  if (fgraph.active) {
    const { records } = ftrace;
    for (let r = 0; r < records.count; r++) {
      const id = records.fns[r].id;
      if (!hashContains(fgraph.graphOps.funcHash, id)) continue;
      const who: string[] = [];
      for (let i = 0; i < 16; i++) {
        const g = fgraph.ops(i);
        if (g && hashContains(g.ops.funcHash, id)) who.push(g.retSym);
      }
      if (who.length) add(id, `fgraph(${who.join(',')})`);
    }
  }
  for (const rp of kprobes.kretprobes) {
    if (rp.kp.disabled || !rp.kp.fn) continue;
    add(rp.kp.fn.id, `rethook:kretprobe:${rp.name ?? rp.kp.fn.name}`);
  }
  if (rethookFprobes) {
    fps.forEach((fp, i) => {
      if (!fp.exit || fp.disabled) return;
      for (const f of fp.functions) add(f.id, `rethook:fprobe:${fprobeName(fp, i)}`);
    });
  }
  const doubleHooked: DoubleHook[] = [];
  for (const [id, l] of hooks) {
    if (l.length > 1) doubleHooked.push({ function: kernel.symbols.functions[id].name, hooks: l });
  }
  doubleHooked.sort((a, b) => a.function.localeCompare(b.function));

  return {
    series: kernel.series,
    fgraph: {
      users,
      tasksWithStack: withStack,
      bytesAllocated: withStack * SHADOW_STACK_SIZE,
      bytesInUse: inUse,
      overruns,
      perTask,
    },
    rethook: {
      pools,
      allocated: sum('allocated'),
      inUse: sum('inUse'),
      missed: sum('missed'),
      bytes: sum('bytes'),
      stackedHooks: core.stackedHooks,
    },
    fprobes,
    kretprobes,
    kprobes: kps,
    doubleHooked,
  };
}

/** The text `tracefs-emu stats` prints. */
export function formatHookStats(s: HookStats): string {
  const out: string[] = [];
  out.push(`kernel ${s.series}`);
  out.push('');
  out.push(`fgraph: ${s.fgraph.users.length}/16 users${s.fgraph.users.length ? ' (' + s.fgraph.users.join(' ') + ')' : ''}`);
  out.push(`  shadow stacks: ${s.fgraph.tasksWithStack} tasks, ${s.fgraph.bytesAllocated} bytes allocated, ${s.fgraph.bytesInUse} in use, ${s.fgraph.overruns} overruns`);
  for (const t of s.fgraph.perTask) out.push(`    ${t.comm}-${t.pid}: ${t.bytesInUse} bytes, depth ${t.depth}${t.overrun ? `, ${t.overrun} overruns` : ''}`);
  out.push(`rethook: ${s.rethook.pools.length} pools, ${s.rethook.allocated} nodes allocated, ${s.rethook.inUse} in use, ${s.rethook.missed} missed, ${s.rethook.bytes} bytes`);
  out.push(`calls hooked twice so far: ${s.rethook.stackedHooks}`);
  for (const p of s.rethook.pools) out.push(`    ${p.owner}: ${p.allocated} x ${p.nodeSize} bytes, ${p.inUse} in use, ${p.missed} missed`);
  const table = (title: string, rows: ProbeStats[]) => {
    out.push(`${title}: ${rows.length}`);
    for (const r of rows) {
      let l = `    ${r.name} [${r.backend}] ${r.functions} fn, ${r.hits} hits`;
      if (r.exits !== undefined) l += `, ${r.exits} exits`;
      l += `, ${r.missed} missed`;
      if (r.maxactive !== undefined) l += `, maxactive ${r.maxactive}`;
      if (r.disabled) l += ', disabled';
      out.push(l);
    }
  };
  table('fprobes', s.fprobes);
  table('kretprobes', s.kretprobes);
  table('kprobes', s.kprobes);
  out.push(`return hooked more than once: ${s.doubleHooked.length} functions`);
  for (const d of s.doubleHooked) out.push(`    ${d.function}: ${d.hooks.join(' + ')}`);
  return out.join('\n');
}
