/**
 * The state the osnoise and timerlat tracers share (trace_osnoise.c's
 * osnoise_data, osnoise_options, osnoise_cpumask and the list of instances
 * running them): what the osnoise/ files show and set, and the one workload
 * every registered trace array gets the samples of.
 */
import { fail } from '../../kernel/errno.js';
import { parseCpuList } from '../events/filter/filter_parser.js';
import type { TraceArray } from '../trace_array.js';
import type { Tracing } from '../tracing.js';
import type { SampleEntryTypes } from './sample_entries.js';
import { TimerlatUser } from './timerlat_user.js';
import { OsnoiseWorkload } from './workload.js';

/** osnoise/options, in the file's order (the first resets the others). */
const OPTION_NAMES = ['DEFAULTS', 'OSNOISE_WORKLOAD', 'PANIC_ON_STOP', 'OSNOISE_PREEMPT_DISABLE', 'OSNOISE_IRQ_DISABLE', 'TIMERLAT_ALIGN'] as const;
export type OsnoiseOption = (typeof OPTION_NAMES)[number];
/** OSNOISE_WORKLOAD on, the rest off. */
const DEFAULT_OPTIONS = 0x2;

/** A u64 setting of osnoise/ (trace_min_max_param): its value and the bounds other settings put on it. */
export interface MinMaxParam {
  get(): number;
  set(v: number): void;
  min?(): number;
  max?(): number;
}

export class Osnoise {
  /** osnoise/period_us and runtime_us: a sample every period, the workload busy for runtime of it. */
  periodUs = 1_000_000;
  runtimeUs = 1_000_000;
  /** Stop tracing when one noise (stop_tracing_us) or a period's total (stop_tracing_total_us) exceeds this; 0: never. */
  stopTracingUs = 0;
  stopTracingTotalUs = 0;
  /** timerlat: print the IRQ handler's stack when the thread latency exceeds this (us); 0: never. */
  printStackUs = 0;
  timerlatPeriodUs = 1000;
  timerlatAlignUs = 0;
  private options = DEFAULT_OPTIONS;
  /** osnoise/cpus: where the workload runs. */
  cpus: ReadonlySet<number>;
  /** Trace arrays running osnoise or timerlat (osnoise_instances). */
  readonly instances = new Set<TraceArray>();
  /** The instances run timerlat, which keeps osnoise out (osnoise_data.timerlat_tracer). */
  timerlatMode = false;
  readonly workload: OsnoiseWorkload;
  /** The threads user space runs instead (timerlat_fd). */
  readonly user: TimerlatUser;
  /** An error the workload met (osnoise_taint()): the header says so. */
  tainted = false;

  constructor(
    readonly tracing: Tracing,
    readonly entries: SampleEntryTypes,
    /** The timerlat tracer is built in (its files in osnoise/). */
    readonly timerlat: boolean,
  ) {
    this.cpus = new Set(tracing.kernel.cpus.map((c) => c.id));
    this.workload = new OsnoiseWorkload(this);
    this.user = new TimerlatUser(this);
  }

  /** The option names of the series (TIMERLAT_ALIGN only where the profile has it). */
  optionNames(): readonly OsnoiseOption[] {
    return this.tracing.kernel.profile.timerlatAlign ? OPTION_NAMES : OPTION_NAMES.filter((o) => o !== 'TIMERLAT_ALIGN');
  }

  option(name: OsnoiseOption): boolean {
    return (this.options & (1 << OPTION_NAMES.indexOf(name))) !== 0;
  }

  /** osnoise/options as read: each option or NO_option, DEFAULTS for whether all are at their defaults. */
  showOptions(): string {
    return (
      this.optionNames()
        .map((o, i) => {
          const on = i === 0 ? this.options === DEFAULT_OPTIONS : this.option(o);
          return on ? o : `NO_${o}`;
        })
        .join(' ') + ' \n'
    );
  }

