/**
 * The kernel's sample modules (samples/, CONFIG_SAMPLE_*=m) that the ftrace
 * selftests load: what each one brings as data — its symbols as kallsyms
 * shows them once loaded (init code already freed), which of its functions
 * ftrace can trace, and its trace_printk() formats.
 */
import type { ModuleDef, ModuleDirectCall, ModuleFiring, ModuleSymbolDef } from './module.js';
import { selftestRemoteEvent } from './remote_event.js';

const TRACE_PRINTK: ModuleDef = {
  name: 'trace_printk',
  symbols: [
    { name: 'trace_printk_irq_work', type: 't', size: 0x90, traceable: true },
    { name: 'trace_printk_exit', type: 't', size: 0x10 },
    { name: 'cleanup_module', type: 't', size: 0x10 },
    { name: 'irqwork', type: 'b', size: 0x20 },
    { name: '__this_module', type: 'd', size: 0x500 },
  ],
  printkFormats: [
    'This is a static string that will use trace_bputs\n',
    'This is a %s that will use trace_bprintk()\n',
    '%sThis is a %s that will use trace_printk\n',
    '(irq) This is a static string that will use trace_bputs\n',
    '(irq) This is a %s that will use trace_bprintk()\n',
  ],
  // Its init prints, then kicks an irq_work that prints from hardirq context, then prints again.
  init: [
    { printk: [{ text: 'This is a static string that will use trace_bputs\n' }, { text: 'This is a dynamic string that will use trace_puts\n' }] },
    {
      fn: 'trace_printk_irq_work',
      hardirq: true,
      printk: [
        { text: '(irq) This is a static string that will use trace_bputs\n' },
        { text: '(irq) This is a dynamic string that will use trace_puts\n' },
        { text: '(irq) This is a static string that will use trace_bprintk()\n' },
        { text: '(irq) This is a dynamic string that will use trace_printk\n' },
      ],
    },
    { printk: [{ text: 'This is a static string that will use trace_bprintk()\n' }, { text: 'This is a dynamic string that will use trace_printk\n' }] },
  ],
};

/** The sample's events: foo_bar with a fixed and dynamic fields, the others a string and a number. */
const SAMPLE_EVENTS = ['foo_bar', 'foo_bar_with_cond', 'foo_bar_with_fn', 'foo_with_template_simple', 'foo_with_template_cond', 'foo_with_template_fn', 'foo_with_template_print', 'foo_rel_loc'];

const FOO_BAR_FIELDS = [
  { type: 'char[10]', name: 'foo', offset: 8, size: 10, signed: true },
  { type: 'int', name: 'bar', offset: 20, size: 4, signed: true },
  { type: '__data_loc int[]', name: 'list', offset: 24, size: 4, signed: false },
  { type: '__data_loc char[]', name: 'str', offset: 28, size: 4, signed: false },
];
const STRING_INT_FIELDS = [
  { type: '__data_loc char[]', name: 'foo', offset: 8, size: 4, signed: false },
  { type: 'int', name: 'bar', offset: 12, size: 4, signed: true },
];

/** The sample's symbols: its functions, those of each event, then its data. */
function traceEventsSampleSymbols(events: readonly string[], ownText: readonly ModuleSymbolDef[], ownData: readonly ModuleSymbolDef[]): ModuleSymbolDef[] {
  return [
    { name: 'foo_bar_reg', type: 't', size: 0x60, traceable: true },
    { name: 'foo_bar_unreg', type: 't', size: 0x50, traceable: true },
    { name: 'simple_thread', type: 't', size: 0x70, traceable: true },
    { name: 'simple_thread_fn', type: 't', size: 0x70, traceable: true },
    { name: 'do_simple_thread_func', type: 't', size: 0x240, traceable: true },
    { name: 'simple_thread_func', type: 't', size: 0x60, traceable: true },
    ...ownText,
    ...events.flatMap((e) => [
      { name: `__traceiter_${e}`, type: 't', size: 0x50, traceable: true },
      { name: `__probestub_${e}`, type: 't', size: 0x10, traceable: true },
      { name: `trace_event_raw_event_${e}`, type: 't', size: 0xe0, traceable: true },
      { name: `trace_raw_output_${e}`, type: 't', size: 0x70, traceable: true },
    ]),
    { name: 'trace_event_sample_exit', type: 't', size: 0x60 },
    { name: 'cleanup_module', type: 't', size: 0x60 },
    { name: 'simple_tsk', type: 'b', size: 0x8 },
    { name: 'simple_tsk_fn', type: 'b', size: 0x8 },
    ...ownData,
    ...events.map((e) => ({ name: `__tracepoint_${e}`, type: 'd', size: 0x38 })),
    { name: '__this_module', type: 'd', size: 0x500 },
  ];
}

