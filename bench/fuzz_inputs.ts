/**
 * What the fuzzer writes: for each kind of tracefs file, inputs from a small
 * grammar of what the file accepts (and almost accepts), mutated now and
 * then, next to random bytes. Deterministic for a given random stream.
 */
import { Rng } from '../src/kernel/rng.js';

/** A stream of uniform numbers in [0, 1) from a seed (the kernel's own generator). */
export function rng(seed: number): () => number {
  const g = new Rng(seed, 'fuzz');
  return () => g.next();
}

export type Rand = () => number;

const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rand, n: number): number => Math.floor(r() * n);
const times = (r: Rand, max: number, f: () => string, sep = ' '): string =>
  Array.from({ length: int(r, max + 1) }, f).join(sep);

const FUNCS = ['vfs_read', 'vfs_write', 'do_sys_openat2', 'kfree', 'dput', 'schedule', 'mutex_lock', 'seq_read_iter', 'ksys_read', 'kernel_clone', 'do_exit', '_raw_spin_lock', 'nosuch_fn', 'vfs_*', '*read*', 'trace_event_raw_event_sched_switch', 'native_sched_clock', 'active_show'];
const TPS = ['sched_switch', 'kfree', 'kmem_cache_alloc', 'sched_wakeup', 'sys_enter', 'nosuch_tp'];
const EVENTS = ['sched.sched_switch', 'sched/sched_wakeup', 'syscalls.sys_enter_openat', 'kmem.kfree', 'skb.kfree_skb', 'nosys.noev', 'kprobes.kp', 'fprobes.fp', 'synthetic.syn'];
const REGS = ['%ax', '%di', '%si', '%dx', '%cx', '%sp', '%ip', '%r8', '%zz', '%flags'];
const TYPES = ['u8', 'u16', 'u32', 'u64', 's8', 's32', 'x8', 'x64', 'string', 'ustring', 'symbol', 'symstr', 'char', 'b4@4/32', 'u8[4]', 'string[2]', '%pd', '%pD', 'bad', ''];
const NAMES = ['kp', 'fp', 'tp', 'ep', 'syn', 'g/e', 'kprobes/kp', 'fprobes/fp', 'eprobes/ep', 'x'.repeat(70), '1bad', 'a.b', ''];
const FIELDS = ['common_pid', 'prev_pid', 'next_pid', 'prev_comm', 'ptr', 'call_site', 'bytes_req', 'filename', 'flags', 'nosuch', 'common_timestamp', 'cpu'];
const NUMS = ['0', '1', '-1', '2', '10', '4096', '4294967295', '4294967296', '18446744073709551615', '0x10', '1k', '', ' 5', '5 ', '007', '99999999999999999999'];

function fetchArg(r: Rand, depth = 0): string {
  switch (int(r, 12)) {
    case 0: return pick(r, REGS);
    case 1: return `$arg${int(r, 12)}`;
    case 2: return pick(r, ['$retval', '$comm', '$stack', `$stack${int(r, 20)}`, '$arg*', '$current']);
    case 3: return `@${pick(r, ['jiffies', 'linux_proc_banner', 'nosuch', '0x1000', '+0x10'])}`;
    case 4: return depth < 16 ? `${pick(r, ['+', '-', '+u', ''])}${int(r, 64)}(${fetchArg(r, depth + 1)})` : '%di';
    case 5: return pick(r, ['file', 'file->f_mode', 'file->f_path.dentry->d_name.name', 'count', 'buf', 'ptr', 'prev->comm', 'next->pid', 'p->se.x', 'file->', 'file-']);
    case 6: return `\\${pick(r, ['1', '-5', '0xff', '"str"', '"open', 'x'])}`;
    case 7: return `$${pick(r, FIELDS)}`;
    case 8: return `(${pick(r, ['sk_buff', 'file', 'nosuch'])})${pick(r, FIELDS)}->len`;
    default: return pick(r, REGS);
  }
}

/** Arguments most probes accept: so that definitions get past their arguments often enough. */
const GOOD_ARGS = ['%di', '%si:u32', '+0(%di):u8', '$comm', '$stack0', '@jiffies', 'x=%ax:x64', '$arg1', '$arg2:x32', 'file', 'count:u32', 'v=$retval', 'd=$arg1:%pd', 's=+0(%si):string'];

function probeArg(r: Rand): string {
  if (r() < 0.5) return pick(r, GOOD_ARGS);
  const name = r() < 0.6 ? `${pick(r, ['a', 'b', 'arg1', 'common_pid', 'x'.repeat(40), '1a', ''])}=` : '';
  const type = r() < 0.5 ? `:${pick(r, TYPES)}` : '';
  return `${name}${fetchArg(r)}${type}`;
}

