// Shared by the call-path builders (build.mjs, host.mjs): function_graph
// traces of the real kernel parsed into call trees, the tree helpers that cut
// them into blocks, and the text format src/kernel/call_paths.ts reads.
import { readFileSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync } from 'node:zlib';
import { join } from 'node:path';

// --- function_graph parsing -------------------------------------------------

const LINE = /^\s*(?:[\d.]+\s*\|\s*)?(\d+)\)\s+(.+?)-(\d+)\s+\|\s*([+!#*@$]?\s*[\d.]*\s*(?:us)?)\s*\|(\s*)(.*)$/;

/** Top-level call trees of a trace, per task, in order. */
function parseGraph(dir, file) {
  let text = readFileSync(join(dir, file));
  if (file.endsWith('.gz')) text = gunzipSync(text);
  const stacks = new Map();
  const trees = [];
  for (const line of text.toString('latin1').split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const [, cpu, task, pid, , ind, body] = m;
    const key = `${cpu}/${pid}`;
    let st = stacks.get(key);
    if (!st) stacks.set(key, (st = []));
    const depth = Math.max(0, (ind.length - 2) >> 1);
    if (body.startsWith('}')) {
      st.pop();
      continue;
    }
    const fm = /^([A-Za-z_0-9.]+)\(\)\s*([{;])/.exec(body);
    if (!fm) continue;
    const node = { name: fm[1], kids: [], comm: task.trim(), pid: Number(pid), cpu: Number(cpu) };
    while (st.length > depth) st.pop();
    if (st.length) st[st.length - 1].kids.push(node);
    else trees.push(node);
    if (fm[2] === '{') st.push(node);
  }
  return trees;
}

/** The traces of one oracle output directory (op-NAME.txt.gz), parsed once each. */
export function openCapture(dir) {
  const cache = new Map();
  const graph = (op) => {
    const f = op.endsWith('.gz') ? op : `op-${op}.txt.gz`;
    if (!cache.has(f)) cache.set(f, parseGraph(dir, f));
    return cache.get(f);
  };
  /** The subtrees named `name` (any depth) in a trace, optionally containing `marker`, cleanest first. */
  const find = (op, name, { marker, comm, nth = 0, where } = {}) => {
    const hits = [];
    for (const t of graph(op)) {
      if (comm && t.comm !== comm) continue;
      for (const n of walk(t)) if (n.name === name && (!marker || has(n, marker)) && (!where || where(n))) hits.push(n);
    }
    if (!hits.length) return undefined;
    const clean = hits.filter((h) => !noisy(h));
    const pool = clean.length ? clean : hits;
    return clone(pool[Math.min(nth, pool.length - 1)]);
  };
  return { graph, find };
}

// --- tree helpers -------------------------------------------------------------

export function* walk(n) {
  yield n;
  for (const k of n.kids) yield* walk(k);
}
export const has = (n, name) => [...walk(n)].some((x) => (name instanceof RegExp ? name.test(x.name) : x.name === name));
const NOISE = /^(irq_enter_rcu|__sysvec_\w+|handle_mm_fault|lock_vma_under_rcu|lock_mm_and_find_vma|rcu_note_context_switch|asm_\w+)$/;
export const noisy = (n) => [...walk(n)].some((x) => NOISE.test(x.name));
export const size = (n) => [...walk(n)].length;
const IRQ = /^(irq_enter_rcu|__sysvec_\w+|handle_mm_fault|lock_vma_under_rcu|lock_mm_and_find_vma|asm_\w+)$/;
export const irqy = (n) => [...walk(n)].some((x) => IRQ.test(x.name));

export function clone(n) {
  return { name: n.name, kids: n.kids.map(clone), flag: n.flag, rep: n.rep };
}

const FAULT = new Set(['lock_vma_under_rcu', 'lock_mm_and_find_vma', 'handle_mm_fault', 'up_read', 'raw_irqentry_exit_cond_resched', '__rcu_read_lock', 'mem_cgroup_from_task', 'count_memcg_events', '__rcu_read_unlock', 'vma_end_read']);

/** Drops interrupts, page faults and preemptions that happened to hit the traced call. */
export function cleanTree(n) {
  const out = [];
  const k = n.kids;
  for (let i = 0; i < k.length; i++) {
    const name = k[i].name;
    if (name === 'irq_enter_rcu' || name.startsWith('__sysvec_')) {
      let j = i;
      while (j < k.length && k[j].name !== 'raw_irqentry_exit_cond_resched' && !(j > i && k[j].name === 'irq_exit_rcu')) j++;
      if (j < k.length && k[j].name === 'irq_exit_rcu') {
        j++;
        while (j < k.length && (k[j].name === '__hrtimer_rearm_deferred' || k[j].name === 'raw_irqentry_exit_cond_resched')) j++;
        j--;
      }
      i = j;
      continue;
    }
    if (name === 'lock_vma_under_rcu' || name === 'lock_mm_and_find_vma') {
      let j = i + 1;
      while (j < k.length && FAULT.has(k[j].name)) j++;
      i = j - 1;
      continue;
    }
    if (name === 'rcu_note_context_switch') {
      let j = i + 1;
      while (j < k.length && !/^finish_task_switch/.test(k[j].name) && k[j].name !== 'raw_irqentry_exit_cond_resched') j++;
      i = j;
      continue;
    }
    out.push(k[i]);
  }
  n.kids = out;
  for (const c of out) cleanTree(c);
  return n;
}

/** The first node named `name` (depth-first). */
export function node(t, name) {
  for (const n of walk(t)) if (n.name === name || (name instanceof RegExp && name.test(n.name))) return n;
  return undefined;
}

/** Replaces the kids of `under` strictly after `after` (or from the start) and before `before` (or to the end) by one hole. */
export function hole(t, under, holeName, { after, before } = {}) {
  const u = typeof under === 'string' || under instanceof RegExp ? node(t, under) : under;
  if (!u) throw new Error(`no ${under} for ${holeName}`);
  const match = (n, m) => (m instanceof RegExp ? m.test(n.name) : n.name === m);
  let a = after ? u.kids.findIndex((n) => match(n, after)) : -1;
  if (after && a < 0) a = -1;
  let b = before ? u.kids.findIndex((n, i) => i > a && match(n, before)) : u.kids.length;
  if (b < 0) b = u.kids.length;
  const cut = u.kids.slice(a + 1, b);
  u.kids.splice(a + 1, b - a - 1, { name: holeName, kids: [] });
  return cut;
}

/** Replaces a node (found by name) with a hole. */
export function replace(t, name, holeName) {
  for (const n of walk(t)) {
    const i = n.kids.findIndex((k) => k.name === name);
    if (i >= 0) {
      const old = n.kids[i];
      n.kids[i] = { name: holeName, kids: [] };
      return old;
    }
  }
  throw new Error(`no ${name} to replace by ${holeName}`);
}

export function flag(t, names, f) {
  for (const n of walk(t)) if (names.includes(n.name)) n.flag = f;
}

// --- output ----------------------------------------------------------------------

export function key(n) {
  return `${n.flag ?? ''}${n.name}(${n.kids.map(key).join(',')})`;
}

/** Serializes kids, folding runs of identical siblings into `name *N`. */
export function emit(kids, depth, out) {
  for (let i = 0; i < kids.length; ) {
    const k = typeof kids[i] === 'string' ? { name: kids[i], kids: [] } : kids[i];
    let j = i + 1;
    const kk = key(k);
    while (j < kids.length && typeof kids[j] !== 'string' && key(kids[j]) === kk) j++;
    const rep = j - i;
    out.push(`${'  '.repeat(depth)}${k.flag ? `[${k.flag}] ` : ''}${k.name}${rep > 1 ? ` *${rep}` : ''}`);
    emit(k.kids, depth + 1, out);
    i = j;
  }
}

/**
 * Replaces the blocks whose names start with `prefix` (`host:`, `call:`) in
 * a call-paths file (data/kernel-<series>/call-paths.txt.br) by `blocks`
 * (name → top-level trees), keeping every other block. KEEP_TEXT=FILE also
 * writes the text. Returns the file's line and byte counts.
 */
export function replaceBlocks(file, prefix, blocks) {
  const old = brotliDecompressSync(readFileSync(file)).toString();
  const out = [];
  let skip = false;
  for (const line of old.split('\n')) {
    if (line.startsWith('@')) skip = line.startsWith(`@${prefix}`);
    if (!skip && line !== '') out.push(line);
  }
  for (const [name, kids] of blocks) {
    out.push(`@${name}`);
    emit(kids, 0, out);
  }
  const text = out.join('\n') + '\n';
  writeFileSync(file, brotliCompressSync(Buffer.from(text), { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  if (process.env.KEEP_TEXT) writeFileSync(process.env.KEEP_TEXT, text);
  return { lines: out.length, bytes: text.length };
}
