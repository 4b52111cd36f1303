#!/usr/bin/env node
// Builds data/kernel-<series>/text.bin.br: what the real kernel's text tells
// a kprobe, from the bzImage of the same build as the model's symbols.
//
//   node tools/kernel-data/text.mjs --series 7.2 \
//        --vmlinuz ~/.cache/tracefs-kernel-oracle/7.2/kernel/linux-image-7.2.13+deb14-amd64/vmlinuz
//
// Needs objdump and zstd, and data/kernel-<series>/symbols.bin.br (the
// addresses of _stext, _etext and the site tables, from the census). Holds,
// as offsets from _stext:
//   - every instruction of [_stext, _etext), by objdump's decoding (what
//     can_probe() finds decoding from the start of a function) of the text
//     as it runs: paravirt calls patched as at boot;
//   - the functions starting with endbr64 (where an entry probe goes to +4);
//   - the code the kernel will not put a kprobe on (check_kprobe_address_safe):
//     jump label sites (__jump_table), static call sites (static_call_sites),
//     BUG() sites (__bug_table).
// Format (little-endian, then brotli): "TEXT" u32 version(1) u32 textSize
//   u32 nInsns, nInsns bytes (instruction lengths, in address order)
//   then four lists, each u32 count + varint deltas of offsets:
//   endbr64 function starts, jump label sites, static call sites, bug sites;
//   jump label sites are followed by count bytes of their lengths (2 or 5).
import { execSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, unlinkSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zc } from 'node:zlib';

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const series = arg('series');
const vmlinuz = arg('vmlinuz');
if (!series || !vmlinuz) {
  console.error('usage: text.mjs --series X.Y --vmlinuz FILE');
  process.exit(2);
}
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const outDir = join(repo, 'data', `kernel-${series}`);
const { builtinSymbols } = await import(join(repo, 'dist', 'src', 'kernel', 'symbols_builtin.js'));
const syms = builtinSymbols(series);
const sym = (n) => {
  const s = syms.lookupName(n, '');
  if (!s) throw new Error(`no symbol ${n}`);
  return s.addr;
};
const stext = sym('_stext');
const etext = sym('_etext');
// The link address of .text is 0xffffffff81000000 (x86_64, no KASLR).
const delta = stext - 0xffffffff81000000n;
const textSize = Number(etext - stext);

// --- the ELF inside the bzImage
const img = readFileSync(vmlinuz);
let elf;
const magic = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
for (let i = img.indexOf(magic); i >= 0 && !elf; i = img.indexOf(magic, i + 1)) {
  // zstd complains about what follows the frame (exit status 1) but has written it out.
  const r = spawnSync('zstd', ['-d', '-c', '-q'], { input: img.subarray(i), maxBuffer: 1 << 30 });
  if (r.stdout && r.stdout.length > 4 && r.stdout.readUInt32BE(0) === 0x7f454c46) elf = r.stdout;
}
if (!elf) throw new Error(`${vmlinuz}: no zstd-compressed ELF inside`);
const sections = [];
{
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    const type = elf.readUInt32LE(o + 4);
    if (type === 8 /* NOBITS */) continue;
    sections.push({ addr: elf.readBigUInt64LE(o + 16), off: Number(elf.readBigUInt64LE(o + 24)), size: Number(elf.readBigUInt64LE(o + 32)) });
  }
}
/** The file offset of a link address. */
const fileOff = (a) => {
  const s = sections.find((x) => x.addr && a >= x.addr && a < x.addr + BigInt(x.size));
  if (!s) throw new Error(`address 0x${a.toString(16)} in no section`);
  return s.off + Number(a - s.addr);
};
const textOff = fileOff(0xffffffff81000000n);

// --- paravirt calls, as the kernel patches them at boot (apply_alternatives)
// struct alt_instr (14 bytes, packed): s32 instr_offset, s32 repl_offset,
// u32 ft_flags (cpuid in the low 16 bits, ALT_FLAG_* in the high 16),
// u8 instrlen, u8 replacementlen. A paravirt call `call *pv_ops+N(%rip)`
// has two entries: ALT_CALL_ALWAYS (a direct call to the op's native
// function, then nops) and, for ops with native code, ALT_NOT_XEN (that
// code, then nops). Off Xen both apply, the later last. Other alternatives
// depend on the CPU and are left as built.
const X86_FEATURE_ALWAYS = 3 * 32 + 21;
const X86_FEATURE_XENPV = 8 * 32 + 16;
const ALT_FLAG_NOT = 1;
const ALT_FLAG_DIRECT_CALL = 2;
/** The single NOP of each length the kernel pads with (x86_nops). */
const NOPS = [[], [0x90], [0x66, 0x90], [0x0f, 0x1f, 0x00], [0x0f, 0x1f, 0x40, 0x00], [0x0f, 0x1f, 0x44, 0x00, 0x00], [0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00], [0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00], [0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00]];
let pvPatched = 0;
{
  const a = sym('__alt_instructions') - delta;
  const end = sym('__alt_instructions_end') - delta;
  for (let ea = a; ea < end; ea += 14n) {
    const o = fileOff(ea);
    const site = ea + BigInt(elf.readInt32LE(o));
    const repl = ea + 4n + BigInt(elf.readInt32LE(o + 4));
    const ft = elf.readUInt32LE(o + 8);
    const cpuid = ft & 0xffff;
    const flags = ft >>> 16;
    const len = elf[o + 12];
    const replLen = elf[o + 13];
    if (site < 0xffffffff81000000n || site >= etext - delta || replLen > len) continue;
    let code;
    if (cpuid === X86_FEATURE_ALWAYS && flags & ALT_FLAG_DIRECT_CALL) code = [0xe8, 0, 0, 0, 0];
    else if (cpuid === X86_FEATURE_XENPV && flags & ALT_FLAG_NOT) code = [...elf.subarray(fileOff(repl), fileOff(repl) + replLen)];
    else continue;
    const pad = len - code.length;
    if (pad < 0 || pad >= NOPS.length) continue;
    elf.set([...code, ...NOPS[pad]], fileOff(site));
    pvPatched++;
  }
}

