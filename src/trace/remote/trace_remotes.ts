/**
 * The kernel's trace remotes (remotes/): each one registered once, for good
 * (the interface has no unregistration) — the simulated hypervisor's at boot
 * when the kernel is built with it, a module's (remote_test) when it loads.
 * Whoever shows them (the tracefs) follows `onRegister`.
 */
import { HYPERVISOR_REMOTE } from '../../kernel/hypervisor_trace.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { TraceRemoteDef } from '../../kernel/remote_event.js';
import type { TraceClock } from '../trace_clock.js';
import { RemoteWriter } from './remote_writer.js';
import { TraceRemote } from './trace_remote.js';

export class TraceRemotes {
  private readonly list: TraceRemote[] = [];
  readonly onRegister = new Set<(remote: TraceRemote) => void>();

  constructor(
    private readonly kernel: Kernel,
    /** trace_clock_global(), which the writers stamp their events with. */
    private readonly clock: TraceClock,
  ) {
    if (!kernel.profile.traceRemotes) return;
    if (kernel.features.has('hypervisor-tracing')) this.register(HYPERVISOR_REMOTE);
    for (const mod of [...kernel.modules.loaded].reverse()) if (mod.def.traceRemote) this.register(mod.def.traceRemote);
    kernel.modules.notifiers.add((mod, state) => {
      if (state === 'coming' && mod.def.traceRemote) this.register(mod.def.traceRemote);
    });
  }

  get all(): readonly TraceRemote[] {
    return this.list;
  }

  /** trace_remote_register(). */
  private register(def: TraceRemoteDef): void {
    const remote = new TraceRemote(new RemoteWriter(def, this.kernel.nrCpus, () => this.clock.now()), this.kernel.nrCpus);
    this.list.push(remote);
    for (const l of this.onRegister) l(remote);
  }
}
