#!/usr/bin/env node
// Builds the built-in kernel model data (data/kernel-<series>/) from a real
// kernel: its /proc/kallsyms, available_filter_functions(_addrs) and raw BTF
// (a census directory, e.g. CENSUS/7.2, captured with the kernel oracle,
// ../shared/tools/kernel-oracle beside the repository), plus optional modules (.ko files of the
// same build) that the model shows as loaded.
//
//   node tools/kernel-data/build.mjs --census CENSUS/7.2 --out data/kernel-7.2 \
//        [--modules-dir DIR --modules failover,net_failover,virtio_net,virtio_blk]
//        [--blacklist FILE] [--vmlinuz FILE]
//
// Output (all brotli):
//   symbols.bin.br   every kallsyms symbol (kallsyms order), the traceable
//                    ones (available_filter_functions order) with their
//                    __fentry__ offsets, modules and their memory regions;
//                    format: see src/kernel/symbol_data.ts
//   vmlinux.btf.br   the raw BTF of vmlinux
//   <module>.btf.br  the split BTF of each module
//   kprobe-blacklist.txt.br  /sys/kernel/debug/kprobes/blacklist, if given,
//                    moved from the KASLR base of the boot that printed it
//                    to the census's
//   call-sites.bin.br  from --vmlinuz (the bzImage of the same build): every
//                    direct call in vmlinux text (init text and __fentry__
//                    calls left out) as (caller symbol, return offset,
//                    callee symbol), so that return addresses read as on the
//                    real kernel (ksys_read+0x7b/0x110 <- vfs_read); format:
//                    see src/kernel/call_sites.ts
// (text.bin.br, the kernel's decoded text, is tools/kernel-data/text.mjs's.)
// The input is checked: rendering the tables back must give the census
// files byte for byte.
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants as zc } from 'node:zlib';
import { execSync, spawnSync } from 'node:child_process';
import { loadModule } from './elf-module.mjs';

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

const census = arg('census');
const out = arg('out');
if (!census || !out) {
  console.error('usage: build.mjs --census DIR --out DIR [--modules-dir DIR --modules a,b] [--blacklist FILE]');
  process.exit(2);
}
const modulesDir = arg('modules-dir');
const moduleNames = (arg('modules', '') || '').split(',').filter(Boolean);
const blacklistFile = arg('blacklist');
const vmlinuzFile = arg('vmlinuz');
// Where module memory starts (the x86_64 module area is 0xffffffffc0000000 up).
const MODULE_BASE = 0xffffffffc0a00000n;

const isText = (t) => /^[tTwW]$/.test(t);

// --- vmlinux ---
const kallsyms = readFileSync(join(census, 'kallsyms'), 'latin1').split('\n').filter(Boolean);
/** @type {{name:string,type:string,addr:bigint,mod:number}[]} */
const syms = kallsyms.map((l) => {
  const [a, type, name, ...rest] = l.split(/[ \t]/);
  if (rest.length) throw new Error(`census kallsyms has a module symbol: ${l}`);
  return { name, type, addr: BigInt('0x' + a), mod: 0 };
});
const affNames = readFileSync(join(census, 'available_filter_functions'), 'latin1').split('\n').filter(Boolean);
const affAddrs = readFileSync(join(census, 'available_filter_functions_addrs'), 'latin1').split('\n').filter(Boolean);
if (affNames.length !== affAddrs.length) throw new Error('available_filter_functions and _addrs differ in length');

// Text symbols by address (first non-__pfx_ text symbol at each address).
const textAt = new Map();
syms.forEach((s, i) => {
  if (!isText(s.type) || s.name.startsWith('__pfx_')) return;
  const k = s.addr.toString(16);
  const prev = textAt.get(k);
  if (prev === undefined) textAt.set(k, [i]);
  else prev.push(i);
});

/** @type {{sym:number,fentry:number}[]} */
const traceable = [];
affAddrs.forEach((line, n) => {
  const [a, name] = line.split(' ');
  if (name !== affNames[n]) throw new Error(`line ${n + 1}: ${name} != ${affNames[n]}`);
  const ip = BigInt('0x' + a);
  for (const off of [0n, 4n]) {
    const cands = textAt.get((ip - off).toString(16));
    const i = cands?.find((c) => syms[c].name === name);
    if (i !== undefined) {
      traceable.push({ sym: i, fentry: Number(off) });
      return;
    }
  }
  throw new Error(`no text symbol ${name} at ${a} or ${a}-4`);
});

