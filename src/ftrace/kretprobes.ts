/**
 * kretprobes (kernel/kprobes.c): a kprobe on a function's entry whose pre
 * handler takes an instance from the kretprobe's rethook pool and hooks the
 * return (or counts a miss when every instance is in use); at the return
 * the user's handler runs as the running kprobe.
 */
import { fail } from '../kernel/errno.js';
import type { PtRegs } from '../kernel/regs.js';
import type { Task } from '../kernel/task.js';
import { Kprobe, type KprobeSpec } from './kprobe.js';
import type { Kprobes } from './kprobes.js';
import { Rethook, RethookNode, RETHOOK_NODE_SIZE, type RethookCore, type RethookPool } from './rethook.js';

/** KRETPROBE_MAXACTIVE_MAX: trace_kprobe's limit on `r<N>:`. */
export const KRETPROBE_MAXACTIVE_MAX = 4096;
/** KRETPROBE_MAX_DATA_SIZE. */
const KRETPROBE_MAX_DATA_SIZE = 4096;

/** A kretprobe instance: one hooked call (struct kretprobe_instance on its rethook node). */
export interface KretprobeInstance {
  readonly rp: Kretprobe;
  /** The task whose call it hooked. */
  readonly task: Task;
  /** The return address the hook saved: the caller, unless another return hook came first (then its trampoline). */
  readonly retAddr: bigint;
  /** The probed function's address (the kprobe's). */
  readonly funcAddr: bigint;
  /** The return slot's address. */
  readonly frame: bigint;
  /** `dataSize` bytes kept from the entry handler to the return handler. */
  readonly data: Buffer;
}

class KretprobeNode extends RethookNode implements KretprobeInstance {
  readonly data: Buffer;

  constructor(
    rh: Rethook<KretprobeNode>,
    readonly rp: Kretprobe,
  ) {
    super(rh);
    this.data = Buffer.alloc(rp.dataSize);
  }

  get task(): Task {
    return this.hookedTask!;
  }

  get funcAddr(): bigint {
    return this.rp.kp.addr;
  }
}

export type KretprobeEntry = (ri: KretprobeInstance, regs: PtRegs) => number | boolean | void;
export type KretprobeHandler = (ri: KretprobeInstance, regs: PtRegs) => void;

/** struct kretprobe. */
export class Kretprobe {
  readonly kp: Kprobe;
  /** Instances to preallocate; 0 = max(10, 2 x CPUs) at registration. */
  maxactive: number;
  readonly dataSize: number;
  entry?: KretprobeEntry;
  handler: KretprobeHandler;
  /** Calls not hooked because every instance was in use. */
  nmissed = 0;
  /** Return handler calls. */
  nhit = 0;
  /** @internal */
  rh: Rethook<KretprobeNode> | null = null;

  constructor(spec: KprobeSpec & { maxactive?: number; dataSize?: number; entry?: KretprobeEntry; handler: KretprobeHandler; name?: string }) {
    this.kp = new Kprobe({ symbol: spec.symbol, offset: spec.offset, addr: spec.addr, name: spec.name });
    this.kp.kretprobe = this;
    this.maxactive = spec.maxactive ?? 0;
    this.dataSize = spec.dataSize ?? 0;
    this.entry = spec.entry;
    this.handler = spec.handler;
  }

  get name(): string | undefined {
    return this.kp.name;
  }

  /** The rethook pool (allocated / in use / missed), while registered. */
  get rethook(): RethookPool | null {
    return this.rh;
  }
}

/** The kretprobes registered with a kernel's kprobes (iterating gives them, for stats). */
export class Kretprobes implements Iterable<Kretprobe> {
  private readonly registered = new Set<Kretprobe>();

  constructor(
    private readonly kprobes: Kprobes,
    private readonly rethooks: RethookCore,
  ) {}

  [Symbol.iterator](): IterableIterator<Kretprobe> {
    return this.registered.values();
  }

  /** register_kretprobe(): EINVAL off a function entry or registered twice, ENOENT, E2BIG (data > 4096). */
  register(rp: Kretprobe, opts: { disabled?: boolean } = {}): void {
    const kprobes = this.kprobes;
    const site = kprobes.resolve({ symbol: rp.kp.symbol, offset: rp.kp.offset, addr: rp.kp.symbol ? undefined : rp.kp.addr });
    if (!site.onFuncEntry) fail('EINVAL');
    if (kprobes.isRegistered(rp.kp) || rp.rh) fail('EINVAL');
    if (rp.dataSize > KRETPROBE_MAX_DATA_SIZE) fail('E2BIG');
    if (rp.maxactive <= 0) rp.maxactive = Math.max(10, 2 * kprobes.kernel.nrCpus);
    rp.kp.pre = (_p, regs, task) => this.preHandler(rp, regs, task);
    rp.kp.post = undefined;
    const label = rp.name ? `kretprobe:${rp.name}` : `kretprobe:${rp.kp.symbol ?? '0x' + rp.kp.addr.toString(16)}`;
    const rh = new Rethook<KretprobeNode>(
      this.rethooks,
      (ri, _ret, regs, task) => this.handler(ri, regs, task),
      RETHOOK_NODE_SIZE + rp.dataSize,
      rp.maxactive,
      (h) => new KretprobeNode(h, rp),
      label,
    );
    rp.rh = rh;
    rp.nmissed = 0;
    try {
      kprobes.register(rp.kp, opts);
    } catch (e) {
      rh.free();
      rp.rh = null;
      throw e;
    }
    this.registered.add(rp);
  }

  /** unregister_kretprobe(): silently nothing if `rp` is not registered. */
  unregister(rp: Kretprobe): void {
    if (!this.registered.has(rp)) return;
    this.kprobes.unregister(rp.kp);
    rp.rh?.free();
    rp.rh = null;
    this.registered.delete(rp);
  }

  /** pre_handler_kretprobe(): take an instance and hook the return (or miss). */
  private preHandler(rp: Kretprobe, regs: PtRegs, task: Task): boolean {
    const rh = rp.rh;
    if (!rh) return false;
    const ri = rh.tryGet();
    if (!ri) {
      rp.nmissed++;
      return false;
    }
    ri.hookedTask = task;
    if (rp.entry && rp.entry(ri, regs)) rh.recycle(ri);
    else rh.hook(ri, regs, task);
    return false;
  }

  /** kretprobe_rethook_handler(): the user's handler, as the running kprobe. */
  private handler(ri: KretprobeNode, regs: PtRegs, task: Task): void {
    const rp = ri.rp;
    if (!rp.handler) return;
    this.kprobes.asRunning(task, rp.kp, () => {
      rp.nhit++;
      rp.handler(ri, regs);
    });
  }
}
