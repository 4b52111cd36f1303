/**
 * A deterministic sample of the kernel's traceable functions, grouped by
 * subsystem, that the background activity runs as work items so that the
 * function tracer sees the breadth of a real kernel (`*sched*`, `*lock*`,
 * `*rcu*`, `*spin*` all match something running). Each sampled function
 * calls a few of its real callees (from the call-site data), two levels deep.
 */
import type { CallSites } from './call_sites.js';
import type { PathNode } from './call_paths.js';
import type { Rng } from './rng.js';
import type { KernelFunction, SymbolTable } from './symbols.js';

/** Subsystems by the words their function names carry. */
const SUBSYSTEMS: readonly [string, RegExp][] = [
  ['sched', /sched|_rq_|^rq_|enqueue|dequeue|pick_next|vruntime|wake_up|cpufreq/],
  ['rcu', /rcu/],
  ['spin', /spin/],
  ['lock', /lock|mutex|_sem|rwsem/],
  ['timer', /timer|hrtimer|tick|jiffies|clock|ktime/],
  ['mm', /^(mm_|vm|page|folio|pte_|pmd_|alloc_pages|free_pages|lru|mem_cgroup|kmem|slab|kmalloc|kfree|vma_)/],
  ['fs', /^(vfs_|dput|dentry|d_|inode|iput|generic_file|filemap|path_|seq_|kernfs|sysfs|fsnotify|file_|__fput)/],
  ['irq', /irq|softirq|tasklet/],
  ['work', /work|kthread/],
  ['signal', /signal|sig_|ptrace/],
  ['net', /^(sock|skb|tcp|udp|net|ip_|inet|dev_)/],
  ['block', /^(blk|bio|submit_bio|elv|scsi)/],
  ['security', /^(security_|apparmor|selinux|bpf_lsm|cap_)/],
  ['trace', /^(trace_|ftrace|ring_buffer|perf_)/],
];

const PER_SUBSYSTEM = 48;

export class FunctionSampler {
  private pools?: KernelFunction[][];
  private readonly trees = new Map<number, PathNode>();

  constructor(
    private readonly symbols: SymbolTable,
    private readonly calls: CallSites,
    private readonly rng: Rng,
  ) {}

  private build(): KernelFunction[][] {
    const all: KernelFunction[][] = SUBSYSTEMS.map(() => []);
    for (const f of this.symbols.traceable()) {
      if (f.module) continue;
      for (let i = 0; i < SUBSYSTEMS.length; i++) {
        if (SUBSYSTEMS[i]![1].test(f.name)) {
          all[i]!.push(f);
          break;
        }
      }
    }
    // A fixed sample per subsystem: the same functions for the same seed.
    return all.map((l) => {
      const out: KernelFunction[] = [];
      const pool = l.slice();
      for (let i = 0; i < PER_SUBSYSTEM && pool.length; i++) out.push(pool.splice(this.rng.int(pool.length), 1)[0]!);
      return out;
    });
  }

  /** The next sampled function, as a call tree of its real callees. */
  next(): PathNode | undefined {
    const pools = (this.pools ??= this.build()).filter((p) => p.length);
    if (!pools.length) return undefined;
    const f = this.rng.pick(this.rng.pick(pools));
    let t = this.trees.get(f.id);
    if (!t) {
      t = this.tree(f, 2);
      this.trees.set(f.id, t);
    }
    return t;
  }

  private tree(f: KernelFunction, depth: number): PathNode {
    const kids: PathNode[] = [];
    if (depth > 0) {
      const seen = new Set<number>();
      for (const c of this.calls.callsFrom(f)) {
        if (kids.length >= 4) break;
        if (!c.callee.traceable || seen.has(c.callee.id) || c.callee.id === f.id) continue;
        seen.add(c.callee.id);
        kids.push(this.tree(c.callee, depth - 1));
      }
    }
    return { name: f.name, kids, rep: 1, chain: false };
  }
}