// --- modules ---
const modules = [];
let base = MODULE_BASE;
for (const m of moduleNames) {
  const path = [join(modulesDir, `${m}.ko`)].find(existsSync);
  if (!path) throw new Error(`module ${m}: no ${m}.ko in ${modulesDir}`);
  const mod = loadModule(readFileSync(path), m, base);
  base = mod.end + 0x1000n;
  modules.push(mod);
}
// kallsyms lists the newest module first; ftrace lists modules in load order.
const modIndex = new Map(moduleNames.map((m, i) => [m, i + 1]));
const symStart = new Map();
for (const mod of [...modules].reverse()) {
  symStart.set(mod.name, syms.length);
  for (const s of mod.symbols) syms.push({ name: s.name, type: s.type, addr: s.addr, mod: modIndex.get(mod.name) });
}
for (const mod of modules) {
  for (const t of mod.traceable) traceable.push({ sym: symStart.get(mod.name) + t.sym, fentry: t.fentry });
}

// --- encode ---
class Writer {
  chunks = [];
  u8(v) {
    this.chunks.push(Buffer.from([v]));
  }
  u32(v) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.chunks.push(b);
  }
  u64(v) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(v);
    this.chunks.push(b);
  }
  bytes(b) {
    this.chunks.push(b);
  }
  str(s) {
    const b = Buffer.from(s, 'latin1');
    this.u32(b.length);
    this.chunks.push(b);
  }
  /** zigzag LEB128 of a (possibly negative) bigint */
  varint(v) {
    let z = v < 0n ? (-v << 1n) - 1n : v << 1n;
    const bytes = [];
    do {
      let byte = Number(z & 0x7fn);
      z >>= 7n;
      if (z) byte |= 0x80;
      bytes.push(byte);
    } while (z);
    this.chunks.push(Buffer.from(bytes));
  }
  buffer() {
    return Buffer.concat(this.chunks);
  }
}

const w = new Writer();
w.bytes(Buffer.from('KSYM', 'latin1'));
w.u32(1);
w.u32(syms.length);
w.u32(traceable.length);
w.u32(modules.length);
w.u64(syms[0].addr);
for (const mod of modules) {
  w.str(mod.name);
  w.u32(mod.regions.length);
  for (const r of mod.regions) {
    w.str(r.kind);
    w.u64(r.start);
    w.u32(r.size);
  }
}
w.str(syms.map((s) => s.name).join('\n'));
w.bytes(Buffer.from(syms.map((s) => s.type).join(''), 'latin1'));
w.bytes(Buffer.from(syms.map((s) => s.mod)));
let prev = syms[0].addr;
for (const s of syms) {
  w.varint(s.addr - prev);
  prev = s.addr;
}
let prevSym = 0;
for (const t of traceable) {
  w.varint(BigInt(t.sym - prevSym));
  prevSym = t.sym;
}
w.bytes(Buffer.from(traceable.map((t) => t.fentry)));

const br = (b) =>
  brotliCompressSync(b, {
    params: { [zc.BROTLI_PARAM_QUALITY]: 11, [zc.BROTLI_PARAM_LGWIN]: 24, [zc.BROTLI_PARAM_SIZE_HINT]: b.length },
  });

mkdirSync(out, { recursive: true });
const files = {};
files['symbols.bin.br'] = br(w.buffer());
files['vmlinux.btf.br'] = br(readFileSync(join(census, 'btf-vmlinux')));
for (const mod of modules) if (mod.btf) files[`${mod.name}.btf.br`] = br(mod.btf);
if (blacklistFile) files['kprobe-blacklist.txt.br'] = br(Buffer.from(rebaseBlacklist(readFileSync(blacklistFile, 'latin1')), 'latin1'));
if (vmlinuzFile) files['call-sites.bin.br'] = br(callSites(vmlinuzFile));
let total = 0;
for (const [f, b] of Object.entries(files)) {
  writeFileSync(join(out, f), b);
  total += b.length;
  console.log(`${join(out, f)}: ${b.length} bytes`);
}
console.log(`${syms.length} symbols, ${traceable.length} traceable, ${modules.length} modules; ${total} bytes in all`);

