// A seeded grammar of probe definitions for the differential table: every
// probe type with its arguments (registers, memory nesting, immediates,
// symbols, BTF names and member chains, typecasts, this_cpu_*(), %pd/%pD,
// every fetch type), synthetic field lists, removals, clashes, eprobes on the
// dynamic events a setup made, multi-command writes, 128+ arguments, lines
// about the kernel's 4096-byte buffer, and mutations of all of these. The same
// seed gives the same rows (for the same dist/).
//
//   import { generate } from './generate.mjs';
//   generate({ seed: 1, count: 10000 })  ->  [{ section, file, def, setup? }]
//
// The functions, tracepoints and events it names are taken from the
// emulator's model of 7.2 (dist/, build it first with `npx tsc`), kept to
// those every series has, so the same definitions go to every kernel.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');

const D = 'dynamic_events';
const K = 'kprobe_events';
const U = 'uprobe_events';
const S = 'synthetic_events';
const SERIES = ['7.2', '6.12', '7.3'];
const UPATH = '/bin/sh';
const UOFFS = ['0x4760', '0x4770', '0x4761', '0', '0x10', '0x1000', '0x20000', '0xffffff', '4760', '18446744073709551615'];

/**
 * mulberry32: a small seeded generator, enough for choosing. The grammar's
 * own, not the emulator's Rng, so that the committed rows of a seed stay what
 * they are whatever becomes of the emulator's random streams.
 */
