/**
 * Where a program starts: the ELF entry point of an executable on the
 * machine, as a file offset (what a uprobe on it names) and as the virtual
 * address in the image. The emulated kernel runs no user code; it knows a
 * process reaches its entry point right after exec.
 */
import { closeSync, openSync, readSync } from 'node:fs';

export interface ElfEntry {
  /** e_entry: the entry's virtual address in the image. */
  vaddr: bigint;
  /** Its offset in the file (through the PT_LOAD segment that holds it). */
  fileOffset: bigint;
  /** ET_DYN (position independent): loaded at a base address. */
  pie: boolean;
}

const cache = new Map<string, ElfEntry | null>();

function readHead(path: string, len: number): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const b = Buffer.alloc(len);
    const n = readSync(fd, b, 0, len, 0);
    return b.subarray(0, n);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The entry point of a 64-bit little-endian ELF file, or undefined. */
export function elfEntry(path: string): ElfEntry | undefined {
  if (cache.has(path)) return cache.get(path) ?? undefined;
  let out: ElfEntry | null = null;
  const b = readHead(path, 64 * 1024);
  if (b && b.length >= 64 && b.readUInt32BE(0) === 0x7f454c46 && b[4] === 2 && b[5] === 1) {
    const type = b.readUInt16LE(16);
    const entry = b.readBigUInt64LE(24);
    const phoff = Number(b.readBigUInt64LE(32));
    const phentsize = b.readUInt16LE(54);
    const phnum = b.readUInt16LE(56);
    for (let i = 0; i < phnum; i++) {
      const at = phoff + i * phentsize;
      if (at + 56 > b.length) break;
      if (b.readUInt32LE(at) !== 1) continue; // PT_LOAD
      const offset = b.readBigUInt64LE(at + 8);
      const vaddr = b.readBigUInt64LE(at + 16);
      const filesz = b.readBigUInt64LE(at + 32);
      if (entry >= vaddr && entry < vaddr + filesz) {
        out = { vaddr: entry, fileOffset: entry - vaddr + offset, pie: type === 3 };
        break;
      }
    }
  }
  cache.set(path, out);
  return out ?? undefined;
}
