/**
 * The trigger benchmark, modelled on the kernel's BPF trigger bench
 * (tools/testing/selftests/bpf/benchs/bench_trigger.c): a driver
 * (bpf_prog_test_run_raw_tp) calls a trivial leaf (bpf_get_numa_node_id)
 * 100 times per iteration; after a warm-up, hits are counted over a
 * measured window. `base` counts the calls themselves (kernel-count);
 * the others count the attached handler's runs: kprobe (kprobe_ftrace_handler),
 * kprobe-multi (fprobe entry), kretprobe (rethook), kretprobe-multi (fprobe
 * exit: fgraph on 7.2, rethook on 6.12), and the -all variants, where an
 * empty fprobe also sits on every function matching a wide glob.
 */
import { Fprobe, registerFprobe } from '../src/ftrace/fprobe.js';
import { Ftrace } from '../src/ftrace/ftrace.js';
import { Kprobe } from '../src/ftrace/kprobe.js';
import { Kretprobe } from '../src/ftrace/kretprobes.js';
import type { Call } from '../src/kernel/executor.js';
import { Kernel } from '../src/kernel/kernel.js';
import type { Series } from '../src/kernel/series.js';
import { Task } from '../src/kernel/task.js';
import { now } from './table.js';

export const TRIGGER_VARIANTS = ['base', 'kprobe', 'kprobe-multi', 'kprobe-multi-all', 'kretprobe', 'kretprobe-multi', 'kretprobe-multi-all'] as const;
export type TriggerVariant = (typeof TRIGGER_VARIANTS)[number];

export interface TriggerOptions {
  warmupMs: number;
  durationMs: number;
  /** The -all variants' glob. */
  allGlob: string;
  batch: number;
}

export interface TriggerResult {
  series: Series;
  variant: TriggerVariant;
  /** Millions of hits per second of the process's CPU time (the machine may be shared). */
  mhits: number;
  /** Millions of hits per second of wall-clock time. */
  mhitsWall: number;
  /** Functions the -all fprobe covers. */
  allFunctions?: number;
  missed: number;
}

const DRIVER = 'bpf_prog_test_run_raw_tp';
const LEAF = 'bpf_get_numa_node_id';

export function runTrigger(series: Series, variant: TriggerVariant, o: TriggerOptions): TriggerResult {
  const kernel = new Kernel({ series, cpus: 2 });
  const ftrace = new Ftrace(kernel);
  const exec = ftrace.exec;
  const task = kernel.tasks.add(new Task(1000, 1000, 'bench', 1));
  task.sp = 0xffffc90000400000n;
  const leaf = kernel.symbols.byName(LEAF)[0];
  const driver = kernel.symbols.byName(DRIVER)[0];
  let hits = 0;
  let missed = () => 0;
  let allFunctions: number | undefined;
  const count = () => void hits++;
  switch (variant) {
    case 'base':
      break;
    case 'kprobe': {
      const p = new Kprobe({ symbol: LEAF, pre: count });
      ftrace.kprobes.register(p);
      missed = () => p.nmissed;
      break;
    }
    case 'kretprobe': {
      const rp = new Kretprobe({ symbol: LEAF, handler: count });
      ftrace.kprobes.registerKretprobe(rp);
      missed = () => rp.nmissed;
      break;
    }
    case 'kprobe-multi':
    case 'kprobe-multi-all':
    case 'kretprobe-multi':
    case 'kretprobe-multi-all': {
      const ret = variant.startsWith('kretprobe');
      const fp = new Fprobe(ret ? { exit: count } : { entry: count });
      registerFprobe(ftrace, fp, [LEAF]);
      missed = () => fp.nmissed;
      if (variant.endsWith('-all')) {
        const all = new Fprobe(ret ? { exit: () => {} } : { entry: () => {} });
        registerFprobe(ftrace, all, o.allGlob);
        allFunctions = all.functions.length;
      }
      break;
    }
  }
  const batch = o.batch;
  const body = (x: Call) => {
    for (let i = 0; i < batch; i++) x.call(leaf);
    if (variant === 'base') hits += batch;
    return 0;
  };
  const iterate = (ms: number) => {
    const end = now() + ms;
    let n = 0;
    do {
      exec.call(task, driver, [], body);
      n++;
    } while ((n & 7) !== 0 || now() < end);
  };
  iterate(o.warmupMs);
  hits = 0;
  const t0 = now();
  const c0 = process.cpuUsage();
  iterate(o.durationMs);
  const c = process.cpuUsage(c0);
  const cpuSecs = (c.user + c.system) / 1e6;
  const secs = (now() - t0) / 1000;
  if (exec.corruptions) throw new Error(`trigger ${series} ${variant}: ${exec.corruptions} corrupted returns`);
  return { series, variant, mhits: hits / cpuSecs / 1e6, mhitsWall: hits / secs / 1e6, allFunctions, missed: missed() };
}
