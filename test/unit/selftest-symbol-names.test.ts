/**
 * Every kernel symbol the 7.2, 7.3 and 6.12 ftrace selftests (test.d) probe,
 * filter, grep for or fall back on, and what the real kernels answer for it:
 * absent, a traceable function (in available_filter_functions), a function
 * ftrace cannot trace, or a data symbol. The built-in model must agree.
 */
import { describe, expect, it } from 'vitest';
import { availableFilterFunctionsText, kallsymsText } from '../../src/kernel/kallsyms.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { builtinSymbols } from '../../src/kernel/symbols_builtin.js';

type Verdict =
  | 'absent'
  /** one text symbol, traceable */
  | 'traced'
  /** one text symbol, not in available_filter_functions */
  | 'untraced'
  /** `t` symbols of that name, all traceable: [count] */
  | [number]
  /** one kallsyms symbol of this type letter */
  | { data: string };

/** name → [7.2, 7.3, 6.12], where (test.d file) */
const NAMES: Record<string, [Verdict, Verdict, Verdict, string]> = {
  vfs_read: ['traced', 'traced', 'traced', 'kprobe/*, dynevent/*, ftrace/*: the usual probe and filter target'],
  vfs_write: ['traced', 'traced', 'traced', 'the write path the emulated kernel runs'],
  vfs_open: ['traced', 'traced', 'traced', 'dynevent/add_remove_fprobe.tc PLACE2, kprobe/kprobe_args_vfs.tc'],
  dput: ['traced', 'traced', 'traced', 'kprobe/kprobe_args_vfs.tc, dynevent/fprobe_args_vfs.tc (%pd)'],
  kfree: ['traced', 'traced', 'traced', 'dynevent/add_remove_btfarg.tc TP, fprobe/tprobe tests'],
  kmem_cache_free: ['traced', 'traced', 'traced', 'dynevent/add_remove_fprobe.tc PLACE2 (7.2), filter/event-filter-function.tc'],
  kmem_cache_alloc: ['absent', 'absent', 'absent', 'a tracepoint only (TP2 of add_remove_btfarg.tc); the function is kmem_cache_alloc_noprof'],
  kernel_clone: ['traced', 'traced', 'traced', 'functions: FUNCTION_FORK when `grep "\\bkernel_clone\\b" /proc/kallsyms` matches'],
  _do_fork: ['absent', 'absent', 'absent', 'functions: FUNCTION_FORK on old kernels'],
  do_exit: ['traced', 'traced', 'traced', 'kprobe/kprobe_multiprobe.tc SYM2'],
  schedule: ['traced', 'traced', 'traced', 'ftrace/func_set_ftrace_file.tc FUNC1, fgraph-filter-stack.tc, func_traceonoff_triggers.tc'],
  '.schedule': ['absent', 'absent', 'absent', 'func_traceonoff_triggers.tc, fgraph-filter-stack.tc (powerpc name)'],
  __schedule: ['untraced', 'untraced', 'untraced', 'issue 3: the scheduler core, notrace'],
  sched_tick: ['traced', 'traced', 'traced', 'ftrace/func_set_ftrace_file.tc FUNC2'],
  scheduler_tick: ['absent', 'absent', 'absent', 'ftrace/func_set_ftrace_file.tc FUNC2 on old kernels'],
  schedule_timeout: ['traced', 'traced', 'traced', 'dynevent/add_remove_fprobe.tc PLACE3 (7.2)'],
  proc_reg_write: ['traced', 'traced', 'traced', 'ftrace/fgraph-retval.tc'],
  tracefs_create_dir: ['traced', 'traced', 'traced', 'kprobe/probepoint.tc TARGET_FUNC'],
  eventfs_create_dir: ['traced', 'traced', 'traced', 'kprobe/kprobe_args_char.tc, kprobe_args_string.tc (DIR_NAME)'],
  eventfs_add_dir: ['absent', 'absent', 'absent', 'kprobe/kprobe_args_char.tc, kprobe_args_string.tc on older kernels'],
  do_sys_openat2: ['traced', 'traced', 'traced', 'kprobe/kprobe_args_user.tc'],
  do_sys_open: ['traced', 'traced', 'traced', 'kprobe/kprobe_args_user.tc'],
  vfs_symlink: ['traced', 'traced', 'traced', 'kprobe/kprobe_args_user.tc'],
  getname_flags: ['traced', 'traced', 'traced', 'dynevent/add_remove_btfarg.tc TP3'],
  inet_csk_accept: ['traced', 'traced', 'traced', 'kprobe/kretprobe_maxactive.tc'],
  wake_up_process: ['traced', 'traced', 'traced', 'direct/kprobe-direct.tc'],
  do_execve: ['absent', 'absent', 'absent', 'ftrace/func-filter-pid.tc, func-filter-notrace-pid.tc (`do_execve*` matches do_execveat_common)'],
  name_show: [[12], [12], [11], 'kprobe/kprobe_non_uniq_symbol.tc: more than one `t name_show`'],
  tracing_mark_write: ['untraced', 'untraced', 'untraced', '00basic/trace_marker.tc: the marker lines name it'],
  linux_proc_banner: [{ data: 'D' }, { data: 'D' }, { data: 'D' }, 'kprobe/kprobe_args_symbol.tc: `grep "linux_proc_banner$" /proc/kallsyms`'],
  _sdata: [{ data: 'T' }, { data: 'T' }, { data: 'D' }, 'kprobe/kprobe_args_syntax.tc GOODSYM: `grep -qw _sdata /proc/kallsyms`'],
  ksys_read: ['traced', 'traced', 'traced', 'the read path (kretprobe callers: ksys_read+0x7b/0x110 <- vfs_read)'],
  __fput: ['traced', 'traced', 'traced', 'the close path'],
  uprobe_register: ['traced', 'traced', 'traced', 'dynevent/add_remove_uprobe.tc (comment)'],
  trace_printk_irq_work: ['absent', 'absent', 'absent', 'ftrace/func_mod_trace.tc, kprobe/kprobe_module.tc: module trace-printk, not built by Debian'],
  foo_bar: ['absent', 'absent', 'absent', 'dynevent/add_remove_*_module.tc: module trace-events-sample, not built by Debian'],
  my_direct_func: ['absent', 'absent', 'absent', 'direct/*: module ftrace-direct, not built by Debian'],
};