function rngOf(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------- the pool: what exists in the kernels

async function buildPool() {
  const { createEmulator } = await import(join(repo, 'dist', 'src', 'index.js'));
  const kernels = Object.fromEntries(SERIES.map((s) => [s, createEmulator({ series: s, cpus: 2 }).kernel]));
  const k = kernels['7.2'];
  const btf = k.types;
  const everywhere = (name) => SERIES.every((s) => kernels[s].symbols.byName(name).some((f) => f.traceable && f.module === undefined));
  const r = rngOf(0x5eed);
  const traceable = k.symbols.traceable().filter((f) => f.module === undefined).map((f) => f.name).sort();
  const withProto = [];
  const noProto = [];
  const probestubs = [];
  for (const name of new Set(traceable)) {
    if (name.startsWith('__probestub_')) { probestubs.push(name); continue; }
    if (!/^[A-Za-z_][\w.]*$/.test(name)) continue;
    (btf.funcProto(name) ? withProto : noProto).push(name);
  }
  const sample = (xs, n, keep = () => true) => {
    const out = [];
    for (let tries = 0; out.length < n && tries < n * 20; tries++) {
      const x = xs[Math.floor(r() * xs.length)];
      if (!out.includes(x) && keep(x) && everywhere(x)) out.push(x);
    }
    return out.sort();
  };
  const hasStructParam = (name) => btf.funcProto(name).params.some((p) => chainsOf(p.type, p.name, 1).length > 0);
  const protoFns = [...sample(withProto, 260, hasStructParam), ...sample(withProto, 140)];
  const fns = [...new Set(protoFns)].map((name) => {
    const proto = btf.funcProto(name);
    const f = k.symbols.byName(name)[0];
    return {
      name,
      size: f.size,
      params: proto.params.map((p) => ({ name: p.name, chains: chainsOf(p.type, p.name, 3).slice(0, 40) })),
      retChains: chainsOf(proto.ret, '$retval', 2).slice(0, 20),
      void: proto.ret.kind === 'void',
    };
  });
  const plainFns = sample(noProto, 60).map((name) => ({ name, size: k.symbols.byName(name)[0].size, params: [], retChains: [] }));
  const tps = sample(probestubs, 120, (n) => btf.funcProto(n) !== undefined).map((stub) => {
    const proto = btf.funcProto(stub);
    return { name: stub.slice('__probestub_'.length), params: proto.params.slice(1).map((p) => ({ name: p.name, chains: chainsOf(p.type, p.name, 2).slice(0, 30) })) };
  });
  const catalogue = (s) => JSON.parse(readFileSync(join(repo, 'data', `events-${s}.json`), 'utf8'));
  const evs = catalogue('7.2');
  const keys = SERIES.slice(1).map((s) => new Set(catalogue(s).events.map(([sys, n]) => `${sys}.${n}`)));
  const events = evs.events
    .filter(([sys, n]) => keys.every((ks) => ks.has(`${sys}.${n}`)) && sys !== 'ftrace')
    .map(([sys, n, , fs]) => ({ sys, name: n, fields: evs.fieldSets[fs].map(([decl, , size]) => ({ name: decl.replace(/\[.*$/, '').split(/[ *]/).pop(), decl, size })) }));
  const evSample = [];
  while (evSample.length < 160) {
    const e = events[Math.floor(r() * events.length)];
    if (!evSample.includes(e)) evSample.push(e);
  }
  // structs for typecasts: (STRUCT[,member])VAR->FIELD
  const STRUCTS = ['file', 'dentry', 'inode', 'path', 'qstr', 'task_struct', 'sk_buff', 'sock', 'mm_struct', 'super_block', 'list_head', 'rq', 'kiocb', 'iov_iter', 'cred', 'page', 'vm_area_struct', 'net_device', 'filename', 'open_how'];
  const structs = STRUCTS.filter((n) => btf.struct(n)).map((n) => {
    const st = btf.struct(n);
    const chains = chainsOf({ kind: 'ptr', target: st }, 'X', 3).map((c) => c.slice(3)).slice(0, 40);
    const members = membersOf(st).map((m) => m.name);
    return { name: n, chains, members };
  });
  return { fns, plainFns, tps, structs, events: evSample.sort((a, b) => `${a.sys}.${a.name}`.localeCompare(`${b.sys}.${b.name}`)) };
}

/** Resolves typedefs and qualifiers. */
function resolve(t) {
  while (t && ['typedef', 'const', 'volatile', 'restrict', 'type_tag'].includes(t.kind)) t = t.target;
  return t;
}

/** Named members, those of anonymous structs and unions included (BTF finds them too). */
function membersOf(st, depth = 0) {
  const out = [];
  for (const m of st.members) {
    if (m.name) out.push(m);
    else if (depth < 3) {
      const t = resolve(m.type);
      if (t && (t.kind === 'struct' || t.kind === 'union')) out.push(...membersOf(t, depth + 1));
    }
  }
  return out;
}

/** Member chains from a value of type t named `base`: `base->a`, `base->a.b`, `base->a->c`. */
function chainsOf(type, base, depth) {
  const out = [];
  const walk = (t, expr, left, viaPtr) => {
    if (left === 0 || out.length > 80) return;
    t = resolve(t);
    if (!t) return;
    let st;
    let op;
    if (t.kind === 'ptr') {
      st = resolve(t.target);
      op = '->';
    } else if ((t.kind === 'struct' || t.kind === 'union') && viaPtr) {
      st = t;
      op = '.';
    }
    if (!st || (st.kind !== 'struct' && st.kind !== 'union')) return;
    const ms = membersOf(st);
    for (let i = 0; i < ms.length; i += Math.max(1, Math.floor(ms.length / 8))) {
      const m = ms[i];
      const e = `${expr}${op}${m.name}`;
      out.push(e);
      walk(m.type, e, left - 1, true);
    }
  };
  walk(type, base, depth, false);
  return out;
}

// ---------------------------------------------------------------- the grammar

function grammar(r, pool) {
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const int = (n) => Math.floor(r() * n);
  const chance = (p) => r() < p;
  const hex = (n) => `0x${n.toString(16)}`;

  const REGS = ['%di', '%si', '%dx', '%cx', '%ax', '%bx', '%bp', '%sp', '%ip', '%r8', '%r9', '%r10', '%r15', '%flags', '%orig_ax', '%cs', '%ss'];
  const BADREGS = ['%zz', '%rax', '%eax', '%', '%r16', '%DI', '%di%'];
  const SYMS = ['jiffies', 'jiffies_64', 'linux_proc_banner', '_sdata', 'init_task', 'nr_cpu_ids', 'init_uts_ns', 'vfs_read', 'runqueues', 'nosuch_sym'];
  const BASIC = ['u8', 'u16', 'u32', 'u64', 's8', 's16', 's32', 's64', 'x8', 'x16', 'x32', 'x64', 'char'];
  const TEXT = ['string', 'ustring', 'symbol', 'symstr'];
  const PD = ['%pd', '%pD'];
  const BAD_TYPES = ['u7', 'u128', 'x', 'int', 'bad', 'str', 'b', 'b4', 'b4@', 'b4@4', 'b0@0/8', 'b9@0/8', 'b4@30/32', 'b1@63/64', 'u8[', 'u8[]', 'u8[0]', 'u8[65]', 'u8[-1]', 'string[a]', '%p', '%pX', '%pdd', ''];

  /** Set per row: keep to what is valid (so that a good share is accepted and its listing and format compared). */
  let strict = false;
  const name = () => {
    const x = int(strict ? 17 : 20);
    if (x < 10) return '';
    if (x < 13) return `:${pick(['ev', 'e1', 'kp', 'fp', 'tp', 'my_probe', 'E_v_9', 'x'])}`;
    if (x < 17) return `:${pick(['g', 'grp', 'g_1', 'kprobes', 'fprobes', 'tracepoints', 'eprobes', 'sched', 'G'])}/${pick(['ev', 'e1', 'probe', 'x_y'])}`;
    return `:${pick(['', '/', 'g/', '/e', '1e', 'e-v', 'e.v', 'g.1/e', 'g/e/f', 'e'.repeat(63), 'e'.repeat(64), `${'g'.repeat(64)}/e`, 'e v', 'e\xe9', 'g/e\t', 'e:f', 'common_pid'])}`;
  };
  const argName = () => (chance(0.45) ? `${strict ? pick(['a', 'b', 'x', 'arg1', 'val', 'n_1', 'A', 'ptr', 'comm']) : pick(['a', 'b', 'x', 'arg1', 'val', 'n_1', 'A', 'common_pid', '__probe_ip', 'a'.repeat(32), 'a'.repeat(33), '1a', 'a-b', 'a.b', '', 'comm', 'file', 'a b', 'ptr'])}=` : '');
  const typeOf = () => {
    const x = int(strict ? 24 : 30);
    if (x < 12) return '';
    if (x < 19) return `:${pick(BASIC)}`;
    if (x < 22) return `:${pick(TEXT)}`;
    if (x < 24) {
      const w = 1 + int(chance(0.8) ? 8 : 64);
      const sz = pick([8, 16, 32, 64]);
      return `:b${w}@${int(sz + 2)}/${chance(0.9) ? sz : pick([7, 12, 128, 0])}`;
    }
    if (x < 26) return `:${pick([...BASIC, 'string', 'symbol', 'symstr', 'ustring'])}[${pick([1, 2, 3, 4, 8, 16, 64, 65, 0])}]`;
    if (x < 28) return `:${pick(PD)}${chance(0.1) ? `:${pick(BASIC)}` : ''}`;
    return `:${pick(BAD_TYPES)}`;
  };
  const offset = () => pick(['+0', '+8', '-8', '+16', '+0x10', '+u0', '+u8', '-u8', '0', '8', '+1234567', '+0x28', '+40', '+0xa', '+1a', '+', '-']);
  /** A fetch argument that does not need BTF (kprobe and uprobe registers). */
  const rawArg = (depth = 0, uprobe = false) => {
    const x = int(strict ? 22 : 24);
    if (x < 7) return pick(REGS);
    if (x < 9) return `$arg${pick([1, 2, 3, 4, 5, 6, 0, 7, 9, 10, 255, 1000])}`;
    if (x < 11) return pick(['$stack', '$stack0', '$stack1', '$stack3', '$stack9', '$stack64', '$stack10000', '$stackp', '$comm', '$COMM', '$retval', '$current', '$arg*', '$none']);
    if (x < 13 && !uprobe && chance(0.15)) return chance(0.2) ? '@+0x10' : `${pick(['this_cpu_ptr', 'this_cpu_read'])}(${chance(0.7) ? `@${pick(['runqueues', 'cpu_number', 'jiffies', 'nosuch_sym'])}${chance(0.2) ? '+8' : ''}` : rawArg(depth + 1)})`;
    if (x < 13) return uprobe ? `@${pick(['+0x10', '+0', '0x1000', '+ab', 'jiffies'])}` : `@${pick(SYMS)}${chance(0.3) ? pick(['+8', '-8', '+0x10', '*2', '+']) : ''}`;
    if (x < 14 && !uprobe) return '@{{ADDR:jiffies}}';
    if (x < 17 && strict) return pick([String.raw`\1`, String.raw`\0x10`, String.raw`\-5`, String.raw`\"str"`]);
    if (x < 17) return pick([String.raw`\1`, String.raw`\0x10`, String.raw`\-5`, String.raw`\+7`, String.raw`\1234567890123`, String.raw`\0xffffffffffffffff`, String.raw`\"str"`, String.raw`\"a b"`, String.raw`\"open`, String.raw`\x`, String.raw`\""`, '\\']);
    if (x < 22 && depth < 15) return `${offset()}(${rawArg(depth + 1, uprobe)})`;
    if (x < 23) return pick(BADREGS);
    return pick(['&1', '(%di)', '+0(%di', '+0%di)', '', 'hoge', '@', '$', '+0(@jiffies)+8', '1']);
  };
  /** A typecast of a value to a struct, and a field of it: `(STRUCT[,member])VAR->FIELD` (7.3). */
  const typecast = (inner, depth = 0) => {
    const st = chance(0.95) ? pick(pool.structs) : { name: pick(['nosuch', 'struct file', 'file *', '']), chains: ['x'], members: ['x'] };
    const opt = chance(0.2) ? `,${chance(0.8) ? pick(st.chains.length ? st.chains : ['x']) : pick(['nosuch', '', 'a->b'])}` : '';
    const x = int(12);
    let v = inner;
    if (x < 1) v = `(${inner})`;
    else if (x < 2) v = `+${pick([0, 8, 16])}(${inner})`;
    else if (x < 3) v = `this_cpu_ptr(@${pick(['runqueues', 'cpu_number'])})`;
    else if (x < 4) v = `@${pick(['init_task', 'jiffies', 'runqueues'])}${chance(0.3) ? '+8' : ''}`;
    else if (x < 5 && depth < 2) v = typecast(inner, depth + 1);
    const field = chance(0.9) ? pick(st.chains.length ? st.chains : ['x']) : pick(['nosuch', '', 'a.b']);
    const arrow = chance(0.93) ? '->' : pick(['', '.', '-']);
    return `(${st.name}${opt})${v}${arrow}${field}`;
  };
  /** A BTF argument of a function's parameter or return value. */
  const btfArg = (fn, ret) => {
    const ps = fn.params;
    const x = int(strict ? 14 : 20);
    if (ret && x < 4) return chance(0.15) ? typecast('$retval') : pick(['$retval', ...fn.retChains, ...fn.retChains]);
    if (ps.length === 0) return pick(['$arg1', '$retval', 'x', '$arg*']);
    const p = pick(ps);
    const i = ps.indexOf(p) + 1;
    if (x < 7) return p.name;
    if (x < 14 && p.chains.length) {
      const c = pick(p.chains);
      return chance(0.25) ? c.replace(p.name, `$arg${i}`) : c;
    }
    if (x < 15 && p.chains.length) return `${pick(p.chains)}${pick(['->nosuch', '.nosuch', '->', '-', '.', '->x->y'])}`;
    if (x < 16) return pick([`$arg${i}`, '$arg*', `$arg${ps.length + 1}`]);
    if (x < 17) return chance(0.7) ? typecast(`${chance(0.8) ? p.name : `$arg${i}`}`) : `${pick(['(struct file *)', '(file)', '(struct sk_buff *)', '(sk_buff)', '(nosuch)', '(struct dentry)'])}${p.name}${p.chains.length ? pick(p.chains).slice(p.name.length) : ''}`;
    if (x < 18) return `+${pick([0, 8, 16, 40])}(${p.name})`;
    if (x < 19) return pick(['nosuch', `${p.name}x`, `${p.name}->`, `${p.name}[0]`, `*${p.name}`]);
    return rawArg(1);
  };
  const args = (gen, n = 4) => Array.from({ length: int(strict ? Math.min(n, 3) : n + 1) }, () => `${argName()}${gen()}${typeOf()}`).join(' ');

  const fnOf = () => (chance(0.85) ? pick(pool.fns) : pick(pool.plainFns));
  const place = (fn, allowOff) => {
    if (!allowOff || chance(strict ? 0.8 : 0.55)) return fn.name;
    const x = int(10);
    if (x < 6) return `${fn.name}+${int(Math.min(fn.size, 96))}`;
    if (x < 8) return `${fn.name}+${hex(int(Math.max(fn.size, 1) + 16))}`;
    return `${fn.name}${pick(['+0', `+${fn.size}`, `+${fn.size - 1}`, '-4', '+4294967296', '+', '+0x', '+99999'])}`;
  };
  const specialSym = () => pick(['nosuch_func', 'native_sched_clock', 'atomic_notifier_call_chain', '_sdata', 'jiffies', 'nosuchmod:vfs_read', 'vmlinux:vfs_read', ':vfs_read', 'vfs_rea*', '__schedule', 'do_exit', 'kernel_clone', 'active_show', '{{ADDR:vfs_read}}', '{{ADDR:kfree}}', '{{ADDR:schedule}}+4', '0x0', '12345', 'vfs_read:1']);

  const kprobe = () => {
    const ret = chance(0.3);
    const fn = fnOf();
    const x = strict ? 2 + int(8) : int(10);
    const sym = x < 1 ? specialSym() : x < 2 ? `{{ADDR:${fn.name}}}` : place(fn, true);
    const suffix = ret && chance(0.3) ? '%return' : chance(0.03) ? pick(['%return', '%entry', '%hoge']) : '';
    const head = suffix === '%return' ? 'p' : ret ? `r${chance(0.2) ? pick(['0', '1', '10', '4096', '4097', '0x10', '1a']) : ''}` : 'p';
    const gen = () => (chance(0.05) ? typecast(rawArg(1)) : chance(0.5) && fn.params.length ? btfArg(fn, ret || suffix === '%return') : rawArg());
    return { file: chance(0.5) ? K : D, def: `${head}${name()} ${sym}${suffix} ${args(gen)}`.trimEnd() };
  };
  const fprobe = () => {
    const fn = fnOf();
    const ret = chance(0.35);
    const sym = strict ? fn.name : chance(0.06) ? specialSym() : chance(0.04) ? place(fn, true) : fn.name;
    const head = !strict && chance(0.03) ? pick(['f1', 'f10', 'fx', 'F']) : 'f';
    const gen = () => (chance(0.8) ? btfArg(fn, ret) : rawArg());
    return { file: D, def: `${head}${name()} ${sym}${ret ? '%return' : ''} ${args(gen)}`.trimEnd() };
  };
  const tprobe = () => {
    const tp = chance(0.95) ? pick(pool.tps) : { name: pick(['nosuch_tp', 'sched:sched_switch', 'sched/sched_switch', 'kfree%return', '9p']), params: [] };
    const gen = () => {
      if (tp.params.length && chance(strict ? 0.95 : 0.75)) {
        const p = pick(tp.params);
        const i = tp.params.indexOf(p) + 1;
        if (p.chains.length && chance(0.5)) return pick(p.chains);
        return chance(0.8) ? p.name : `$arg${i}`;
      }
      return chance(0.5) ? rawArg() : pick(['$retval', '$arg*', '$comm', 'nosuch', '$arg9']);
    };
    return { file: D, def: `t${name()} ${tp.name} ${args(gen)}`.trimEnd() };
  };
  const filter = (ev, depth = 0) => {
    if (depth < 2 && chance(0.2)) return `${filter(ev, depth + 1)} ${pick(['&&', '||'])} ${filter(ev, depth + 1)}`;
    const f = chance(0.85) && ev.fields.length ? pick(ev.fields).name : pick(['common_pid', 'nosuch', 'comm', 'cpu']);
    return `${f} ${pick(['==', '!=', '<', '>', '<=', '>=', '&', '~', '=', '=='])} ${pick(['0', '1', '100', '-1', '0x10', '"a*"', 'abc', ''])}`;
  };
  const eprobe = () => {
    const ev = chance(0.95) ? pick(pool.events) : { sys: pick(['nosys', 'sched', 'kprobes', 'ftrace']), name: pick(['nosuch', 'sched_switch', 'function']), fields: [] };
    const sep = strict || chance(0.85) ? pick(['.', '/']) : pick([':', '', '..']);
    const gen = () => {
      const x = int(12);
      if (ev.fields.length && (x < 7 || strict)) {
        const f = pick(ev.fields);
        const y = int(strict ? 5 : 8);
        if (y < 4) return `$${f.name}`;
        if (y < 5) return f.name;
        if (y < 6) return `+${pick([0, 8])}($${f.name})`;
        if (y < 7) return chance(0.5) ? typecast(chance(0.7) ? f.name : `$${f.name}`) : `(${pick(['sk_buff', 'struct sk_buff', 'file', 'task_struct', 'nosuch'])})${f.name}${pick(['->len', '->f_mode', '->pid', '->comm', ''])}`;
        return `$${f.name}${pick(['x', '->a', '[0]'])}`;
      }
      if (x < 9) return pick(['$comm', '$COMM', '$common_pid', '$common_type', '$nosuch', '$$', '$', '$arg1', '$retval', '$stack0']);
      return rawArg();
    };
    const filt = chance(0.15) ? ` if ${chance(0.9) ? filter(ev) : ''}` : '';
    return { file: D, def: `e${name()} ${ev.sys}${sep}${ev.name} ${args(gen)}${filt}`.trimEnd() };
  };
  const uprobe = () => {
    const off = strict ? pick(UOFFS.slice(0, 6)) : pick(UOFFS);
    const ref = chance(0.15) ? `(${pick(['0x10', '0x20', '0', '1a', ''])})` : '';
    const ret = chance(0.3);
    const head = ret && chance(0.7) ? 'r' : 'p';
    const path = strict || chance(0.9) ? UPATH : pick(['/bin/dash', '/nonexist', '/tmp', '/sys', '/bin/sh/x', 'bin/sh', '']);
    const suffix = ret && head === 'p' ? '%return' : '';
    return { file: chance(0.5) ? U : D, def: `${head}${name()} ${path}:${off}${chance(0.5) ? ref + suffix : suffix + ref} ${args(() => rawArg(0, true), 3)}`.trimEnd() };
  };
  const SYNTH_TYPES = ['u64', 'u32', 'u16', 'u8', 's64', 's32', 'int', 'unsigned int', 'long', 'unsigned long', 'pid_t', 'bool', 'gfp_t', 'char', 'unsigned char', 'char[16]', 'long[]', 'u64[]', 'foo', 'unsigned', 'struct file *', 'char *'];
  const synthFields = () => {
    const n = int(7);
    const fields = Array.from({ length: n }, (_, i) => {
      const t = strict ? pick(SYNTH_TYPES.slice(0, 17)) : pick(SYNTH_TYPES);
      const nm = strict ? `${pick(['a', 'b', 'lat', 'pid', 'comm', 'x_1', 'ts'])}${i}` : pick(['a', 'b', 'lat', 'pid', 'comm', 'x_1', 'common_pid', 'a-b', '1a', 'ts']);
      const arr = strict ? (t.startsWith('char') && !t.includes('[') && chance(0.3) ? '[16]' : '') : chance(0.15) ? pick(['[16]', '[]', '[0x10]', '[257]', '[0]', '[a]', '[']) : '';
      return `${t} ${nm}${arr}`;
    });
    return fields.join(strict ? '; ' : pick(['; ', ';', ' ; ', '; ', ';; ']));
  };
  const synthName = () => strict ? pick(['syn', 'lat', 'wakeup_lat', 's1', 'my_ev']) : pick(['syn', 'lat', 'wakeup_lat', 's1', 'my_ev', '1syn', 'sy-n', 's'.repeat(64), 'sched_switch']);
  const synth = () =>
    chance(0.6) ? { file: D, def: `s:${chance(0.2) ? pick(['synthetic/', 'grp/', '']) : ''}${synthName()} ${synthFields()}`.trimEnd() }
      : { file: S, def: `${synthName()} ${synthFields()}`.trimEnd() };

  /** A definition that creates something removable, and its event name. */
  const creator = () => {
    const kinds = [
      () => ({ def: `p:kp ${pick(pool.fns).name}`, g: 'kprobes', n: 'kp' }),
      () => ({ def: `r:g/rp ${pick(pool.fns).name} $retval`, g: 'g', n: 'rp' }),
      () => { const fn = pick(pool.fns); return { def: `f:fp ${fn.name}${fn.params.length ? ` ${fn.params[0].name}` : ''}`, g: 'fprobes', n: 'fp' }; },
      () => { const tp = pick(pool.tps); return { def: `t:tp ${tp.name}`, g: 'tracepoints', n: 'tp' }; },
      () => { const ev = pick(pool.events); return { def: `e:ep ${ev.sys}.${ev.name}`, g: 'eprobes', n: 'ep' }; },
      () => ({ def: `p:up ${UPATH}:0x4760 a=%ax`, g: 'uprobes', n: 'up' }),
      () => ({ def: 's:syn u64 a; int b', g: 'synthetic', n: 'syn' }),
    ];
    return pick(kinds)();
  };
  const removal = () => {
    const c = creator();
    const setup = chance(0.85) ? [{ file: D, def: c.def }] : undefined;
    const head = c.def.split(' ')[0];
    const rest = c.def.slice(head.length + 1);
    const target = pick([`-:${c.n}`, `-:${c.g}/${c.n}`, `-:other/${c.n}`, `-:${c.g}/`, `-:${c.n} ${rest}`, `-:${c.n} ${rest} extra=%ax`, `-:${c.n} ${rest.split(' ')[0]}`, '-:', '-', '-:*', `-:${c.n}x`, `- :${c.n}`, `-:${c.g}/${c.n} `]);
    if (c.g === 'synthetic' && chance(0.4)) return { file: S, def: pick([`!${c.n}`, `!${c.n} u64 a; int b`, `!${c.n} u64 a`, '!nosuch', '!']), setup };
    if (c.g === 'kprobes' && chance(0.3)) return { file: K, def: target, setup };
    if (c.g === 'uprobes' && chance(0.3)) return { file: U, def: target, setup };
    return { file: D, def: target, setup };
  };
  /** Something defined twice, or over an event of another kind. */
  const clash = () => {
    const a = creator();
    const b = pick([creator(), { def: a.def }, { def: a.def.replace(/^(\S+)/, '$1 ').replace(/ +/, ' ') }]);
    return { file: D, def: b.def, setup: [{ file: D, def: a.def }] };
  };
  const NASTY = ['\t', ' ', '(', ')', ':', '%', '$', '"', '\\', '=', '-', '>', '!', '*', '\xff', '0x', '+', '[', ']', ';', ',', '.', '@', '/', '#', '\n'];
  const mutate = (s) => {
    const n = 1 + int(3);
    for (let i = 0; i < n; i++) {
      const at = int(s.length + 1);
      switch (int(6)) {
        case 0: s = s.slice(0, at) + s.slice(at + 1 + int(3)); break;
        case 1: s = s.slice(0, at) + s.slice(at, at + 1 + int(4)) + s.slice(at); break;
        case 2: s = at + 1 < s.length ? s.slice(0, at) + s[at + 1] + s[at] + s.slice(at + 2) : s; break;
        case 3: s = s.slice(0, at) + pick(NASTY) + s.slice(at); break;
        case 4: s = s.slice(0, Math.max(1, at)); break;
        default: s = s.slice(0, at) + pick(NASTY).repeat(1 + int(8)) + s.slice(at);
      }
    }
    return s;
  };

  /** An eprobe on a dynamic event made by the setup (its fields are the probe's arguments). */
  const stacked = () => {
    strict = true;
    const base = pick([kprobe, fprobe, tprobe, uprobe, synth])();
    strict = chance(0.6);
    const m = /^(?:[prfte]\d*|s):(?:([^/ ]+)\/)?(\S+) /.exec(base.def) ?? /^(?:[prfte]\d*|s):(?:([^/ ]+)\/)?(\S+)$/.exec(base.def);
    const isSynth = base.def.startsWith('s:');
    const group = m?.[1] ?? (isSynth ? 'synthetic' : { p: 'kprobes', r: 'kprobes', f: 'fprobes', t: 'tracepoints' }[base.def[0]] ?? 'uprobes');
    const ev = m?.[2] ?? 'nosuch';
    const argNames = [...base.def.matchAll(/ ([A-Za-z_]\w*)=/g)].map((x) => x[1]);
    const synthNames = isSynth ? [...base.def.matchAll(/ ([A-Za-z_]\w*)(?:\[\w*\])?(?:;|$)/g)].map((x) => x[1]) : [];
    const fields = [...argNames, ...synthNames, '__probe_ip', '__probe_func', '__probe_ret_ip', 'common_pid', 'nosuch'];
    const gen = () => (chance(0.8) ? `$${pick(fields)}` : rawArg());
    const filt = chance(0.2) ? ` if ${pick(fields)} ${pick(['==', '!=', '>', '&'])} ${pick(['0', '1', '"x"'])}` : '';
    return { file: D, def: `e${name()} ${group}${pick(['.', '/'])}${ev} ${args(gen, 3)}${filt}`.trimEnd(), setup: [{ file: base.file, def: base.def }] };
  };
  /** Several commands in one write, comments and blank lines among them: the first failure ends the write. */
  const multi = () => {
    const gens = [kprobe, fprobe, tprobe, eprobe, uprobe, removal];
    const parts = Array.from({ length: 2 + int(3) }, () => {
      const x = int(10);
      if (x < 1) return pick(['', '#', '# comment', '   ', '\t', '#p vfs_read']);
      const d = pick(gens)().def;
      return x < 2 ? `${d} # c` : x < 3 ? `  ${d}\t` : d;
    });
    return { file: D, def: parts.join('\n') + (chance(0.3) ? '\n' : '') };
  };
  /** Up to and past the 128 arguments of a probe. */
  const many = () => {
    const base = pick([kprobe, fprobe, tprobe, eprobe, uprobe])();
    const head = base.def.split(' ').slice(0, 2).join(' ');
    const n = pick([16, 32, 63, 64, 65, 100, 127, 128, 129, 200]);
    const fn = pick(pool.fns);
    const entryArgs = chance(0.3) && fn.params.length;
    const h = entryArgs ? `f ${fn.name}%return` : head;
    const argv = Array.from({ length: n }, (_, i) =>
      entryArgs ? `a${i}=${chance(0.5) ? `$arg${1 + (i % fn.params.length)}` : pick(fn.params).name}` : chance(0.5) ? `a${i}=\\${i}` : `a${i}=${pick(REGS)}${pick(['', ':u8', ':x16', ':s32'])}`);
    return { file: entryArgs ? D : base.file, def: `${h} ${argv.join(' ')}` };
  };
  /** Writes about the kernel's 4096-byte line buffer: one long line, or lines that straddle it. */
  const long = () => {
    const target = pick([4000, 4094, 4095, 4096, 4097, 4200, 5000, 8190, 8200, 9000]);
    const x = int(3);
    if (x === 0) {
      const head = `p:kp ${pick(pool.fns).name} a=\\"`;
      return { file: D, def: `${head}${'x'.repeat(Math.max(0, target - head.length - 1))}"` };
    }
    const lines = [];
    let len = 0;
    while (len < target) {
      const d = x === 1 ? `p:k${lines.length} ${pick(pool.fns).name} ${args(() => rawArg(), 6)}`.trimEnd() : `s:s${lines.length} ${synthFields()}`.trimEnd();
      lines.push(d);
      len += d.length + 1;
    }
    return { file: D, def: lines.join('\n') + (chance(0.5) ? '\n' : '') };
  };
  const kinds = [
    ['gen-long', 1, long],
    ['gen-stacked', 4, stacked],
    ['gen-multi', 4, multi],
    ['gen-many', 1, many],
    ['gen-kprobe', 22, kprobe],
    ['gen-fprobe', 20, fprobe],
    ['gen-tprobe', 12, tprobe],
    ['gen-eprobe', 12, eprobe],
    ['gen-uprobe', 6, uprobe],
    ['gen-synth', 6, synth],
    ['gen-remove', 6, removal],
    ['gen-clash', 3, clash],
    ['gen-mutant', 13, () => {
      const base = pick([kprobe, fprobe, tprobe, eprobe, uprobe, synth])();
      return { ...base, def: mutate(base.def) };
    }],
  ];
  const total = kinds.reduce((s, k) => s + k[1], 0);
  return () => {
    let x = r() * total;
    for (const [section, w, f] of kinds) {
      if ((x -= w) < 0) {
        strict = !['gen-mutant', 'gen-multi'].includes(section) && chance(0.55);
        const row = f();
        return { section, ...row };
      }
    }
    throw new Error('unreachable');
  };
}

/** Definitions of one write(2) without NUL, most of them shorter than the kernel's line buffer. */
const writable = (row) => row.def.length > 0 && row.def.length < (row.section === 'gen-long' ? 10000 : 3000) && !row.def.includes('\0');

export async function generate({ seed, count }) {
  const pool = await buildPool();
  const r = rngOf(seed);
  const next = grammar(r, pool);
  const rows = [];
  const seen = new Set();
  while (rows.length < count) {
    const row = next();
    const key = `${row.file}\0${row.def}\0${JSON.stringify(row.setup ?? [])}`;
    if (!writable(row) || seen.has(key)) continue;
    seen.add(key);
    rows.push(row.setup ? row : { section: row.section, file: row.file, def: row.def });
  }
  return rows;
}
