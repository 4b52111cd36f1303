#!/usr/bin/env node
// Builds data/kernel-<series>/call-paths.txt.br: the call trees the emulated
// kernel replays, cut out of function_graph traces of the real kernel taken
// by tools/oracle/kernel-paths.sh, cleaned of interrupts and page faults
// that happened to land in them, with holes where the emulator puts its own
// pieces (the tracefs file's operations, the path walk, sleeping).
//
//   cat tools/oracle/capture.sh tools/oracle/kernel-paths.sh | kernel-oracle [--series S] --out DIR run -
//   node tools/kernel-paths/build.mjs S DIR
//
// Output format (read by src/kernel/call_paths.ts): blocks introduced by a
// line `@NAME`; below it a tree of function names, two spaces per level.
// `name *N` repeats that subtree N times; `$hole` is a hole; `[flag] name`
// runs only when the flag holds.
import { readFileSync, writeFileSync, readdirSync, mkdirSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanTree, clone, emit, has, hole, irqy, key, node, openCapture, replace, flag, size, walk } from './lib.mjs';

const [series, dir] = process.argv.slice(2);
if (!series || !dir) {
  console.error('usage: build.mjs SERIES ORACLE_OUT_DIR');
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

const { graph, find } = openCapture(dir);

// --- blocks -----------------------------------------------------------------------

const blocks = new Map();
function block(name, kids) {
  blocks.set(name, Array.isArray(kids) ? kids : [kids]);
}

/** The syscall entry under x64_sys_call when it is traced (6.12), else the __x64_sys_ function itself. */
function sys(op, name, opts) {
  const t = find(op, name, opts);
  if (!t) throw new Error(`${series}: ${op}: no ${name}`);
  return walkHoles(cleanTree(t));
}

/** The path walk is the emulator's: per directory, @walk_perm and @walk_fast/@walk_miss; then the last component. */
function walkHoles(t) {
  for (const n of walk(t)) {
    const i = n.kids.findIndex((k) => /^link_path_walk/.test(k.name));
    if (i < 0) continue;
    n.kids[i].kids = [{ name: '$walk', kids: [] }];
    const next = n.kids[i + 1];
    if (next && (next.name === 'lookup_fast' || next.name === 'walk_component')) n.kids[i + 1] = { name: '$last', kids: [] };
    else n.kids.splice(i + 1, 0, { name: '$last', kids: [] });
  }
  return t;
}

// open: the write/truncate variant carries every piece; flags keep the ones a read-only open skips.
{
  const t = sys('echo-trace_marker', '__x64_sys_openat', { marker: /do_truncate/ });
  hole(t, 'do_dentry_open', '$fop.open', { after: /^(fsnotify_open_perm_and_set_mode|file_set_fsnotify_mode)$/, before: 'file_ra_state_init' });
  flag(t, ['mnt_want_write', 'mnt_get_write_access', 'mnt_drop_write'], 'write');
  flag(t, ['security_file_truncate', 'do_truncate'], 'trunc');
  block('sys_openat', t);
}
// the path walk: per directory, the permission check and the lookup (cached, or eventfs making it)
{
  const t = cleanTree(find('event-enable', '__x64_sys_openat', { marker: /eventfs_root_lookup/ }));
  const lpw = node(t, /^link_path_walk/);
  const perms = lpw.kids.map((k, i) => (k.name === 'inode_permission' ? i : -1)).filter((i) => i >= 0);
  block('walk_perm', cleanTree(clone(lpw.kids[perms[0]])));
  block('walk_fast', lpw.kids.slice(perms[0] + 1, perms[1]).map((k) => cleanTree(clone(k))));
  // The component eventfs had to make: lookup_slow (7.2: after a failed lookup_fast) or a walk_component holding it (6.12).
  let tail;
  for (const n of walk(t)) {
    const i = n.kids.findIndex((k) => (k.name === 'lookup_slow' || k.name === 'walk_component') && has(k, 'eventfs_root_lookup'));
    if (i < 0) continue;
    tail = n.kids[i].name === 'lookup_slow' && i > 0 && n.kids[i - 1].name === 'lookup_fast' ? [n.kids[i - 1], n.kids[i]] : [n.kids[i]];
    break;
  }
  if (!tail) throw new Error(`${series}: no eventfs lookup in the walk`);
  block('walk_miss', tail.map((k) => cleanTree(clone(k))));
}
{
  const t = sys('cat-README', '__x64_sys_read', { marker: 'simple_read_from_buffer' });
  const fop = hole(t, 'vfs_read', '$fop.read', { after: 'rw_verify_area' });
  block('sys_read', t);
  block('fop:tracing_readme_read', ['$op', ...fop]);
}
{
  const t = sys('echo-trace_marker', '__x64_sys_write');
  const fop = hole(t, 'vfs_write', '$fop.write', { after: 'rw_verify_area' });
  block('sys_write', t);
  block('fop:tracing_mark_write', ['$op', ...fop]);
}
{
  const t = sys('cat-set_event', '__x64_sys_close', { marker: 'seq_release' });
  const fput = node(t, '__fput');
  const fop = hole(fput, fput, '$fop.release', { after: 'security_file_release', before: 'module_put' });
  block('sys_close', t);
  block('fop:seq_release_private', fop.filter((k) => k.name !== 'seq_release'));
  block('fop:ftrace_event_release', ['$op', ...fop.filter((k) => k.name !== 'seq_release')]);
  const sr = fop.find((k) => k.name === 'seq_release');
  if (sr) block('fop:seq_release', ['$op', ...sr.kids]);
}
{
  const t = sys('ls-instances', '__x64_sys_getdents64', { marker: 'dcache_readdir' });
  const it = node(t, 'dcache_readdir');
  block('fop:dcache_readdir', ['$op', ...it.kids]);
  replace(t, 'dcache_readdir', '$fop.iterate');
  block('sys_getdents64', t);
  const e = sys('ls-events-sched', '__x64_sys_getdents64', { marker: 'eventfs_iterate' });
  block('fop:eventfs_iterate', ['$op', ...node(e, 'eventfs_iterate').kids]);
}
{
  const t = sys('stat-trace', '__x64_sys_newfstatat', { marker: /tracefs|vfs_statx|vfs_getattr/ });
  block('sys_newfstatat', t);
}
{
  const t = sys('mkdir-instance', '__x64_sys_mkdir');
  const m = node(t, 'tracefs_syscall_mkdir');
  m.kids.unshift({ name: '$op', kids: [] });
  block('sys_mkdir', t);
  const r = sys('rmdir-instance', '__x64_sys_rmdir');
  const rm = node(r, 'tracefs_syscall_rmdir');
  rm.kids.unshift({ name: '$op', kids: [] });
  block('sys_rmdir', r);
}
{
  const c = sys('chmod', '__x64_sys_chmod');
  c.name = '__x64_sys_fchmodat';
  block('sys_fchmodat', c);
  const o = sys('chown', '__x64_sys_chown');
  o.name = '__x64_sys_fchownat';
  block('sys_fchownat', o);
  const tr = sys('truncate-s0', '__x64_sys_ftruncate');
  block('sys_truncate', tr);
}
// f_op bodies of common files, as named by FileOps.names
{
  const seq = sys('cat-available_tracers', '__x64_sys_read', { marker: 'seq_read' });
  block('fop:seq_read', ['$op', ...node(seq, 'seq_read').kids]);
  const op = sys('cat-available_tracers', '__x64_sys_openat', { marker: 'seq_open' });
  block('fop:show_traces_open', ['$op', ...hole(op, 'do_dentry_open', '$x', { after: /^(fsnotify_open_perm_and_set_mode|file_set_fsnotify_mode)$/, before: 'file_ra_state_init' })]);
  const rd = sys('cat-README', '__x64_sys_openat', { marker: /tracefs_permission/ });
  block('fop:tracing_open_generic', ['$op', ...hole(rd, 'do_dentry_open', '$x', { after: /^(fsnotify_open_perm_and_set_mode|file_set_fsnotify_mode)$/, before: 'file_ra_state_init' })]);
  const tm = sys('echo-trace_marker', '__x64_sys_openat', { marker: /do_truncate/ });
  block('fop:tracing_open_generic_tr', ['$op', ...hole(tm, 'do_dentry_open', '$x', { after: /^(fsnotify_open_perm_and_set_mode|file_set_fsnotify_mode)$/, before: 'file_ra_state_init' })]);
  const en = sys('cat-enable', '__x64_sys_read', { marker: 'rw_verify_area' });
  block('fop:event_enable_read', ['$op', ...hole(en, 'vfs_read', '$x', { after: 'rw_verify_area' })]);
  const ew = sys('event-enable', '__x64_sys_write');
  block('fop:event_enable_write', ['$op', ...hole(ew, 'vfs_write', '$x', { after: 'rw_verify_area' })]);
  const dw = sys('dynevent', '__x64_sys_write', { marker: /kstrndup|kallsyms/ });
  block('fop:dyn_event_write', ['$op', ...hole(dw, 'vfs_write', '$x', { after: 'rw_verify_area' })]);
  const ct = sys('cat-current_tracer', '__x64_sys_read', { marker: 'rw_verify_area' });
  block('fop:tracing_set_trace_read', ['$op', ...hole(ct, 'vfs_read', '$x', { after: 'rw_verify_area' })]);
  const to = sys('cat-tracing_on', '__x64_sys_read', { marker: 'rw_verify_area' });
  block('fop:rb_simple_read', ['$op', ...hole(to, 'vfs_read', '$x', { after: 'rw_verify_area' })]);
  const bs = sys('cat-buffer_size_kb', '__x64_sys_read', { marker: 'rw_verify_area' });
  block('fop:tracing_entries_read', ['$op', ...hole(bs, 'vfs_read', '$x', { after: 'rw_verify_area' })]);
  const st = sys('cat-per_cpu-stats', '__x64_sys_read', { marker: 'rw_verify_area' });
  block('fop:tracing_stats_read', ['$op', ...hole(st, 'vfs_read', '$x', { after: 'rw_verify_area' })]);
  const sf = sys('echo-set_ftrace_filter', '__x64_sys_write', { marker: 'rw_verify_area' });
  block('fop:ftrace_filter_write', ['$op', ...hole(sf, 'vfs_write', '$x', { after: 'rw_verify_area' })]);
  const tp = find('trace_pipe-interrupted', '__x64_sys_read', { marker: /ring_buffer|schedule|prepare_to_wait/ });
  if (tp) block('fop:tracing_read_pipe', ['$op', ...hole(cleanTree(tp), 'vfs_read', '$x', { after: 'rw_verify_area' })]);
}
// poll(2) on a tracefs file: no capture (nothing in busybox/coreutils polls one); modelled on fs/select.c's calls.
block('sys_poll', {
  name: '__x64_sys_poll',
  kids: [{ name: 'do_sys_poll', kids: [{ name: '__check_object_size', kids: ['check_stack_object', 'is_vmalloc_addr', '__virt_addr_valid'].map((n) => ({ name: n, kids: [] })) }, { name: '$fop.poll', kids: [] }, { name: 'poll_freewait', kids: [] }] }],
});
block('fop:tracing_poll_pipe', ['$op', { name: '__pollwait', kids: [{ name: '_raw_spin_lock_irqsave', kids: [] }, { name: '_raw_spin_unlock_irqrestore', kids: [] }] }]);
block('fop:tracing_buffers_poll', ['$op', { name: '__pollwait', kids: [{ name: '_raw_spin_lock_irqsave', kids: [] }, { name: '_raw_spin_unlock_irqrestore', kids: [] }] }]);

// processes: fork (parent side), the child's first return, exec, exit, wait
{
  const kc = find('sh-c-true', 'kernel_clone');
  block('kernel_clone', cleanTree(kc).kids);
  const rf = find('sh-c-true', 'ret_from_fork');
  block('ret_from_fork', cleanTree(rf).kids);
  const ex = find('sh-c-true', '__x64_sys_execve');
  block('sys_execve', cleanTree(ex));
  const eg = find('sh-c-true', '__x64_sys_exit_group');
  block('sys_exit_group', cleanTree(eg));
  const w = find('sh-c-true', '__x64_sys_wait4', { marker: /release_task|wait_task_zombie/ }) ?? find('sh-c-true', '__x64_sys_wait4');
  block('sys_wait4', cleanTree(w));
}
// the kernel's own activity: every complete tree of an idle system, per kind of task
{
  const trees = graph('idle-graph.txt.gz');
  const kinds = new Map();
  const kindOf = (t) =>
    t.pid === 0 ? 'idle' : /^rcu_pre/.test(t.comm) ? 'rcu_preempt' : /^kworker/.test(t.comm) ? 'kworker' : /^ksoftir/.test(t.comm) ? 'ksoftirqd' : /^migrati/.test(t.comm) ? 'migration' : undefined;
  for (const t of trees) {
    const k = kindOf(t);
    if (!k) continue;
    if (!kinds.has(k)) kinds.set(k, []);
    kinds.get(k).push(t);
  }
  const switchHole = (t) => {
    for (const n of walk(t)) {
      const i = n.kids.findIndex((k) => k.name === '__traceiter_sched_switch');
      if (i < 0) continue;
      n.kids[i] = { name: '$switch', kids: [] };
      if (n.kids[i + 1]?.name === 'ktime_get_real_ts64') n.kids.splice(i + 1, 1);
    }
    return t;
  };
  // A run of a kernel thread: from being switched in (finish_task_switch, emitted by the switch) to its next schedule().
  for (const [k, ts] of kinds) {
    if (k === 'idle') continue;
    let seg = [];
    let i = 0;
    for (const t of ts) {
      if (/^finish_task_switch/.test(t.name)) continue;
      seg.push(switchHole(clone(t)));
      if (t.name === 'schedule') {
        if (seg.length > 1 && has(t, '__traceiter_sched_switch')) block(`run:${k}:${i++}`, seg);
        seg = [];
      }
    }
  }
  let ii = 0;
  for (const t of kinds.get('idle') ?? []) {
    if (t.name === 'do_idle' && has(t, 'schedule_idle') && has(t, '__traceiter_sched_switch')) block(`run:idle:${ii++}`, switchHole(clone(t)));
  }
  const sched = [...(kinds.get('rcu_preempt') ?? []), ...(kinds.get('kworker') ?? [])].find((t) => t.name === 'schedule' && has(t, '__traceiter_sched_switch') && !irqy(t) && !has(t, 'wq_worker_sleeping'));
  if (sched) block('schedule', switchHole(clone(sched)).kids);
  const sidle = (kinds.get('idle') ?? []).flatMap((t) => [...walk(t)]).find((n) => n.name === 'schedule_idle' && has(n, '__traceiter_sched_switch') && !irqy(n));
  if (sidle) block('schedule_idle', switchHole(clone(sidle)).kids);
  const fts = trees.filter((t) => /^finish_task_switch/.test(t.name));
  const shapes = new Map();
  for (const t of fts) shapes.set(key(t), [...(shapes.get(key(t)) ?? []), t]);
  const common = [...shapes.values()].sort((a, b) => b.length - a.length)[0];
  if (common) block('finish_task_switch', clone(common[0]));
  // interrupts and softirqs wherever they struck
  const all = trees.flatMap((t) => [...walk(t)]);
  const irq = [];
  for (const t of trees) {
    const sibs = [t, ...walk(t)].flatMap((n) => [n.kids]);
    void sibs;
  }
  const timer = all.find((n) => n.name === '__sysvec_apic_timer_interrupt' && has(n, 'tick_nohz_handler') && has(n, 'update_process_times'));
  if (timer) irq.push(clone(timer));
  block('irq_timer', irq);
  const softirqs = all.filter((n) => n.name === 'handle_softirqs');
  softirqs.sort((a, b) => size(b) - size(a));
  block('softirqs', softirqs.slice(0, 6).map((n) => ({ name: 'handle_softirqs', kids: clone(n).kids })));
  const ttwu = all.find((n) => n.name === 'try_to_wake_up' && size(n) > 8);
  if (ttwu) block('try_to_wake_up', clone(ttwu).kids);
}

// --- output ----------------------------------------------------------------------

const out = [`# Call trees of Linux ${series} (tools/kernel-paths/build.mjs from a real kernel's function_graph traces)`];
for (const [name, kids] of blocks) {
  out.push(`@${name}`);
  emit(kids, 0, out);
}
const text = out.join('\n') + '\n';
const dest = join(root, 'data', `kernel-${series}`);
mkdirSync(dest, { recursive: true });
writeFileSync(join(dest, 'call-paths.txt.br'), brotliCompressSync(Buffer.from(text), { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
if (process.env.KEEP_TEXT) writeFileSync(process.env.KEEP_TEXT, text);
console.error(`${series}: ${blocks.size} blocks, ${out.length} lines, ${text.length} bytes`);
void readdirSync;
