/**
 * The osnoise and timerlat tracers (trace_osnoise.c): either may run in any
 * number of trace arrays, never both at once; they share the workload and
 * settings of `Osnoise`. Their headers are the kernel's (non-RT build).
 */
import { fail } from '../../kernel/errno.js';
import type { Tracer } from '../tracer.js';
import type { Tracing } from '../tracing.js';
import { Osnoise } from './osnoise.js';
import { registerSampleEntries } from './sample_entries.js';

const OSNOISE_HEADER = [
  '#                                _-----=> irqs-off',
  '#                               / _----=> need-resched',
  '#                              | / _---=> hardirq/softirq',
  '#                              || / _--=> preempt-depth',
  '#                              ||| / _-=> migrate-disable                         MAX',
  '#                              |||| /     delay                                   SINGLE      Interference counters:',
  '#                              |||||               RUNTIME      NOISE  %% OF CPU  NOISE    +-----------------------------+',
  '#           TASK-PID      CPU# |||||   TIMESTAMP    IN US       IN US  AVAILABLE  IN US     HW    NMI    IRQ   SIRQ THREAD',
  '#              | |         |   |||||      |           |             |    |            |      |      |      |      |      |',
].join('\n');

const TIMERLAT_HEADER = [
  '#                                _-----=> irqs-off',
  '#                               / _----=> need-resched',
  '#                              | / _---=> hardirq/softirq',
  '#                              || / _--=> preempt-depth',
  '#                              ||| / _-=> migrate-disable',
  '#                              |||| /     delay',
  '#                              |||||            ACTIVATION',
  '#           TASK-PID      CPU# |||||   TIMESTAMP   ID            CONTEXT                 LATENCY',
  '#              | |         |   |||||      |         |                  |                       |',
].join('\n');

function osnoiseTracer(os: Osnoise): Tracer {
  return {
    name: 'osnoise',
    allowInstances: true,
    init(tr) {
      // Only one of osnoise and timerlat runs at a time.
      if (os.timerlatMode) fail('EBUSY');
      os.register(tr);
    },
    reset: (tr) => os.unregister(tr),
    start: (tr) => os.register(tr),
    stop: (tr) => os.unregister(tr),
    printHeader: () => `${os.tainted ? '# osnoise is tainted!\n' : ''}${OSNOISE_HEADER}\n`,
  };
}

function timerlatTracer(os: Osnoise): Tracer {
  return {
    name: 'timerlat',
    allowInstances: true,
    init(tr) {
      if (os.instances.size > 0 && !os.timerlatMode) fail('EBUSY');
      os.timerlatMode = true;
      os.register(tr);
    },
    reset(tr) {
      os.unregister(tr);
      if (os.instances.size === 0) os.timerlatMode = false;
    },
    start: (tr) => os.register(tr),
    stop: (tr) => os.unregister(tr),
    printHeader: () => `${TIMERLAT_HEADER}\n`,
  };
}

/** Registers osnoise (and timerlat, where built in) when the kernel has them; their shared state. */
export function registerOsnoiseTracers(tracing: Tracing): Osnoise | undefined {
  const { features } = tracing.kernel;
  const timerlat = features.has('timerlat-tracer');
  if (!timerlat && !features.has('osnoise-tracer')) return undefined;
  const os = new Osnoise(tracing, registerSampleEntries(tracing), timerlat);
  tracing.tracers.register(osnoiseTracer(os));
  if (timerlat) tracing.tracers.register(timerlatTracer(os));
  return os;
}
