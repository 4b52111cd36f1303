/** The tracing subsystem as a whole: the top-level trace array and the instances. */
import { fail } from '../kernel/errno.js';
import type { Kernel } from '../kernel/kernel.js';
import { EventRegistry } from './event_registry.js';
import { TraceArray } from './trace_array.js';

export class Tracing {
  readonly top: TraceArray;
  readonly instances = new Map<string, TraceArray>();
  /** Every event type, static and dynamic. */
  readonly eventTypes = new EventRegistry();

  constructor(readonly kernel: Kernel) {
    this.top = new TraceArray(this, '');
  }

  /** mkdir instances/NAME. */
  createInstance(name: string): TraceArray {
    if (this.instances.has(name)) fail('EEXIST');
    const tr = new TraceArray(this, name);
    this.instances.set(name, tr);
    return tr;
  }

  /** rmdir instances/NAME: EBUSY while something holds it. */
  removeInstance(name: string): void {
    const tr = this.instances.get(name);
    if (!tr) fail('ENODEV');
    if (tr.refs > 0) fail('EBUSY');
    this.instances.delete(name);
  }
}