/** The column of NAMES for each series. */
const COLUMN: Record<Series, number> = { '7.2': 0, '7.3': 1, '6.12': 2 };

describe.each(SERIES)('names the selftests rely on, %s', (series) => {
  const col = COLUMN[series];
  const t = builtinSymbols(series);
  const aff = new Set(availableFilterFunctionsText(t).toString('latin1').split('\n'));

  it.each(Object.keys(NAMES))('%s', (name) => {
    const want = NAMES[name]![col] as Verdict;
    const syms = t.symbolsByName(name);
    const fns = t.byName(name);
    if (want === 'absent') {
      expect(syms).toEqual([]);
      expect(aff.has(name)).toBe(false);
    } else if (want === 'traced' || want === 'untraced') {
      expect(fns).toHaveLength(1);
      expect(syms).toHaveLength(1);
      expect(fns[0]!.traceable).toBe(want === 'traced');
      expect(aff.has(name)).toBe(want === 'traced');
    } else if (Array.isArray(want)) {
      expect(fns).toHaveLength(want[0]);
      expect(fns.every((f) => f.type === 't' && f.traceable)).toBe(true);
    } else {
      expect(syms.map((s) => s.type)).toEqual([want.data]);
    }
  });

  it('greps in /proc/kallsyms as the tests do', () => {
    const ks = kallsymsText(t).toString('latin1');
    expect(/\bkernel_clone\b/.test(ks)).toBe(true);
    expect(ks.match(/^[0-9a-f]+ t name_show$/gm)!.length).toBeGreaterThan(1);
    expect(/linux_proc_banner$/m.test(ks)).toBe(true);
    // kprobe_eventname.tc: an .isra. function listed once in available_filter_functions.
    const isra = t.functions.filter((f) => /\.isra\./.test(f.name) && f.traceable && !f.module);
    expect(isra.length).toBeGreaterThan(100);
    // kprobe_eventname.tc: `grep " [tT] .*vfs_read$" /proc/kallsyms | tail -n 1` is vfs_read.
    expect(ks.match(/ [tT] .*vfs_read$/gm)!.at(-1)).toBe(' T vfs_read');
  });

  it('has globs match many functions, as on a real kernel', () => {
    const names = [...aff];
    const count = (re: RegExp): number => names.filter((n) => re.test(n)).length;
    expect(count(/sched/)).toBeGreaterThan(300);
    expect(count(/lock/)).toBeGreaterThan(1000);
    expect(count(/rcu/)).toBeGreaterThan(200);
    expect(count(/spin/)).toBeGreaterThan(20);
    expect(count(/^mutex.*unl/)).toBeGreaterThanOrEqual(1);
    expect(count(/schedule$/)).toBeGreaterThan(5);
    expect(count(/^do_execve/)).toBeGreaterThan(0);
  });
});