const SAMPLE_EVENT_DEFS = SAMPLE_EVENTS.map((name) =>
  name === 'foo_bar'
    ? { system: 'sample-trace', name, fields: FOO_BAR_FIELDS, printFmt: '"foo %s %d %s", REC->foo, REC->bar, __get_str(str)' }
    : { system: 'sample-trace', name, fields: STRING_INT_FIELDS, printFmt: '"foo %s %d", __get_str(foo), REC->bar' },
);

const TRACE_EVENTS_SAMPLE: ModuleDef = {
  name: 'trace_events_sample',
  symbols: traceEventsSampleSymbols(SAMPLE_EVENTS, [], []),
  events: SAMPLE_EVENT_DEFS,
  // Its kernel thread wakes each second and fires its events.
  thread: {
    fn: 'simple_thread_func',
    fires: SAMPLE_EVENTS.map((event): ModuleFiring => ({ event, args: event === 'foo_bar' ? { foo: 'hello', bar: 1, str: 'World' } : { foo: 'Look at me', bar: 1 } })),
  },
};

/** 7.3's sample also arms a timer over a named per-CPU counter, which its callback traces (foo_timer_fn) and counts. */
const TRACE_EVENTS_SAMPLE_7_3: ModuleDef = {
  ...TRACE_EVENTS_SAMPLE,
  symbols: traceEventsSampleSymbols(
    [...SAMPLE_EVENTS, 'foo_timer_fn'],
    [{ name: 'sample_timer_cb', type: 't', size: 0x80, traceable: true }],
    [{ name: 'foo_timer_data', type: 'b', size: 0x8 }],
  ),
  events: [
    ...SAMPLE_EVENT_DEFS,
    {
      system: 'sample-trace',
      name: 'foo_timer_fn',
      fields: [
        { type: '__data_loc char[]', name: 'name', offset: 8, size: 4, signed: false },
        { type: 'int', name: 'count', offset: 12, size: 4, signed: true },
      ],
      printFmt: '"name=%s count=%d", __get_str(name), REC->count',
    },
  ],
  timer: { fn: 'sample_timer_cb', struct: 'foo_timer_data', name: 'sample_timer_counter', event: 'foo_timer_fn' },
  btf: {
    structs: [
      {
        name: 'foo_timer_data',
        members: [
          { name: 'name', type: { kind: 'ptr', to: { kind: 'const', to: { kind: 'int', name: 'char' } } } },
          { name: 'timer', type: { kind: 'struct', name: 'timer_list' } },
          { name: 'counter', type: { kind: 'ptr', to: { kind: 'int', name: 'int' } } },
        ],
      },
    ],
    funcs: [{ name: 'sample_timer_cb', ret: { kind: 'void' }, params: [{ name: 't', type: { kind: 'ptr', to: { kind: 'struct', name: 'timer_list' } } }] }],
  },
};

/** A samples/ftrace direct-call module: its direct function, the trampoline calling it, its exit. */
function directSample(name: string, fnSize: number, printkFormat: string, direct: ModuleDirectCall): ModuleDef {
  return {
    name,
    symbols: [
      { name: 'my_direct_func', type: 't', size: fnSize, traceable: true },
      { name: 'my_tramp', type: 't', size: fnSize + 0x10 },
      { name: 'ftrace_direct_exit', type: 't', size: 0x20 },
      { name: 'cleanup_module', type: 't', size: 0x20 },
      { name: 'direct', type: 'd', size: 0xe0 },
      { name: '__this_module', type: 'd', size: 0x500 },
    ],
    printkFormats: [printkFormat],
    direct: [direct],
  };
}

/** A direct call on wake_up_process() that prints the task it wakes. */
const FTRACE_DIRECT = directSample('ftrace_direct', 0x30, 'waking up %s-%d\n', { target: 'wake_up_process', fn: 'my_direct_func', print: 'wakee', text: 'waking up ' });

/** A direct call on handle_mm_fault() that prints its arguments. */
const FTRACE_DIRECT_TOO = directSample('ftrace_direct_too', 0x40, 'handle mm fault vma=%p address=%lx flags=%x regs=%p\n', {
  target: 'handle_mm_fault',
  fn: 'my_direct_func',
  print: 'args',
  text: 'handle mm fault ',
});

/**
 * kernel/trace/remote_test (CONFIG_TRACE_REMOTE_TEST): a trace remote named
 * `test` whose writer is a simple ring buffer in the module, and whose
 * write_event file writes its one event on the writing CPU. It has no exit
 * function, so it stays once loaded.
 */