function probeDef(r: Rand): string {
  const args = () => times(r, 4, () => probeArg(r));
  const name = () => (r() < 0.7 ? `:${pick(r, NAMES)}` : '');
  switch (int(r, 9)) {
    case 0: return `p${name()} ${pick(r, FUNCS)}${r() < 0.4 ? `+${pick(r, ['0', '4', '5', '9', '16', '0x10', '99999'])}` : ''}${r() < 0.2 ? '%return' : ''} ${args()}`;
    case 1: return `r${r() < 0.3 ? int(r, 5000) : ''}${name()} ${pick(r, FUNCS)}${r() < 0.3 ? '+4' : ''} ${args()}`;
    case 2: return `f${name()} ${pick(r, FUNCS)}${r() < 0.4 ? '%return' : ''} ${args()}`;
    case 3: return `t${name()} ${pick(r, TPS)} ${args()}`;
    case 4: return `e${name()} ${pick(r, EVENTS)} ${args()}${r() < 0.3 ? ` if ${filterExpr(r)}` : ''}`;
    case 5: return `s${name()} ${synthFields(r)}`;
    case 6: return `-:${pick(r, NAMES)}${r() < 0.3 ? ` ${pick(r, FUNCS)}` : ''}`;
    case 7: return `p${name()} /bin/sh:${pick(r, ['0x4760', '0', '10a', '0x4760(0x10)'])} ${args()}`;
    default: return pick(r, ['', '\n', '# c', '!', '-:*', 'p', 'x y']);
  }
}

function synthFields(r: Rand): string {
  return times(r, 6, () => `${pick(r, ['u64', 'int', 'char', 'pid_t', 'unsigned long', 'char[16]', 'long[]', 'foo'])} ${pick(r, ['a', 'b', 'lat', 'pid', 'comm[16]', 's[]', 'a'])}`, pick(r, ['; ', ';', ' ']));
}

function filterExpr(r: Rand, depth = 0): string {
  if (depth < 3 && r() < 0.3) return `${filterExpr(r, depth + 1)} ${pick(r, ['&&', '||'])} ${filterExpr(r, depth + 1)}`;
  if (depth < 3 && r() < 0.1) return `${pick(r, ['!', ''])}(${filterExpr(r, depth + 1)})`;
  return `${pick(r, FIELDS)} ${pick(r, ['==', '!=', '<', '>=', '&', '~', '=~'])} ${pick(r, [...NUMS, '"a*"', '"bash"', 'sym', '.function', 'vfs_read'])}`;
}

function trigger(r: Rand): string {
  const filt = () => (r() < 0.3 ? ` if ${filterExpr(r)}` : '');
  const neg = r() < 0.2 ? '!' : '';
  switch (int(r, 6)) {
    case 0: return `${neg}${pick(r, ['traceon', 'traceoff', 'snapshot', 'stacktrace', 'enable_event:sched:sched_switch', 'disable_event:kmem:kfree', 'nosuch'])}${r() < 0.3 ? `:${pick(r, NUMS)}` : ''}${filt()}`;
    case 1:
    case 2: {
      const keys = times(r, 3, () => `${pick(r, FIELDS)}${r() < 0.3 ? `.${pick(r, ['hex', 'sym', 'log2', 'buckets=10', 'execname', 'bad'])}` : ''}`, ',');
      const vals = r() < 0.5 ? `:vals=${times(r, 2, () => pick(r, [...FIELDS, 'hitcount', '$lat']), ',')}` : '';
      const vars = r() < 0.3 ? `:ts0=common_timestamp.usecs` : '';
      const act = r() < 0.3 ? `:onmatch(${pick(r, EVENTS)}).${pick(r, ['trace(syn,$ts0)', 'save(prev_pid)', 'snapshot()'])}` : '';
      return `${neg}hist:keys=${keys}${vals}${vars}${act}${r() < 0.2 ? `:sort=${pick(r, FIELDS)}` : ''}${r() < 0.2 ? ':size=' + pick(r, NUMS) : ''}${r() < 0.1 ? `:${pick(r, ['pause', 'cont', 'clear'])}` : ''}${filt()}`;
    }
    default: return `${neg}${pick(r, ['hist', 'hist:', 'traceon:', ':', 'snapshot:x'])}${filt()}`;
  }
}

function funcFilter(r: Rand): string {
  return times(r, 3, () => {
    const f = `${r() < 0.2 ? '!' : ''}${pick(r, [...FUNCS, '*', '', 'a*b', ':mod:ext4', '*:mod:*', '[a-c]*'])}`;
    return r() < 0.2 ? `${f}:${pick(r, ['traceoff', 'traceon:5', 'snapshot', 'stacktrace', 'dump', 'cpudump', 'enable_event:sched:sched_switch:2', 'bad'])}` : f;
  });
}

