/**
 * fprobe on 6.12: each fprobe is its own ftrace_ops (`fprobe_handler`, or
 * `fprobe_kprobe_handler` when shared with kprobes; SAVE_REGS, so handlers
 * get full pt_regs), and an fprobe with an exit handler hooks returns through
 * its own rethook pool of `nrMaxactive` nodes (default: functions x CPUs x 2)
 * carrying the entry ip and the entry data. A dry pool is a miss (the entry
 * handler does not run either).
 */
import { fail } from '../kernel/errno.js';
import type { PtRegs } from '../kernel/regs.js';
import type { KernelFunction } from '../kernel/symbols.js';
import type { Task } from '../kernel/task.js';
import { callFprobeEntry, callFprobeExit, type Fprobe, type FprobeBackend } from './fprobe.js';
import type { Ftrace } from './ftrace.js';
import { FTRACE_OPS_FL_DYNAMIC, FTRACE_OPS_FL_SAVE_REGS, FtraceOps } from './ftrace_ops.js';
import { ftraceTestRecursionTrylock, ftraceTestRecursionUnlock } from './recursion.js';
import { Rethook, RethookNode, RETHOOK_NODE_SIZE, type RethookCore } from './rethook.js';

/** struct fprobe_rethook_node: the rethook node, entry_ip, entry_parent_ip, then the entry data. */
const FPROBE_RETHOOK_NODE_SIZE = RETHOOK_NODE_SIZE + 16;

class FprobeRethookNode extends RethookNode {
  entryIp = 0n;
  entryParentIp = 0n;
  readonly data: Buffer;

  constructor(
    rh: Rethook<FprobeRethookNode>,
    readonly fp: Fprobe,
  ) {
    super(rh);
    this.data = Buffer.alloc(fp.entryDataSize);
  }
}

interface Registration {
  ops: FtraceOps;
  rethook: Rethook<FprobeRethookNode> | null;
}

export class FprobeRethook implements FprobeBackend {
  private readonly regs = new Map<Fprobe, Registration>();
  private readonly core: RethookCore;

  constructor(private readonly ftrace: Ftrace) {
    this.core = ftrace.rethooks;
  }

  /** The ftrace_ops and rethook of a registered fprobe. */
  registration(fp: Fprobe): Readonly<Registration> | undefined {
    return this.regs.get(fp);
  }

  /** register_fprobe_ips(): fprobe_init(), the filter, the rethook pool, register_ftrace_function(). */
  register(fp: Fprobe, fns: readonly KernelFunction[]): void {
    if (this.regs.has(fp)) fail('EBUSY');
    fp.nmissed = 0;
    const ops = new FtraceOps({
      func: (ip, parentIp, _op, regs, task) => this.handler(fp, rec, ip, parentIp, regs, task),
      funcSym: fp.kprobeShared ? 'fprobe_kprobe_handler' : 'fprobe_handler',
      flags: FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_DYNAMIC,
    });
    const rec: Registration = { ops, rethook: null };
    this.ftrace.setFilterIds(ops, fns.map((f) => f.id));
    if (fp.exit) {
      const num = fp.nrMaxactive ? fp.nrMaxactive : fns.length * this.ftrace.kernel.nrCpus * 2;
      if (num <= 0) fail('EINVAL');
      rec.rethook = new Rethook<FprobeRethookNode>(
        this.core,
        (node, ret, regs, task) => this.exitHandler(node, ret, regs, task),
        FPROBE_RETHOOK_NODE_SIZE + fp.entryDataSize,
        num,
        (rh) => new FprobeRethookNode(rh, fp),
        `fprobe:${fp.name ?? fns[0]?.name ?? '?'}`,
      );
    }
    try {
      this.ftrace.register(ops);
    } catch (e) {
      rec.rethook?.free();
      throw e;
    }
    this.regs.set(fp, rec);
  }

  /** unregister_fprobe(): stop the rethook, unregister the ops, free the pool. */
  unregister(fp: Fprobe): void {
    const rec = this.regs.get(fp);
    if (!rec) fail('EINVAL');
    rec.rethook?.stop();
    this.ftrace.unregister(rec.ops);
    rec.rethook?.free();
    this.regs.delete(fp);
  }

  /** fprobe_handler() / fprobe_kprobe_handler(). */
  private handler(fp: Fprobe, rec: Registration, ip: bigint, parentIp: bigint, regs: PtRegs, task: Task): void {
    if (fp.disabled) return;
    const bit = ftraceTestRecursionTrylock(this.ftrace.tasks, task);
    if (bit < 0) {
      fp.nmissed++;
      return;
    }
    // Events recorded from here drop the depth the lock adds (trace_event_buffer_reserve()).
    task.preemptCount--;
    try {
      let node: FprobeRethookNode | null = null;
      let data: Buffer | undefined;
      if (fp.exit) {
        node = rec.rethook?.tryGet() ?? null;
        if (!node) {
          fp.nmissed++;
          return;
        }
        node.entryIp = ip;
        node.entryParentIp = parentIp;
        node.hookedTask = task;
        if (fp.entryDataSize) data = node.data;
      }
      const ret = callFprobeEntry(this.ftrace, fp, ip, parentIp, regs, data, task);
      if (node) {
        if (ret) rec.rethook!.recycle(node);
        else rec.rethook!.hook(node, regs, task);
      }
    } finally {
      task.preemptCount++;
      ftraceTestRecursionUnlock(this.ftrace.tasks, task, bit);
    }
  }

  /** fprobe_exit_handler(): the real return address comes from rethook. */
  private exitHandler(node: FprobeRethookNode, ret: bigint, regs: PtRegs, task: Task): void {
    const fp = node.fp;
    if (fp.disabled) return;
    const bit = ftraceTestRecursionTrylock(this.ftrace.tasks, task);
    if (bit < 0) {
      fp.nmissed++;
      return;
    }
    try {
      callFprobeExit(this.ftrace, fp, node.entryIp, ret, regs, fp.entryDataSize ? node.data : undefined, task);
    } finally {
      ftraceTestRecursionUnlock(this.ftrace.tasks, task, bit);
    }
  }
}
