/**
 * Where functions call each other: the return address a call leaves on the
 * stack is `caller + offset`, and it is what kretprobes (`ksys_read+0x7b/0x110
 * <- vfs_read`), stack traces and fgraph's return hooks show. The built-in 7.2
 * models carry every direct call of the real vmlinux (call-sites.bin.br,
 * from its disassembly); for the host, and for calls the real kernel does
 * not make, the offset is modelled on an instruction boundary of the caller.
 *
 * Binary layout (after brotli): "CALL" u32 version(1) u32 count, then count
 * × zigzag-varint (caller symbol index delta, return offset, callee symbol
 * index), sorted by caller then offset. Symbol indexes are kallsyms order.
 */
import type { InsnModel } from './insn_model.js';
import type { KallsymsTable } from './symbol_table.js';
import type { KernelFunction } from './symbols.js';

interface CallSite {
  /** Offset of the return address in the caller (the call instruction ends there). */
  returnOffset: number;
  callee: KernelFunction;
}

export class CallSites {
  /** Real call sites as columns, sorted by caller: function ids and return offsets. */
  private callers = new Int32Array(0);
  private offsets = new Int32Array(0);
  private callees = new Int32Array(0);
  /** caller function id → [first, end) in the columns. */
  private readonly range = new Map<number, [number, number]>();

  constructor(
    private readonly table: KallsymsTable,
    private readonly insns: InsnModel,
    data?: Uint8Array,
  ) {
    if (data) this.decode(data);
  }

  /** Number of real call sites known. */
  get size(): number {
    return this.callers.length;
  }

  /** The real direct calls `caller` makes (empty when unknown). */
  callsFrom(caller: KernelFunction): CallSite[] {
    const r = this.range.get(caller.id);
    if (!r) return [];
    const out: CallSite[] = [];
    for (let i = r[0]; i < r[1]; i++) out.push({ returnOffset: this.offsets[i]!, callee: this.table.functions[this.callees[i]!]! });
    return out;
  }

  /** Whether the real kernel's `caller` calls `callee` directly. */
  isRealCall(caller: KernelFunction, callee: KernelFunction): boolean {
    return this.callsFrom(caller).some((c) => c.callee === callee);
  }

  /**
   * The return offset in `caller` of its call to `callee`: the first real
   * call site if there is one (the `nth` if asked and present), else a
   * modelled one: an instruction boundary past the prologue, chosen by the
   * callee's name, so that it is stable and plausible.
   */
  returnOffset(caller: KernelFunction, callee: KernelFunction, nth = 0): number {
    const real = this.callsFrom(caller).filter((c) => c.callee === callee);
    if (real.length) return real[Math.min(nth, real.length - 1)]!.returnOffset;
    return this.modelled(caller, callee);
  }

  private modelled(caller: KernelFunction, callee: KernelFunction): number {
    const b = this.insns.boundaries(caller);
    // Past endbr64 + the __fentry__ call, and not the last instruction (a return).
    const first = b.findIndex((o) => o >= (caller.traceable ? caller.fentryOffset + 5 : 4) + 1);
    const usable = first < 0 ? [] : b.slice(first, Math.max(first + 1, b.length - 1));
    if (!usable.length) return Math.min(caller.size, 5);
    let h = 0x811c9dc5;
    for (let i = 0; i < callee.name.length; i++) h = Math.imul(h ^ callee.name.charCodeAt(i), 0x01000193);
    return usable[(h >>> 0) % usable.length]!;
  }

  private decode(buf: Uint8Array): void {
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    if (Buffer.from(buf.subarray(0, 4)).toString('latin1') !== 'CALL') throw new Error('call sites: bad magic');
    if (dv.getUint32(4, true) !== 1) throw new Error('call sites: unsupported version');
    const n = dv.getUint32(8, true);
    let p = 12;
    const next = (): number => {
      let z = 0;
      let mul = 1;
      for (;;) {
        const byte = buf[p++]!;
        z += (byte & 0x7f) * mul;
        if (!(byte & 0x80)) break;
        mul *= 128;
      }
      return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
    };
    const callers = new Int32Array(n);
    const offsets = new Int32Array(n);
    const callees = new Int32Array(n);
    let m = 0;
    let callerSym = 0;
    for (let i = 0; i < n; i++) {
      callerSym += next();
      const ret = next();
      const calleeSym = next();
      const a = this.table.functionAtSymbol(callerSym);
      const b = this.table.functionAtSymbol(calleeSym);
      if (!a || !b) continue;
      callers[m] = a.id;
      offsets[m] = ret;
      callees[m] = b.id;
      m++;
    }
    this.callers = callers.subarray(0, m);
    this.offsets = offsets.subarray(0, m);
    this.callees = callees.subarray(0, m);
    for (let i = 0; i < m; ) {
      let j = i + 1;
      while (j < m && callers[j] === callers[i]) j++;
      this.range.set(callers[i]!, [i, j]);
      i = j;
    }
  }
}
