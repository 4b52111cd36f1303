/**
 * Loadable modules: the sample modules' symbols appear in kallsyms and
 * available_filter_functions only while loaded, `:mod:` filters wait for
 * their module and are applied when it loads, and its functions leave the
 * filter hashes when it unloads (func_mod_trace.tc, through the library API).
 */
import { describe, expect, it } from 'vitest';
import { kallsymsText } from '../../src/kernel/kallsyms.js';
import { echo, errCode, setup } from '../helpers/tracefs.js';

describe('loadable modules', () => {
  it('shows a module symbols only while it is loaded, in this kernel only', async () => {
    const { kernel, read } = setup();
    const other = setup().kernel;
    const aff = () => read('available_filter_functions');
    expect(await aff()).not.toContain('trace_printk_irq_work');
    expect(kernel.symbols.lookupName('trace_printk_irq_work')).toBeUndefined();
    kernel.modules.load('trace-printk');
    expect(await aff()).toContain('trace_printk_irq_work [trace_printk]\n');
    expect(kallsymsText(kernel.symbols).toString('latin1')).toMatch(/^[0-9a-f]{16} t trace_printk_irq_work\t\[trace_printk\]$/m);
    expect(kallsymsText(other.symbols).toString('latin1')).not.toContain('trace_printk_irq_work');
    expect(() => kernel.modules.load('trace_printk')).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    kernel.modules.unload('trace_printk');
    expect(await aff()).not.toContain('trace_printk_irq_work');
    expect(() => kernel.modules.unload('trace_printk')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(() => kernel.modules.load('no_such_module')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('func_mod_trace: a :mod: filter waits for its module, and empties when it goes', async () => {
    const { fs, kernel, read } = setup();
    await echo(fs, 'set_ftrace_filter', 'non_exist_func:mod:non_exist_module\n');
    expect(await read('set_ftrace_filter')).toBe('non_exist_func:mod:non_exist_module\n');
    await echo(fs, 'set_ftrace_filter', '*:mod:trace_printk\n');
    expect(await read('set_ftrace_filter')).toBe('*:mod:trace_printk\n');
    kernel.modules.load('trace-printk');
    expect(await read('set_ftrace_filter')).toBe('trace_printk_irq_work [trace_printk]\n');
    kernel.modules.unload('trace_printk');
    expect(await read('set_ftrace_filter')).toBe('');
    kernel.modules.load('trace_printk');
    expect(await read('set_ftrace_filter')).toBe('');
  });

  it('a loaded module functions are traced by an ops that traces everything, and unpatched when it goes', async () => {
    const { fs, kernel, read } = setup();
    await echo(fs, 'current_tracer', 'function\n');
    kernel.modules.load('trace_printk');
    expect(await read('enabled_functions')).toContain('trace_printk_irq_work [trace_printk] (1)');
    kernel.modules.unload('trace_printk');
    expect(await read('enabled_functions')).not.toContain('[trace_printk]');
    await echo(fs, 'current_tracer', 'nop\n');
  });
});

describe('module code', () => {
  it('trace_printk: its init prints, from hardirq context for its irq_work, and its formats are listed', async () => {
    const { kernel, read } = setup();
    kernel.modules.load('trace-printk');
    const trace = await read('trace');
    expect(trace).toMatch(/: This .* trace_bputs/);
    expect(trace).toMatch(/ d\.h\.\. .*trace_printk_irq_work: \(irq\) .* trace_bprintk/);
    const fmts = await read('printk_formats');
    expect(fmts).toMatch(/^0x[0-9a-f]+ : "This is a %s that will use trace_bprintk\(\)\\n"$/m);
    expect(fmts).toContain('(irq) This is a static string that will use trace_bputs');
    kernel.modules.unload('trace_printk');
    expect(await read('printk_formats')).toBe('');
  });

  it('kprobe_module: a probe on an unloaded module waits, is registered when it loads and hits its code', async () => {
    const { fs, kernel, read } = setup();
    kernel.modules.load('trace_printk');
    await echo(fs, 'kprobe_events', 'p:kprobes1/event1 trace_printk:trace_printk_irq_work\n');
    kernel.modules.unload('trace_printk');
    await echo(fs, 'kprobe_events', 'p:event2 trace_printk:trace_printk_irq_work\n', true);
    await echo(fs, 'events/kprobes1/event1/enable', '1\n');
    kernel.modules.load('trace_printk');
    expect(await read('trace')).toMatch(/event1: \(trace_printk_irq_work\+0x[0-9a-f]+\/0x[0-9a-f]+ \[trace_printk\]\)/);
    kernel.modules.unload('trace_printk');
    await echo(fs, 'events/kprobes1/event1/enable', '0\n');
    await echo(fs, 'kprobe_events', '-:kprobes1/event1\n', true);
  });
});

describe('module events', () => {
  it('trace-events-sample: its events come and go with it, fire from its thread, and :mod: requests wait for it', async () => {
    const { fs, kernel, read } = setup();
    await echo(fs, 'set_event', 'foo_bar:mod:trace-events-sample\n');
    expect(await read('set_event')).toBe('foo_bar:mod:trace_events_sample\n');
    const mod = kernel.modules.load('trace-events-sample');
    expect(await read('set_event')).toBe('sample-trace:foo_bar\n');
    expect(await read('events/sample-trace/foo_bar/format')).toMatch(/^name: foo_bar\nID: \d+\nformat:\n\tfield:unsigned short common_type;/);
    kernel.modules.runThread(mod);
    expect(await read('trace')).toMatch(/foo_bar: foo hello 1 World/);
    const f = await fs.open('events/sample-trace/foo_bar/enable', 0, { pid: 1, uid: 0, gid: 0 });
    expect(() => kernel.modules.unload('trace_events_sample')).toThrow(expect.objectContaining({ code: 'EBUSY' }));
    await f.release();
    kernel.modules.unload('trace_events_sample');
    expect(await read('set_event')).toBe('');
    expect(await errCode(read('events/sample-trace/foo_bar/format'))).toBe('ENOENT');
  });

  it('add_remove_tprobe_module: a tracepoint probe on an unloaded module waits for it', async () => {
    const { fs, kernel, read } = setup();
    await echo(fs, 'dynamic_events', 't:myevent1 foo_bar\n', true);
    await echo(fs, 'events/tracepoints/enable', '1\n');
    const mod = kernel.modules.load('trace_events_sample');
    kernel.modules.runThread(mod);
    expect(await read('trace')).toMatch(/myevent1: \(/);
    kernel.modules.unload('trace_events_sample');
    await echo(fs, 'events/tracepoints/enable', '0\n');
    await echo(fs, 'dynamic_events', '\n');
  });
});

describe('7.3 trace-events-sample timer', () => {
  it('btf_probe_event: an fprobe on its timer callback reads the name and this CPU count foo_timer_fn records', async () => {
    const { fs, kernel, read } = setup({ series: '7.3' });
    const mod = kernel.modules.load('trace-events-sample');
    await echo(
      fs,
      'dynamic_events',
      'f:mysample/myevent sample_timer_cb name=(foo_timer_data,timer)t->name:string count=this_cpu_read((foo_timer_data,timer)t->counter) ptr=this_cpu_ptr((foo_timer_data,timer)t->counter)\n',
      true,
    );
    await echo(fs, 'events/mysample/myevent/enable', '1\n');
    await echo(fs, 'events/sample-trace/foo_timer_fn/enable', '1\n');
    kernel.modules.runTimer(mod);
    kernel.modules.runTimer(mod);
    const trace = await read('trace');
    expect(trace).toMatch(/myevent: \(sample_timer_cb\+0x4\/0x80 \[trace_events_sample\]\) name="sample_timer_counter" count=0x0 ptr=0x[0-9a-f]+\n.*foo_timer_fn: name=sample_timer_counter count=0\n/);
    expect(trace).toMatch(/myevent: .* count=0x1 .*\n.*foo_timer_fn: name=sample_timer_counter count=1\n/);
    await echo(fs, 'events/mysample/myevent/enable', '0\n');
    await echo(fs, 'events/sample-trace/foo_timer_fn/enable', '0\n');
    await echo(fs, 'dynamic_events', '\n');
    kernel.modules.unload('trace_events_sample');
  });

  it('is 7.3 only: 7.2 sample has no timer callback nor BTF', () => {
    const { kernel } = setup();
    kernel.modules.load('trace-events-sample');
    expect(kernel.symbols.lookupName('sample_timer_cb')).toBeUndefined();
    expect(kernel.moduleTypes('trace_events_sample')).toBeUndefined();
    kernel.modules.unload('trace_events_sample');
  });
});

describe('direct calls', () => {
  it('ftrace-direct: a direct ops on wake_up_process while loaded, printing the task it wakes', async () => {
    const { kernel, read } = setup();
    kernel.modules.load('ftrace-direct');
    expect(await read('enabled_functions')).toMatch(/^wake_up_process \(1\) R {3}D /m);
    const task = kernel.tasks.kthreads[0]!;
    kernel.call(kernel.cpus[0]!.curr, 'wake_up_process', [task.addr]);
    expect(await read('trace')).toContain(`my_direct_func: waking up ${task.comm}-${task.pid}`);
    kernel.modules.unload('ftrace_direct');
    expect(await read('enabled_functions')).toBe('');
  });
});
