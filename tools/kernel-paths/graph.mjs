#!/usr/bin/env node
// Reads a function_graph trace (funcgraph-proc, optionally -abstime) from the
// real kernel and prints its call trees as indented function names: the raw
// material of the emulated kernel's call-path templates (src/kernel/paths/).
//
//   node tools/kernel-paths/graph.mjs FILE[.gz] [--root NAME] [--comm COMM] [--all]
//
// Without --root, prints every top-level tree; --root keeps the trees whose
// root (or, with --all, any node) is NAME, printing from that node down.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

const args = process.argv.slice(2);
const file = args[0];
const opt = (n) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : undefined; };
const root = opt('--root');
const comm = opt('--comm');
const anyDepth = args.includes('--all');
const max = Number(opt('--max') ?? 1e9);

let text = readFileSync(file);
if (file.endsWith('.gz')) text = gunzipSync(text);
const lines = text.toString('latin1').split('\n');

/** Per cpu/pid stack of open nodes. */
const stacks = new Map();
const trees = [];
const re = /^\s*(?:[\d.]+\s*\|\s*)?(\d+)\)\s+(.+?)-(\d+)\s+\|\s*([+!#*@$]?\s*[\d.]*\s*(?:us)?)\s*\|(\s*)(.*)$/;
for (const line of lines) {
  const m = re.exec(line);
  if (!m) continue;
  const [, cpu, task, pid, , ind, body] = m;
  if (comm && task.trim() !== comm) continue;
  const key = `${cpu}/${pid}`;
  let st = stacks.get(key);
  if (!st) stacks.set(key, (st = []));
  const depth = Math.max(0, (ind.length - 2) >> 1);
  if (body.startsWith('}')) { st.pop(); continue; }
  const fm = /^([A-Za-z_0-9.]+)\(\)\s*([{;])/.exec(body);
  if (!fm) continue;
  const node = { name: fm[1], kids: [], task: task.trim(), pid: Number(pid), cpu: Number(cpu) };
  while (st.length > depth) st.pop();
  if (st.length) st[st.length - 1].kids.push(node);
  else trees.push(node);
  if (fm[2] === '{') st.push(node);
}

function* find(n) {
  if (n.name === root) { yield n; if (!anyDepth) return; }
  if (anyDepth) for (const k of n.kids) yield* find(k);
}
const out = [];
function print(n, d) { out.push('  '.repeat(d) + n.name); for (const k of n.kids) print(k, d + 1); }
let count = 0;
for (const t of trees) {
  const hits = root ? [...find(t)] : [t];
  for (const h of hits) {
    if (count++ >= max) break;
    out.push(`# ${h.task}-${h.pid} cpu${h.cpu}`);
    print(h, 0);
  }
}
console.log(out.join('\n'));