  /** A write of osnoise/options: OPTION sets it, NO_OPTION clears it, DEFAULTS resets them all. */
  writeOption(text: string): void {
    const neg = text.startsWith('NO_');
    const name = (neg ? text.slice(3) : text).trim();
    const i = this.optionNames().indexOf(name as OsnoiseOption);
    if (i < 0) fail('EINVAL');
    if (neg && i === 0) fail('EINVAL');
    this.restarting(() => {
      if (i === 0) this.options = DEFAULT_OPTIONS;
      else if (neg) this.options &= ~(1 << i);
      else this.options |= 1 << i;
    });
  }

  /** osnoise/cpus as read (%*pbl). */
  showCpus(): string {
    const ids = [...this.cpus].sort((a, b) => a - b);
    const parts: string[] = [];
    for (let i = 0; i < ids.length; ) {
      let j = i;
      while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1) j++;
      parts.push(i === j ? `${ids[i]}` : `${ids[i]}-${ids[j]}`);
      i = j + 1;
    }
    return `${parts.join(',')}\n`;
  }

  /** A write of osnoise/cpus: a CPU list (cpulist_parse()). */
  setCpus(text: string): void {
    const s = text.replace(/\n$/, '');
    const cpus = s === '' ? new Set<number>() : parseCpuList(s, this.tracing.kernel.nrCpus);
    if (!cpus) fail('EINVAL');
    this.restarting(() => (this.cpus = cpus));
  }

  /** Settings that the per-CPU threads read when they start: they restart around the change. */
  private restarting(change: () => void): void {
    const running = this.instances.size > 0;
    if (running) this.workload.stop();
    change();
    if (running) this.workload.start();
  }

  /** osnoise_register_instance(): the first starts the workload. */
  register(tr: TraceArray): void {
    if (this.instances.has(tr)) return;
    this.instances.add(tr);
    if (this.instances.size === 1) this.workload.start();
  }

  /** osnoise_unregister_instance(): the last stops the workload. */
  unregister(tr: TraceArray): void {
    if (!this.instances.delete(tr)) return;
    if (this.instances.size === 0) this.workload.stop();
  }

  /** osnoise_stop_tracing(): every instance says why on its CPU and stops recording. */
  stopTracing(cpu: number): void {
    for (const tr of this.instances) {
      this.workload.print(tr, cpu, `stop tracing hit on cpu ${cpu}\n`);
      tr.setTracerTracing(false);
    }
  }

  /** The osnoise/ u64 settings, by file name. */
  params(): Record<string, MinMaxParam> {
    const p: Record<string, MinMaxParam> = {
      period_us: { get: () => this.periodUs, set: (v) => this.restarting(() => (this.periodUs = v)), min: () => this.runtimeUs },
      runtime_us: { get: () => this.runtimeUs, set: (v) => this.restarting(() => (this.runtimeUs = v)), max: () => this.periodUs },
      stop_tracing_us: { get: () => this.stopTracingUs, set: (v) => (this.stopTracingUs = v) },
      stop_tracing_total_us: { get: () => this.stopTracingTotalUs, set: (v) => (this.stopTracingTotalUs = v) },
    };
    return p;
  }

  /** The timerlat tracer's u64 settings, by file name. */
  timerlatParams(): Record<string, MinMaxParam> {
    const p: Record<string, MinMaxParam> = {
      timerlat_period_us: { get: () => this.timerlatPeriodUs, set: (v) => this.restarting(() => (this.timerlatPeriodUs = v)), min: () => 100, max: () => 1_000_000 },
    };
    if (this.tracing.kernel.profile.timerlatAlign) p.timerlat_align_us = { get: () => this.timerlatAlignUs, set: (v) => (this.timerlatAlignUs = v) };
    return p;
  }

  /** osnoise/print_stack. */
  printStackParam(): MinMaxParam {
    return { get: () => this.printStackUs, set: (v) => (this.printStackUs = v) };
  }
}