/** The kind of a writable file, by its name and where it is. */
export type FileKind = 'probe' | 'filter' | 'trigger' | 'enable' | 'funcfilter' | 'number' | 'tracer' | 'option' | 'pidlist' | 'events' | 'text';

export function kindOf(path: string): FileKind {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (['dynamic_events', 'kprobe_events', 'uprobe_events', 'synthetic_events'].includes(name)) return 'probe';
  if (name === 'filter') return 'filter';
  if (name === 'trigger') return 'trigger';
  if (name === 'enable' || path.includes('/options/')) return 'enable';
  if (/^set_(ftrace|graph)_(no)?(filter|notrace)$|^set_ftrace_notrace$|^stack_trace_filter$/.test(name)) return 'funcfilter';
  if (name === 'current_tracer') return 'tracer';
  if (name === 'trace_options') return 'option';
  if (/pid$/.test(name)) return 'pidlist';
  if (name === 'set_event' || name === 'set_event_notrace') return 'events';
  if (/^(buffer_size_kb|buffer_percent|tracing_on|tracing_thresh|tracing_max_latency|max_graph_depth|tracing_cpumask|saved_cmdlines_size|stack_max_size|function_profile_enabled|snapshot|free_buffer|buffer_subbuf_size_kb|tracing_max_latency|hwlat_.*|osnoise.*|.*_ms|.*_us|width|window)$/.test(name)) return 'number';
  return 'text';
}

/** One input for a file of this kind: grammar-based, mutated, or random. */
export function inputFor(r: Rand, path: string, kind: FileKind): Buffer {
  const mode = r();
  if (mode < 0.1) return randomBytes(r);
  let s: string;
  switch (kind) {
    case 'probe': s = r() < 0.15 ? `${probeDef(r)}\n${probeDef(r)}` : probeDef(r); break;
    case 'filter': s = r() < 0.1 ? '0' : filterExpr(r); break;
    case 'trigger': s = trigger(r); break;
    case 'enable': s = pick(r, ['0', '1', '2', '-1', '', '1\n', '0x1', 'yes']); break;
    case 'funcfilter': s = funcFilter(r); break;
    case 'tracer': s = pick(r, ['nop', 'function', 'function_graph', 'wakeup', 'blk', 'mmiotrace', 'hwlat', 'nosuch', '', 'nop\n']); break;
    case 'option': s = `${r() < 0.5 ? 'no' : ''}${pick(r, ['print-parent', 'sym-offset', 'stacktrace', 'function-fork', 'event-fork', 'record-cmd', 'overwrite', 'nosuch', 'funcgraph-proc', 'irq-info'])}`; break;
    case 'pidlist': s = times(r, 4, () => pick(r, ['1', '0', String(process.pid), '-1', '99999999', 'abc', '4194304'])); break;
    case 'events': s = `${r() < 0.2 ? '!' : ''}${pick(r, ['sched:sched_switch', 'sched:*', '*:*', 'kmem:', ':kfree', 'nosuch', 'syscalls:sys_enter_openat', ''])}`; break;
    case 'number': s = /buffer_size_kb$/.test(path) ? pick(r, ['1', '7', '64', '1408', '4096', '0', '-1', 'abc', '']) : pick(r, NUMS); break;
    default: s = pick(r, ['hello', '', '\n', 'x'.repeat(int(r, 5000)), '0', '1', 'nop', 'sched:sched_switch']);
  }
  if (mode < 0.25) s = mutate(r, s);
  return Buffer.from(s + (r() < 0.8 ? '\n' : ''), 'latin1');
}

const NASTY = ['\0', '\n', ' ', '\t', '(', ')', ':', '%', '$', '"', '\\', '=', '-', '>', '!', '*', '\xff', '0x', '+', '[', ']', ';', ',', '.'];

function mutate(r: Rand, s: string): string {
  const n = 1 + int(r, 4);
  for (let i = 0; i < n; i++) {
    const at = int(r, s.length + 1);
    switch (int(r, 4)) {
      case 0: s = s.slice(0, at) + pick(r, NASTY) + s.slice(at); break;
      case 1: s = s.slice(0, at) + s.slice(at + 1 + int(r, 4)); break;
      case 2: s = s.slice(0, at) + s.slice(0, at) + s.slice(at); break;
      default: s = s.slice(0, at) + pick(r, NASTY).repeat(1 + int(r, 40)) + s.slice(at);
    }
  }
  return s;
}

function randomBytes(r: Rand): Buffer {
  const b = Buffer.alloc(int(r, r() < 0.1 ? 9000 : 64));
  for (let i = 0; i < b.length; i++) b[i] = r() < 0.7 ? 32 + int(r, 95) : int(r, 256);
  return b;
}
