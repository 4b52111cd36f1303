/**
 * Where a program starts: the ELF entry point of an executable on the
 * machine, as a file offset (what a uprobe on it names) and as the virtual
 * address in the image. The emulated kernel runs no user code; it knows a
 * process reaches its entry point right after exec.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { expectSystemError } from './system_error.js';

interface ElfPoint {
  /** The virtual address in the image. */
  vaddr: bigint;
  /** Its offset in the file (through the PT_LOAD segment that holds it). */
  fileOffset: bigint;
}

interface ElfEntry extends ElfPoint {
  /** ET_DYN (position independent): loaded at a base address. */
  pie: boolean;
  /** DT_INIT (_init): also run at every start of a dynamically linked program. */
  init?: ElfPoint;
}

const cache = new Map<string, ElfEntry | null>();

function readAt(path: string, len: number, pos = 0): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const b = Buffer.alloc(len);
    const n = readSync(fd, b, 0, len, pos);
    return b.subarray(0, n);
  } catch (e) {
    expectSystemError(e);
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The entry point of a 64-bit little-endian ELF file, or undefined. */
export function elfEntry(path: string): ElfEntry | undefined {
  if (cache.has(path)) return cache.get(path) ?? undefined;
  let out: ElfEntry | null = null;
  const b = readAt(path, 64 * 1024);
  if (b && b.length >= 64 && b.readUInt32BE(0) === 0x7f454c46 && b[4] === 2 && b[5] === 1) {
    const type = b.readUInt16LE(16);
    const entry = b.readBigUInt64LE(24);
    const phoff = Number(b.readBigUInt64LE(32));
    const phentsize = b.readUInt16LE(54);
    const phnum = b.readUInt16LE(56);
    const loads: { offset: bigint; vaddr: bigint; filesz: bigint }[] = [];
    let dynamic: { offset: number; size: number } | undefined;
    for (let i = 0; i < phnum; i++) {
      const at = phoff + i * phentsize;
      if (at + 56 > b.length) break;
      const ptype = b.readUInt32LE(at);
      if (ptype === 1) loads.push({ offset: b.readBigUInt64LE(at + 8), vaddr: b.readBigUInt64LE(at + 16), filesz: b.readBigUInt64LE(at + 32) });
      else if (ptype === 2) dynamic = { offset: Number(b.readBigUInt64LE(at + 8)), size: Number(b.readBigUInt64LE(at + 32)) };
    }
    const point = (vaddr: bigint): ElfPoint | undefined => {
      const l = loads.find((x) => vaddr >= x.vaddr && vaddr < x.vaddr + x.filesz);
      return l && { vaddr, fileOffset: vaddr - l.vaddr + l.offset };
    };
    const start = point(entry);
    if (start) {
      out = { ...start, pie: type === 3 };
      const dyn = dynamic && dynamic.size <= 1 << 16 ? readAt(path, dynamic.size, dynamic.offset) : undefined;
      for (let at = 0; dyn && at + 16 <= dyn.length; at += 16) {
        const tag = dyn.readBigInt64LE(at);
        if (tag === 0n) break; // DT_NULL
        if (tag === 12n) out.init = point(dyn.readBigUInt64LE(at + 8)); // DT_INIT
      }
    }
  }
  cache.set(path, out);
  return out ?? undefined;
}
