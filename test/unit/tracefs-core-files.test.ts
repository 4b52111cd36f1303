import { describe, expect, it } from 'vitest';
import { profileOf, SERIES } from '../../src/kernel/series.js';
import { readmeText } from '../../src/tracefs/readme.js';
import { errCode, fixture, setup } from '../helpers/tracefs.js';

const ALL_FEATURES = new Set([
  'dynamic_ftrace', 'function', 'function_graph', 'stacktrace', 'stack_tracer', 'dynamic_events',
  'kprobe_events', 'uprobe_events', 'fprobe_events', 'probe_btf_args', 'events', 'event_triggers',
  'hist_triggers', 'synth_events',
]);

/** Mode strings as busybox ls shows them. */
function lsMode(mode: number): string {
  const t = mode & 0o040000 ? 'd' : '-';
  const bits = 'rwxrwxrwx';
  let s = '';
  for (let i = 0; i < 9; i++) s += mode & (1 << (8 - i)) ? bits[i] : '-';
  return t + s;
}

describe('README', () => {
  it.each(SERIES)('is the kernel text byte for byte once every subsystem is there (%s)', (series) => {
    expect(readmeText(profileOf(series), ALL_FEATURES)).toBe(fixture(`README.${series}.txt`));
  });

  it('has only the core paragraphs until subsystems add theirs', async () => {
    const { read, tracing } = setup();
    const text = await read('README');
    expect(text.startsWith('tracing mini-HOWTO:\n')).toBe(true);
    expect(text).toContain('  trace_marker_raw\t\t- Writes into this file writes binary data into the kernel buffer\n');
    expect(text).toContain("  snapshot\t\t- Like 'trace' but shows the content of the static\n");
    expect(text).toContain('set_ftrace_filter');
    // the probe events are built in
    expect(text).toContain('  kprobe_events\t\t- Create/append/remove/show the kernel dynamic events\n');
    expect(text).toContain('place (kretprobe): [<module>:]<symbol>[+<offset>]%return|<memaddr>\n');
    // so are the events, their triggers and hist triggers
    expect(text).toContain('      hist trigger\t- If set, event hits are aggregated into a hash table\n');
    expect(tracing.features.has('hist_triggers')).toBe(true);
    expect(readmeText(profileOf('7.2'), new Set(['events', 'event_triggers']))).not.toContain('hist trigger');
  });
});

describe('options', () => {
  it.each(SERIES)('lists the defaults of %s', async (series) => {
    expect(await setup({ series }).read('trace_options')).toBe(fixture(`trace_options.${series}.txt`));
  });

  it('sets and clears through trace_options and options/*', async () => {
    const { read, write } = setup();
    expect(await errCode(write('trace_options', 'foo'))).toBe('EINVAL');
    await write('trace_options', 'noprint-parent');
    expect(await read('options/print-parent')).toBe('0\n');
    await write('trace_options', ' print-parent \n');
    expect(await read('options/print-parent')).toBe('1\n');
    expect(await errCode(write('trace_options', 'test_nop_refuse'))).toBe('EINVAL');
    await write('options/test_nop_accept', '1');
    expect(await read('trace_options')).toContain('\ntest_nop_accept\nnotest_nop_refuse\n');
    expect(await errCode(write('options/test_nop_refuse', '1'))).toBe('EINVAL');
    expect(await read('options/test_nop_refuse')).toBe('0\n');
    expect(await errCode(write('options/overwrite', '2'))).toBe('EINVAL');
    expect(await errCode(write('trace_options', 'x'.repeat(64)))).toBe('EINVAL');
  });

  it('keeps trace_printk_dest on one trace array, the top by default', async () => {
    const { fs, read, write } = setup();
    expect(await errCode(write('options/trace_printk_dest', '0'))).toBe('EINVAL');
    fs.mkdir('instances/a');
    expect(await read('instances/a/options/trace_printk_dest')).toBe('0\n');
    await write('instances/a/options/trace_printk_dest', '1');
    expect(await read('options/trace_printk_dest')).toBe('0\n');
    await write('instances/a/options/trace_printk_dest', '0');
    expect(await read('options/trace_printk_dest')).toBe('1\n');
  });

  it('copies top-level markers into instances with copy_trace_marker', async () => {
    const { fs, read, write } = setup();
    fs.mkdir('instances/x');
    expect(await read('instances/x/options/copy_trace_marker')).toBe('0\n');
    await write('instances/x/options/copy_trace_marker', '1');
    await write('trace_marker', 'both\n');
    expect(await read('instances/x/trace')).toContain('tracing_mark_write: both');
    expect(await read('trace')).toContain('tracing_mark_write: both');
    await write('options/copy_trace_marker', '0');
    await write('trace_marker', 'only x\n');
    expect(await read('trace')).not.toContain('only x');
    expect(await read('instances/x/trace')).toContain('only x');
  });

  it('gives new instances the top-level options, minus the zeroed ones', async () => {
    const { fs, read, write } = setup();
    await write('options/latency-format', '1');
    await write('options/event-fork', '1');
    fs.mkdir('instances/i');
    expect(await read('instances/i/options/latency-format')).toBe('1\n');
    expect(await read('instances/i/options/event-fork')).toBe('0\n');
    expect(await read('instances/i/trace_options')).toContain('\nnotrace_printk_dest\nnocopy_trace_marker\n');
  });
});