const REMOTE_TEST: ModuleDef = {
  name: 'remote_test',
  symbols: [
    { name: 'remote_test_unload_simple_rb', type: 't', size: 0x90, traceable: true },
    { name: 'remote_test_load', type: 't', size: 0x1f0, traceable: true },
    { name: 'remote_test_unload', type: 't', size: 0x80, traceable: true },
    { name: 'remote_test_enable_tracing', type: 't', size: 0x90, traceable: true },
    { name: 'remote_test_swap_reader_page', type: 't', size: 0x50, traceable: true },
    { name: 'remote_test_reset', type: 't', size: 0x50, traceable: true },
    { name: 'remote_test_enable_event', type: 't', size: 0x20, traceable: true },
    { name: 'write_event_write', type: 't', size: 0x100, traceable: true },
    { name: 'remote_test_init_tracefs', type: 't', size: 0x40, traceable: true },
    { name: 'remote_event_print_selftest', type: 't', size: 0x50, traceable: true },
    { name: 'remote_test_buffer_desc', type: 'b', size: 0x8 },
    { name: 'simple_rbs_lock', type: 'd', size: 0x20 },
    { name: 'trace_remote_callbacks', type: 'd', size: 0x38 },
    { name: 'remote_event_selftest', type: 'd', size: 0x48 },
    { name: 'remote_event_fields_selftest', type: 'd', size: 0x40 },
    { name: 'remote_event_print_fmt_selftest', type: 'd', size: 0x14 },
    { name: 'write_event_fops', type: 'r', size: 0x100 },
    { name: '__this_module', type: 'd', size: 0x500 },
  ],
  traceRemote: { name: 'test', events: [selftestRemoteEvent(1)], selftest: 'selftest', writeEventRefuses: true, enableOnlySelftest: true },
  permanent: true,
};

/**
 * kernel/trace/preemptirq_delay_test.c (with the latency tracers): its init
 * runs interrupts- or preemption-off sections of `delay` µs in a kernel
 * thread and waits for them; its test functions are inlined into the
 * thread's function.
 */
const PREEMPTIRQ_DELAY_TEST: ModuleDef = {
  name: 'preemptirq_delay_test',
  feature: 'latency-tracers',
  params: { delay: '100', test_mode: 'irq', burst_size: '1', cpu_affinity: '-1' },
  delayTest: { fn: 'preemptirq_delay_run', caller: 'kthread' },
  symbols: [
    { name: 'busy_wait', type: 't', size: 0x60, traceable: true },
    ...Array.from({ length: 10 }, (_, i) => ({ name: `preemptirqtest_${i}`, type: 't', size: 0x150, traceable: true })),
    { name: 'preemptirq_delay_run', type: 't', size: 0x130, traceable: true },
    { name: 'preemptirq_run_test', type: 't', size: 0xd0, traceable: true },
    { name: 'trigger_store', type: 't', size: 0x30, traceable: true },
    { name: 'preemptirq_delay_exit', type: 't', size: 0x20 },
    { name: 'cleanup_module', type: 't', size: 0x20 },
    { name: 'delay', type: 'd', size: 0x8 },
    { name: 'test_mode', type: 'd', size: 0xc },
    { name: 'burst_size', type: 'd', size: 0x4 },
    { name: 'cpu_affinity', type: 'd', size: 0x4 },
    { name: 'testfuncs', type: 'd', size: 0x50 },
    { name: '__this_module', type: 'd', size: 0x500 },
    { name: 'done', type: 'b', size: 0x20 },
    { name: 'preemptirq_delay_kobj', type: 'b', size: 0x8 },
  ],
};

/** The sample modules of 6.12's source (the latency tracers' test module last: earlier ones keep their place). */
export const SAMPLE_MODULES: readonly ModuleDef[] = [TRACE_PRINTK, TRACE_EVENTS_SAMPLE, FTRACE_DIRECT, FTRACE_DIRECT_TOO, PREEMPTIRQ_DELAY_TEST];

/** The sample and test modules of 7.2's source. */
export const SAMPLE_MODULES_7_2: readonly ModuleDef[] = [TRACE_PRINTK, TRACE_EVENTS_SAMPLE, FTRACE_DIRECT, FTRACE_DIRECT_TOO, REMOTE_TEST, PREEMPTIRQ_DELAY_TEST];

/** The sample and test modules of 7.3's source. */
export const SAMPLE_MODULES_7_3: readonly ModuleDef[] = [TRACE_PRINTK, TRACE_EVENTS_SAMPLE_7_3, FTRACE_DIRECT, FTRACE_DIRECT_TOO, REMOTE_TEST, PREEMPTIRQ_DELAY_TEST];
