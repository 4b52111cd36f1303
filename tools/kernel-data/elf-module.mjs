// Reads a kernel module (.ko, ELF64 relocatable) the way the module loader
// would lay it out: which symbols /proc/kallsyms shows for it (with their
// kallsyms type letters and exported-ness), which functions have an
// __fentry__ call (from __mcount_loc), the memory regions, and its .BTF.
//
// Only what the emulated kernel model needs; no relocation is applied.

const SHT_SYMTAB = 2;
const SHT_RELA = 4;
const SHT_NOBITS = 8;
const SHF_WRITE = 0x1;
const SHF_ALLOC = 0x2;
const SHF_EXECINSTR = 0x4;
const SHF_RO_AFTER_INIT = 0x00200000;
const SHN_UNDEF = 0;
const SHN_LORESERVE = 0xff00;
const STB_GLOBAL = 1;
const STB_WEAK = 2;
const STT_OBJECT = 1;
const STT_SECTION = 3;
const STT_FILE = 4;
const PAGE = 4096;

/** @param {Buffer} buf */
function parseElf(buf) {
  if (buf.readUInt32BE(0) !== 0x7f454c46 || buf[4] !== 2 || buf[5] !== 1) throw new Error('not an ELF64 LE file');
  const shoff = Number(buf.readBigUInt64LE(0x28));
  const shentsize = buf.readUInt16LE(0x3a);
  const shnum = buf.readUInt16LE(0x3c);
  const shstrndx = buf.readUInt16LE(0x3e);
  const secs = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    secs.push({
      index: i,
      nameOff: buf.readUInt32LE(o),
      type: buf.readUInt32LE(o + 4),
      flags: Number(buf.readBigUInt64LE(o + 8)),
      offset: Number(buf.readBigUInt64LE(o + 0x18)),
      size: Number(buf.readBigUInt64LE(o + 0x20)),
      link: buf.readUInt32LE(o + 0x28),
      info: buf.readUInt32LE(o + 0x2c),
      align: Number(buf.readBigUInt64LE(o + 0x30)),
      entsize: Number(buf.readBigUInt64LE(o + 0x38)),
      name: '',
    });
  }
  const shstr = secs[shstrndx];
  for (const s of secs) s.name = cstr(buf, shstr.offset + s.nameOff);
  return secs;
}

function cstr(buf, off) {
  const end = buf.indexOf(0, off);
  return buf.toString('latin1', off, end);
}

function readSymbols(buf, secs) {
  const symtab = secs.find((s) => s.type === SHT_SYMTAB);
  const strtab = secs[symtab.link];
  const out = [];
  for (let i = 0; i < symtab.size / 24; i++) {
    const o = symtab.offset + i * 24;
    out.push({
      index: i,
      name: cstr(buf, strtab.offset + buf.readUInt32LE(o)),
      info: buf[o + 4],
      shndx: buf.readUInt16LE(o + 6),
      value: Number(buf.readBigUInt64LE(o + 8)),
      size: Number(buf.readBigUInt64LE(o + 16)),
    });
  }
  return out;
}

/** Relocations of section `target` as {offset, sym, addend}. */
function relocsFor(buf, secs, target) {
  const rela = secs.find((s) => s.type === SHT_RELA && s.info === target.index);
  if (!rela) return [];
  const out = [];
  for (let i = 0; i < rela.size / 24; i++) {
    const o = rela.offset + i * 24;
    const info = buf.readBigUInt64LE(o + 8);
    out.push({ offset: Number(buf.readBigUInt64LE(o)), sym: Number(info >> 32n), addend: Number(buf.readBigInt64LE(o + 16)) });
  }
  return out;
}

function isInitSection(name) {
  return name.startsWith('.init');
}

/** The kallsyms letter a module symbol gets (before exported symbols are upper-cased). */
function elfType(sym, secs) {
  const bind = sym.info >> 4;
  const type = sym.info & 0xf;
  if (bind === STB_WEAK) return type === STT_OBJECT ? 'v' : 'w';
  if (sym.shndx === SHN_UNDEF) return 'U';
  if (sym.shndx >= SHN_LORESERVE) return '?';
  const sec = secs[sym.shndx];
  if (sec.flags & SHF_EXECINSTR) return 't';
  if (sec.flags & SHF_ALLOC && sec.type !== SHT_NOBITS) return sec.flags & SHF_WRITE ? 'd' : 'r';
  if (sec.type === SHT_NOBITS) return 'b';
  if (sec.name.startsWith('.debug')) return 'n';
  return '?';
}

