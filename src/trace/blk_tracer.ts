/**
 * The blk tracer (kernel/trace/blktrace.c): block I/O trace records, which
 * only block devices being traced (BLKTRACESETUP, or a device's
 * trace/enable in sysfs) produce — the emulated kernel has none, so it
 * records nothing. What shows: its options, the `blk_classic` header, and
 * that blk_classic turns the context-info option off (and back on).
 */
import type { Tracer } from './tracer.js';
import type { Tracing } from './tracing.js';

/** blk_tracer_print_header() with blk_classic. */
const CLASSIC_HEADER = '# DEV   CPU TIMESTAMP     PID ACT FLG\n#  |     |     |           |   |   |\n';

const blkTracer: Tracer = {
  name: 'blk',
  options: [
    { name: 'blk_classic', default: false },
    { name: 'blk_cgroup', default: false },
    { name: 'blk_cgname', default: false },
  ],
  init() {},
  reset() {},
  // blk_tracer_set_flag(): classic output has no context columns. Any time
  // the option is written, whichever tracer is current.
  setOption(tr, name, on) {
    if (name !== 'blk_classic') return;
    if (on) tr.options.delete('context-info');
    else tr.options.add('context-info');
  },
  printHeader(ctx) {
    return ctx.tr.tracerOptions.get('blk')?.has('blk_classic') ? CLASSIC_HEADER : '';
  },
};

export function registerBlkTracer(tracing: Tracing): void {
  tracing.tracers.register(blkTracer);
}