/** Moves blacklist ranges by the KASLR difference between that boot and the census (voted by unique names). */
function rebaseBlacklist(text) {
  const unique = new Map();
  for (const s of syms) if (!s.mod) unique.set(s.name, unique.has(s.name) ? undefined : s.addr);
  const votes = new Map();
  const lines = text.split('\n').filter(Boolean);
  for (const l of lines) {
    const m = /^0x([0-9a-f]+)-0x([0-9a-f]+)\t(\S+)/.exec(l);
    const a = m && unique.get(m[3]);
    if (!a) continue;
    const d = BigInt('0x' + m[1]) - a;
    votes.set(d, (votes.get(d) ?? 0) + 1);
  }
  const [delta, n] = [...votes].sort((x, y) => y[1] - x[1])[0];
  console.log(`blacklist: KASLR delta 0x${delta.toString(16)} (${n}/${lines.length} entries agree)`);
  const hex = (v) => '0x' + v.toString(16).padStart(16, '0');
  return lines
    .map((l) => {
      const m = /^0x([0-9a-f]+)-0x([0-9a-f]+)\t(.*)$/.exec(l);
      if (!m) throw new Error(`blacklist line: ${l}`);
      return `${hex(BigInt('0x' + m[1]) - delta)}-${hex(BigInt('0x' + m[2]) - delta)}\t${m[3]}\n`;
    })
    .join('');
}

/** The vmlinux ELF inside a bzImage (zstd payload, as Debian builds it). */
function extractVmlinux(vmlinuz) {
  const img = readFileSync(vmlinuz);
  const magic = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
  for (let i = img.indexOf(magic); i >= 0; i = img.indexOf(magic, i + 1)) {
    // zstd complains about what follows the frame (exit status 1) but has written it out.
    const r = spawnSync('zstd', ['-d', '-c', '-q'], { input: img.subarray(i), maxBuffer: 1 << 30 });
    if (r.stdout && r.stdout.length > 4 && r.stdout.readUInt32BE(0) === 0x7f454c46) return r.stdout;
  }
  throw new Error(`${vmlinuz}: no zstd-compressed ELF inside`);
}

/** Direct calls of vmlinux text, by objdump, moved to the census's KASLR base. */
function callSites(vmlinuz) {
  const elf = extractVmlinux(vmlinuz);
  const tmp = join(out, '.vmlinux.tmp');
  writeFileSync(tmp, elf);
  const byName = (n) => syms.findIndex((s) => s.name === n && !s.mod);
  const stext = syms[byName('_stext')].addr;
  const etext = syms[byName('_etext')].addr;
  const initStart = syms[byName('_sinittext')].addr;
  const initEnd = syms[byName('_einittext')].addr;
  // The link address of .text is 0xffffffff81000000 (x86_64, no KASLR).
  const delta = stext - 0xffffffff81000000n;
  const hex = (v) => '0x' + (v - delta).toString(16);
  let text;
  try {
    text = execSync(
      `objdump -d --no-show-raw-insn --start-address=${hex(stext)} --stop-address=${hex(etext)} ${tmp} | grep -E '^ffffffff[0-9a-f]+:[[:space:]]+call[[:space:]]+0x'`,
      { maxBuffer: 1 << 30 },
    ).toString('latin1');
  } finally {
    execSync(`rm -f ${tmp}`);
  }
  // Text symbols sorted by address (vmlinux is already sorted); first alias wins.
  const idx = [];
  syms.forEach((s, i) => {
    if (!s.mod && isText(s.type) && (!idx.length || syms[idx[idx.length - 1]].addr !== s.addr)) idx.push(i);
  });
  const at = new Map(idx.map((i) => [syms[i].addr, i]));
  const containing = (a) => {
    let lo = 0;
    let hi = idx.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (syms[idx[mid]].addr <= a) lo = mid;
      else hi = mid - 1;
    }
    return idx[lo];
  };
  const fentry = syms.findIndex((s) => s.name === '__fentry__');
  const calls = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+):\s+call\s+0x([0-9a-f]+)/.exec(line);
    if (!m) continue;
    const site = BigInt('0x' + m[1]) + delta;
    const callee = at.get(BigInt('0x' + m[2]) + delta);
    if (callee === undefined || callee === fentry || (site >= initStart && site < initEnd)) continue;
    const caller = containing(site);
    calls.push([caller, Number(site + 5n - syms[caller].addr), callee]);
  }
  calls.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const w = new Writer();
  w.bytes(Buffer.from('CALL', 'latin1'));
  w.u32(1);
  w.u32(calls.length);
  let prev = 0;
  for (const [caller, ret, callee] of calls) {
    w.varint(BigInt(caller - prev));
    w.varint(BigInt(ret));
    w.varint(BigInt(callee));
    prev = caller;
  }
  console.log(`call sites: ${calls.length} direct calls`);
  return w.buffer();
}