// --- instructions, by objdump
const tmp = join(outDir, '.vmlinux.tmp');
writeFileSync(tmp, elf);
let listing;
try {
  listing = execSync(
    `objdump -d --no-show-raw-insn --start-address=0xffffffff81000000 --stop-address=0x${(etext - delta).toString(16)} ${tmp} | grep -E '^ffffffff[0-9a-f]+:' | cut -d: -f1`,
    { maxBuffer: 1 << 30 },
  ).toString('latin1');
} finally {
  unlinkSync(tmp);
}
const starts = listing.split('\n').filter(Boolean).map((l) => Number(BigInt('0x' + l.trim()) - 0xffffffff81000000n));
const lens = Buffer.alloc(starts.length);
for (let i = 0; i < starts.length; i++) {
  const next = i + 1 < starts.length ? starts[i + 1] : textSize;
  const len = next - starts[i];
  if (len < 1 || len > 15) throw new Error(`instruction at +0x${starts[i].toString(16)}: length ${len}`);
  lens[i] = len;
}
const isStart = new Uint8Array(textSize);
for (const s of starts) isStart[s] = 1;

// --- functions: where each text symbol starts, and whether with endbr64
const endbr = [];
let misaligned = 0;
for (const f of syms.functions) {
  if (f.module || f.addr < stext || f.addr >= etext) continue;
  const off = Number(f.addr - stext);
  if (!isStart[off]) misaligned++;
  if (elf.readUInt32BE(textOff + off) === 0xf30f1efa) endbr.push(off);
}
const uniq = (a) => [...new Set(a)].sort((x, y) => x - y);

// --- sites the kernel will not patch: s32 self-relative pointers at the start of each entry
const table = (start, stop, entrySize) => {
  const a = sym(start) - delta;
  const n = Number(sym(stop) - delta - a) / entrySize;
  if (!Number.isInteger(n)) throw new Error(`${start}: size not a multiple of ${entrySize}`);
  const out = [];
  for (let i = 0; i < n; i++) {
    const ea = a + BigInt(i * entrySize);
    const target = ea + BigInt(elf.readInt32LE(fileOff(ea))) + delta;
    if (target >= stext && target < etext) out.push(Number(target - stext));
  }
  return { n, sites: uniq(out) };
};
const jump = table('__start___jump_table', '__stop___jump_table', 16);
const statics = table('__start_static_call_sites', '__stop_static_call_sites', 8);
// struct bug_entry: 12 bytes on 6.12, 16 on 7.2: the size whose sites are instruction starts
let bugs;
let bestFit = 0;
for (const size of [12, 16]) {
  let t;
  try {
    t = table('__start___bug_table', '__stop___bug_table', size);
  } catch {
    continue;
  }
  const fit = t.sites.filter((o) => isStart[o]).length / t.n;
  if (fit > bestFit) [bugs, bestFit] = [t, fit];
}
if (!bugs || bestFit < 0.5) throw new Error('__bug_table: no entry size fits');
const jumpLens = jump.sites.map((o) => {
  const i = starts.indexOf(o);
  return i >= 0 ? lens[i] : 5;
});

// --- write
const chunks = [];
const u32 = (v) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  chunks.push(b);
};
const varint = (v) => {
  const bytes = [];
  do {
    let byte = v & 0x7f;
    v = Math.floor(v / 128);
    if (v) byte |= 0x80;
    bytes.push(byte);
  } while (v);
  chunks.push(Buffer.from(bytes));
};
const list = (offs) => {
  u32(offs.length);
  let prev = 0;
  for (const o of offs) {
    varint(o - prev);
    prev = o;
  }
};
chunks.push(Buffer.from('TEXT', 'latin1'));
u32(1);
u32(textSize);
u32(lens.length);
chunks.push(lens);
list(uniq(endbr));
list(jump.sites);
chunks.push(Buffer.from(jumpLens));
list(statics.sites);
list(bugs.sites);
const raw = Buffer.concat(chunks);
const br = brotliCompressSync(raw, { params: { [zc.BROTLI_PARAM_QUALITY]: 11, [zc.BROTLI_PARAM_LGWIN]: 24, [zc.BROTLI_PARAM_SIZE_HINT]: raw.length } });
writeFileSync(join(outDir, 'text.bin.br'), br);
console.log(
  `${series}: ${lens.length} instructions in ${textSize} bytes, ${endbr.length} functions with endbr64 (${misaligned} symbols off an instruction start), ` +
    `${jump.sites.length} jump label sites, ${statics.sites.length} static call sites, ${bugs.sites.length} bug sites, ${pvPatched} paravirt patches; ${br.length} bytes`,
);