describe('files and instances', () => {
  it('has the kernel modes at the top level', async () => {
    const { fs } = setup();
    const expected: Record<string, string> = {
      README: '-r--r-----', available_tracers: '-r--r-----', buffer_percent: '-rw-r-----',
      buffer_size_kb: '-rw-r-----', buffer_subbuf_size_kb: '-rw-r-----', buffer_total_size_kb: '-r--r-----',
      current_tracer: '-rw-r-----', error_log: '-rw-r-----', free_buffer: '--w-------', instances: 'drwxr-x---',
      options: 'drwxr-x---', per_cpu: 'drwxr-x---', printk_formats: '-r--r-----', saved_cmdlines: '-r--r-----',
      saved_cmdlines_size: '-rw-r-----', saved_tgids: '-r--r-----', snapshot: '-rw-r-----', timestamp_mode: '-r--r-----',
      trace: '-rw-r-----', trace_clock: '-rw-r-----', trace_marker: '--w--w----', trace_marker_raw: '--w--w----',
      trace_options: '-rw-r-----', trace_pipe: '-r--r-----', tracing_cpumask: '-rw-r-----', tracing_on: '-rw-r-----',
      tracing_thresh: '-rw-r-----',
    };
    for (const [name, mode] of Object.entries(expected)) expect([name, lsMode(fs.stat(name).mode)]).toEqual([name, mode]);
    const percpu = ['buffer_size_kb', 'snapshot', 'snapshot_raw', 'stats', 'trace', 'trace_pipe', 'trace_pipe_raw'];
    expect(fs.readdir('per_cpu/cpu0').sort()).toEqual(percpu);
    expect(fs.readdir('per_cpu').sort()).toEqual(['cpu0', 'cpu1']);
  });

  it('gives instances the files the kernel gives them', async () => {
    const { fs } = setup();
    fs.mkdir('instances/foo');
    expect(fs.readdir('instances/foo').sort()).toEqual([
      'available_events', 'available_tracers', 'buffer_percent', 'buffer_size_kb', 'buffer_subbuf_size_kb', 'buffer_total_size_kb',
      'current_tracer', 'error_log', 'events', 'free_buffer', 'options', 'per_cpu', 'set_event', 'set_event_notrace_pid',
      'set_event_pid', 'set_ftrace_filter', 'set_ftrace_notrace', 'set_ftrace_notrace_pid', 'set_ftrace_pid',
      'show_event_filters', 'show_event_triggers', 'snapshot', 'syscall_user_buf_size', 'timestamp_mode', 'trace',
      'trace_clock', 'trace_marker', 'trace_marker_raw', 'trace_options', 'trace_pipe', 'tracing_cpumask', 'tracing_on',
    ]);
    const opts = fs.readdir('instances/foo/options');
    expect(opts).not.toContain('record-cmd');
    expect(opts).not.toContain('trace_printk');
    expect(opts).not.toContain('printk-msg-only');
    expect(opts).toContain('test_nop_accept');
    expect(fs.readdir('options')).toContain('record-cmd');
  });

  it('has tracing_max_latency on 6.12 only', () => {
    expect(setup({ series: '6.12' }).fs.readdir('')).toContain('tracing_max_latency');
    expect(setup().fs.readdir('')).not.toContain('tracing_max_latency');
  });

  it('refuses rmdir while a file of the instance is open', async () => {
    const { fs } = setup();
    fs.mkdir('instances/busy');
    const h = await fs.open('instances/busy/trace', 0);
    expect(() => fs.rmdir('instances/busy')).toThrow(expect.objectContaining({ code: 'EBUSY' }));
    h.release();
    fs.rmdir('instances/busy');
    expect(fs.readdir('instances')).toEqual([]);
  });

  it('sets tracers, refusing unknown ones', async () => {
    const { read, write } = setup();
    expect(await read('available_tracers')).toBe('blk mmiotrace function_graph function nop\n');
    expect(await errCode(write('current_tracer', 'foo'))).toBe('EINVAL');
    await write('current_tracer', 'nop  \n');
    expect(await read('current_tracer')).toBe('nop\n');
  });

  it('reads and sets the small attribute files', async () => {
    const { read, write } = setup();
    await write('tracing_on', '2');
    expect(await read('tracing_on')).toBe('1\n');
    expect(await errCode(write('tracing_on', 'abc'))).toBe('EINVAL');
    expect(await read('tracing_thresh')).toBe('0\n');
    await write('tracing_thresh', '100');
    expect(await read('tracing_thresh')).toBe('100\n');
    expect(await read('printk_formats')).toBe('');
  });

  it('keeps the comm cache with the kernel sizes', async () => {
    const { read, write, shell } = setup();
    expect(await read('saved_cmdlines_size')).toBe('6552\n');
    expect(await read('saved_cmdlines')).toBe('');
    const sh = shell('busybox', 0);
    await write('trace_marker', 'x\n', sh);
    expect(await read('saved_cmdlines')).toBe(`${sh.pid} busybox\n`);
    expect(await errCode(write('saved_cmdlines_size', '0'))).toBe('EINVAL');
    expect(await errCode(write('saved_cmdlines_size', '32769'))).toBe('EINVAL');
    await write('saved_cmdlines_size', '32768');
    expect(await read('saved_cmdlines_size')).toBe('45874\n');
    expect(await read('saved_cmdlines')).toBe('');
    await write('options/record-cmd', '0');
    await write('trace_marker', 'y\n', sh);
    expect(await read('trace')).toContain(`<...>-${sh.pid}`);
  });
});