/** Symbols the loader keeps for kallsyms once init is done (core symbols). */
function isCoreSymbol(sym, secs) {
  if (sym.shndx === SHN_UNDEF || sym.shndx >= secs.length || !sym.name) return false;
  const type = sym.info & 0xf;
  if (type === STT_SECTION || type === STT_FILE) return false;
  const sec = secs[sym.shndx];
  if (!(sec.flags & SHF_ALLOC)) return false;
  if (isInitSection(sec.name)) return false;
  return true;
}

/** Which region of module memory a section lands in, or undefined if not loaded. */
function regionOf(sec) {
  if (!(sec.flags & SHF_ALLOC) || isInitSection(sec.name)) return undefined;
  if (sec.flags & SHF_EXECINSTR) return 'text';
  if (sec.flags & SHF_RO_AFTER_INIT || sec.name === '.data..ro_after_init') return 'ro_after_init';
  if (sec.flags & SHF_WRITE) return 'data';
  return 'rodata';
}

const REGION_ORDER = ['text', 'rodata', 'ro_after_init', 'data'];

/**
 * @param {Buffer} buf the .ko
 * @param {string} name module name
 * @param {bigint} base where its first region goes
 * @returns the module's kallsyms symbols (symtab order), traceable functions
 * (mcount order, sorted by address as the loader sorts them), regions, BTF,
 * and the first address after it.
 */
export function loadModule(buf, name, base) {
  const secs = parseElf(buf);
  const syms = readSymbols(buf, secs);
  // Lay sections out region by region, in ELF order, each at its alignment.
  const regionSize = { text: 0, rodata: 0, ro_after_init: 0, data: 0 };
  const secOffset = new Map();
  const secRegion = new Map();
  for (const s of secs) {
    const r = regionOf(s);
    if (!r) continue;
    const a = Math.max(1, s.align);
    const off = Math.ceil(regionSize[r] / a) * a;
    secOffset.set(s.index, off);
    secRegion.set(s.index, r);
    regionSize[r] = off + s.size;
  }
  const regionStart = {};
  const regions = [];
  let cur = base;
  for (const r of REGION_ORDER) {
    if (!regionSize[r]) continue;
    regionStart[r] = cur;
    regions.push({ kind: r, start: cur, size: regionSize[r] });
    cur += BigInt(Math.ceil(regionSize[r] / PAGE) * PAGE);
  }
  const addrOf = (shndx, value) => regionStart[secRegion.get(shndx)] + BigInt(secOffset.get(shndx) + value);

  const ksymStrings = secs.find((s) => s.name === '__ksymtab_strings');
  const exported = new Set();
  if (ksymStrings) {
    let p = ksymStrings.offset;
    const end = p + ksymStrings.size;
    while (p < end) {
      const s = cstr(buf, p);
      if (s) exported.add(s);
      p += s.length + 1;
    }
  }

  const symbols = [];
  const bySecValue = new Map();
  for (const sym of syms) {
    if (!isCoreSymbol(sym, secs) || !secRegion.has(sym.shndx)) continue;
    let type = elfType(sym, secs);
    const bind = sym.info >> 4;
    if (exported.has(sym.name) && (bind === STB_GLOBAL || bind === STB_WEAK)) type = type.toUpperCase();
    const addr = addrOf(sym.shndx, sym.value);
    symbols.push({ name: sym.name, type, addr });
    const key = `${sym.shndx}:${sym.value}`;
    if (/[tTwW]/.test(type) && !sym.name.startsWith('__pfx_') && !bySecValue.has(key)) bySecValue.set(key, symbols.length - 1);
  }

  // __fentry__ call sites: relocations of __mcount_loc point at them.
  const mcount = secs.find((s) => s.name === '__mcount_loc');
  const traceable = [];
  if (mcount) {
    for (const r of relocsFor(buf, secs, mcount)) {
      const target = syms[r.sym];
      const shndx = target.shndx;
      if (!secRegion.has(shndx)) continue; // init text: freed after load
      const site = target.value + r.addend;
      // The function whose entry is this site (0, or 4 after an endbr64).
      let fn;
      let fentry = 0;
      for (const off of [0, 4]) {
        const i = bySecValue.get(`${shndx}:${site - off}`);
        if (i !== undefined) {
          fn = i;
          fentry = off;
          break;
        }
      }
      if (fn === undefined) throw new Error(`${name}: no function at __fentry__ site ${secs[shndx].name}+0x${site.toString(16)}`);
      traceable.push({ sym: fn, fentry, ip: addrOf(shndx, site) });
    }
    traceable.sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
  }

  const btfSec = secs.find((s) => s.name === '.BTF');
  const btf = btfSec ? buf.subarray(btfSec.offset, btfSec.offset + btfSec.size) : undefined;
  return { name, symbols, traceable, regions, btf, end: cur };
}
