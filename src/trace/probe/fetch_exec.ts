/**
 * Running fetch programs (trace_probe_tmpl.h, and each probe type's
 * process_fetch_insn()): the values a probe event records, read from the
 * registers, the stack, kernel or user memory, the entry data of a return
 * probe, or the record of the event an eprobe is attached to — and the
 * record layout they are stored in (fixed part, then the dynamic data of
 * strings located by `__data_loc` words).
 */
import { errno } from '../../kernel/errno.js';
import { THREAD_SIZE } from '../../kernel/kmem.js';
import type { EventField } from '../event_type.js';
import type { FetchInsn } from './fetch.js';
import type { ProbeArg } from './parse_context.js';

/** PATH_MAX: the longest string a probe fetches. */
const MAX_STRING_SIZE = 4096;
/** Kernel stacks are aligned on their size (regs_within_kernel_stack()). */
const STACK_SIZE = BigInt(THREAD_SIZE);
/** TASK_SIZE_MAX + PAGE_SIZE: copy_from_kernel_nofault() refuses addresses below. */
const KERNEL_FLOOR = 0x00007ffffffff000n + 0x1000n;
/** TASK_SIZE_MAX: copy_from_user_nofault() refuses addresses above. */
const USER_CEIL = 0x00007ffffffff000n;

/** The registers a probe sees: full pt_regs (kprobes, uprobes) or the ftrace_regs view (fprobes). */
interface FetchRegs {
  /** regs_get_register(): the value at a pt_regs offset. */
  atOffset(off: number): bigint | undefined;
  readonly sp: bigint;
  readonly ax: bigint;
  /** regs_get_kernel_argument() for the register arguments (1-based), undefined past %r9. */
  arg(n: number): bigint | undefined;
}

/** Memory as a probe handler reads it (faults are undefined). */
export interface ProbeMemory {
  readKernel(addr: bigint, len: number): Buffer | undefined;
  readUser(addr: bigint, len: number): Buffer | undefined;
  /** sprint_symbol(): `name+0xoff/0xsize [mod]`, or `0x<addr>` without a symbol. */
  sprintSymbol(addr: bigint): string;
  /** `current`: the running task's task_struct. */
  readonly current: bigint;
  /** this_cpu_ptr(): the running CPU's instance of a per-CPU pointer. */
  thisCpuPtr(ptr: bigint): bigint;
}

/** What one hit gives the fetch programs. */
export interface FetchSource {
  regs?: FetchRegs;
  /** A return probe's entry data (the arguments saved at entry). */
  edata?: Buffer;
  /** The attached event's record (eprobes). */
  record?: Buffer;
  /** current->comm. */
  comm: string;
  mem: ProbeMemory;
}

/** Where values that are not in emulated memory get an address: current->comm, the attached record, immediate strings. */
const LOCAL_BASE = 0xfffffe0000000000n;
const COMM_ADDR = LOCAL_BASE;
const RECORD_ADDR = LOCAL_BASE + 0x10000n;
const DATA_ADDR = LOCAL_BASE + 0x20000n;

/** One run: the source, with local objects mapped at their fake addresses. */
class Run {
  private readonly locals: { addr: bigint; bytes: Buffer }[] = [];
  private dataNext = DATA_ADDR;
  private readonly dataAddrs = new Map<string, bigint>();

  constructor(readonly src: FetchSource) {
    this.locals.push({ addr: COMM_ADDR, bytes: Buffer.from(src.comm.slice(0, 15) + '\0', 'latin1') });
    if (src.record) this.locals.push({ addr: RECORD_ADDR, bytes: src.record });
  }

  dataAddress(s: string): bigint {
    let a = this.dataAddrs.get(s);
    if (a === undefined) {
      a = this.dataNext;
      const bytes = Buffer.from(s + '\0', 'latin1');
      this.dataNext += BigInt(bytes.length + 7) & ~7n;
      this.dataAddrs.set(s, a);
      this.locals.push({ addr: a, bytes });
    }
    return a;
  }

  /** copy_from_kernel_nofault(). */
  readKernel(addr: bigint, len: number): Buffer | undefined {
    for (const l of this.locals) {
      if (addr >= l.addr && addr + BigInt(len) <= l.addr + BigInt(l.bytes.length)) {
        const off = Number(addr - l.addr);
        return l.bytes.subarray(off, off + len);
      }
    }
    if (addr < KERNEL_FLOOR) return undefined;
    return this.src.mem.readKernel(addr, len);
  }

  /** copy_from_user_nofault(). */
  readUser(addr: bigint, len: number): Buffer | undefined {
    if (addr + BigInt(len) > USER_CEIL) return undefined;
    return this.src.mem.readUser(addr, len);
  }

  read(addr: bigint, len: number, user: boolean): Buffer | undefined {
    return user ? this.readUser(addr, len) : this.readKernel(addr, len);
  }

  /** Length of the string at addr with its NUL (at most MAX_STRING_SIZE), or -1 on a fault. */
  strlen(addr: bigint, user: boolean): number {
    for (let len = 0; len < MAX_STRING_SIZE; len++) {
      const b = this.read(addr + BigInt(len), 1, user);
      if (!b) return user && len > 0 ? -1 : -1;
      if (b[0] === 0) return len + 1;
    }
    return MAX_STRING_SIZE;
  }

  /** strncpy_from_*_nofault(): the copied bytes (NUL-ended, truncated to max), or undefined on a fault. */
  strcpy(addr: bigint, max: number, user: boolean): Buffer | undefined {
    const out: number[] = [];
    for (let i = 0; i < max; i++) {
      const b = this.read(addr + BigInt(i), 1, user);
      if (!b) return undefined;
      out.push(b[0]);
      if (b[0] === 0) return Buffer.from(out);
    }
    if (!out.length) return undefined;
    out[out.length - 1] = 0;
    return Buffer.from(out);
  }

  regsStackNth(n: number): bigint {
    const regs = this.src.regs;
    if (!regs) return 0n;
    const addr = regs.sp + BigInt(n) * 8n;
    if ((addr & ~(STACK_SIZE - 1n)) !== (regs.sp & ~(STACK_SIZE - 1n))) return 0n;
    return this.src.mem.readKernel(addr, 8)?.readBigUInt64LE(0) ?? 0n;
  }

  /** get_event_field(): a field of the attached record (strings by address). */
  eventField(f: EventField): bigint {
    const rec = this.src.record;
    if (!rec) return 0n;
    const addr = RECORD_ADDR + BigInt(f.offset);
    switch (stringFieldKind(f.type)) {
      case 'dyn':
        return RECORD_ADDR + BigInt(rec.readUInt32LE(f.offset) & 0xffff);
      case 'rdyn':
        return addr + BigInt(rec.readUInt32LE(f.offset) & 0xffff);
      case 'static':
        return addr;
      case 'ptr':
        return rec.readBigUInt64LE(f.offset);
    }
    switch (f.size) {
      case 1:
        return BigInt.asUintN(64, BigInt(f.signed ? rec.readInt8(f.offset) : rec.readUInt8(f.offset)));
      case 2:
        return BigInt.asUintN(64, BigInt(f.signed ? rec.readInt16LE(f.offset) : rec.readUInt16LE(f.offset)));
      case 4:
        return BigInt.asUintN(64, BigInt(f.signed ? rec.readInt32LE(f.offset) : rec.readUInt32LE(f.offset)));
      case 8:
        return rec.readBigUInt64LE(f.offset);
      default:
        // an array: its address
        return addr;
    }
  }
}

/** filter_assign_type()'s string kinds. */
function stringFieldKind(type: string): 'dyn' | 'rdyn' | 'static' | 'ptr' | undefined {
  if (type.includes('__data_loc') && type.includes('char')) return 'dyn';
  if (type.includes('__rel_loc') && type.includes('char')) return 'rdyn';
  if (type.includes('[') && type.includes('char') && !type.includes('__data_loc')) return 'static';
  if (type === 'char *' || type === 'const char *') return 'ptr';
  return undefined;
}

/** Where a value is stored: the record and an offset in it (null in the sizing pass). */
interface Dest {
  buf: Buffer;
  off: number;
}

const EFAULT = -errno.EFAULT;
const EILSEQ = -errno.EILSEQ;
const ENOMEM = -errno.ENOMEM;

function storeRaw(buf: Buffer, off: number, size: number, v: bigint): void {
  if (off + size > buf.length) return;
  switch (size) {
    case 1:
      buf.writeUInt8(Number(BigInt.asUintN(8, v)), off);
      break;
    case 2:
      buf.writeUInt16LE(Number(BigInt.asUintN(16, v)), off);
      break;
    case 4:
      buf.writeUInt32LE(Number(BigInt.asUintN(32, v)), off);
      break;
    default:
      buf.writeBigUInt64LE(BigInt.asUintN(64, v), off);
  }
}

function applyBitfield(code: FetchInsn, d: Dest): void {
  const size = code.basesize ?? 8;
  const bits = BigInt(size * 8);
  let v: bigint;
  switch (size) {
    case 1:
      v = BigInt(d.buf.readUInt8(d.off));
      break;
    case 2:
      v = BigInt(d.buf.readUInt16LE(d.off));
      break;
    case 4:
      v = BigInt(d.buf.readUInt32LE(d.off));
      break;
    default:
      v = d.buf.readBigUInt64LE(d.off);
  }
  v = BigInt.asUintN(Number(bits), v << BigInt(code.lshift ?? 0));
  v >>= BigInt(code.rshift ?? 0);
  storeRaw(d.buf, d.off, size, v);
}

/** The first stage: the value from the context (process_fetch_insn()); the index after it. */
function fetchFirst(code: readonly FetchInsn[], run: Run): { val: bigint; next: number } | number {
  let i = 0;
  if (code[i].op === 'NOP_SYMBOL') i++;
  const c = code[i];
  const src = run.src;
  let val: bigint;
  switch (c.op) {
    case 'REG':
      val = src.regs?.atOffset(c.param ?? 0) ?? 0n;
      break;
    case 'STACK':
      val = run.regsStackNth(c.param ?? 0);
      break;
    case 'STACKP':
      val = src.regs?.sp ?? 0n;
      break;
    case 'RETVAL':
      val = src.regs?.ax ?? 0n;
      break;
    case 'ARG': {
      const n = c.param ?? 0;
      // past the six register arguments: the stack, above the return address
      val = n < 6 ? (src.regs?.arg(n + 1) ?? 0n) : run.regsStackNth(n - 5);
      break;
    }
    case 'EDATA':
      val = src.edata && src.edata.length >= (c.offset ?? 0) + 8 ? src.edata.readBigUInt64LE(c.offset ?? 0) : 0n;
      break;
    case 'IMM':
      val = c.immediate ?? 0n;
      break;
    case 'COMM':
      val = COMM_ADDR;
      break;
    case 'CURRENT':
      val = src.mem.current;
      break;
    case 'DATA':
      val = run.dataAddress(c.data ?? '');
      break;
    case 'TP_ARG':
      val = c.field ? run.eventField(c.field) : 0n;
      break;
    case 'FOFFS':
      // uprobes' file offsets: no user-space probing here
      val = c.immediate ?? 0n;
      break;
    default:
      return EILSEQ;
  }
  return { val, next: i + 1 };
}

/** process_fetch_insn_bottom(): dereferences, the store, bitfields, array loops. Returns the dynamic bytes used (or needed). */
function fetchBottom(code: readonly FetchInsn[], pc: number, val: bigint, dest: Dest | null, run: Run): number {
  let ret = 0;
  let total = 0;
  let i = 0;
  let loc = 0;
  let lval = val;
  let s3: number;
  stage2: for (;;) {
    for (;;) {
      const c = code[pc];
      if (c.op === 'CPU_PTR') {
        lval = val;
        val = run.src.mem.thisCpuPtr(val);
        pc++;
        continue;
      }
      if (c.op !== 'DEREF' && c.op !== 'UDEREF') break;
      lval = val;
      const b = run.read(BigInt.asUintN(64, val + BigInt(c.offset ?? 0)), 8, c.op === 'UDEREF');
      if (!b) return EFAULT;
      val = b.readBigUInt64LE(0);
      pc++;
    }
    s3 = pc;
    for (;;) {
      // stage 3: store
      let c = code[pc];
      const at = BigInt.asUintN(64, val + BigInt(c.offset ?? 0));
      let skipMod = false;
      if (!dest) {
        switch (c.op) {
          case 'ST_STRING':
          case 'ST_USTRING': {
            const n = run.strlen(at, c.op === 'ST_USTRING');
            ret = n < 0 ? EFAULT : n;
            break;
          }
          case 'ST_SYMSTR':
            ret = Buffer.byteLength(run.src.mem.sprintSymbol(at), 'latin1') + 1;
            break;
          default:
            return EILSEQ;
        }
        pc++;
        skipMod = true;
      } else {
        switch (c.op) {
          case 'ST_RAW':
            storeRaw(dest.buf, dest.off, c.size ?? 8, val);
            break;
          case 'ST_MEM':
          case 'ST_UMEM': {
            const b = run.read(at, c.size ?? 8, c.op === 'ST_UMEM');
            if (b) b.copy(dest.buf, dest.off);
            break;
          }
          case 'ST_STRING':
          case 'ST_USTRING': {
            loc = dest.buf.readUInt32LE(dest.off);
            const maxlen = loc >>> 16;
            const doff = loc & 0xffff;
            if (!maxlen) {
              ret = ENOMEM;
              break;
            }
            const bytes = run.strcpy(at, maxlen, c.op === 'ST_USTRING');
            ret = bytes ? bytes.length : EFAULT;
            if (bytes) bytes.copy(dest.buf, doff, 0, Math.min(bytes.length, dest.buf.length - doff));
            // set_data_loc(): the bytes copied with their NUL; a fault leaves a zero length
            dest.buf.writeUInt32LE((((bytes?.length ?? 0) & 0xffff) << 16) | doff, dest.off);
            break;
          }
          case 'ST_SYMSTR': {
            // fetch_store_symstring(): the name is written, the data_loc keeps the space left, the NUL is not counted
            loc = dest.buf.readUInt32LE(dest.off);
            const doff = loc & 0xffff;
            if (!(loc >>> 16)) {
              ret = ENOMEM;
              break;
            }
            const s = Buffer.from(run.src.mem.sprintSymbol(at) + '\0', 'latin1');
            s.copy(dest.buf, doff, 0, Math.min(s.length, dest.buf.length - doff));
            ret = s.length - 1;
            break;
          }
          default:
            return EILSEQ;
        }
        pc++;
      }
      c = code[pc];
      if (!skipMod && c.op === 'MOD_BF') {
        if (dest) applyBitfield(c, dest);
        pc++;
        c = code[pc];
      }
      // the array loop
      if (c.op === 'LP_ARRAY') {
        if (ret < 0) ret = 0;
        total += ret;
        if (++i < (c.param ?? 0)) {
          const st = code[s3];
          pc = s3;
          if (st.op !== 'ST_STRING' && st.op !== 'ST_USTRING') {
            if (dest) dest = { buf: dest.buf, off: dest.off + (st.size ?? 0) };
            val += BigInt(st.size ?? 0);
            continue;
          }
          pc--;
          val = lval + 8n;
          if (dest) {
            dest = { buf: dest.buf, off: dest.off + 4 };
            // update_data_loc(): what is left, after what this element used
            const maxlen = (loc >>> 16) - ret;
            const offs = (loc & 0xffff) + ret;
            dest.buf.writeUInt32LE((((maxlen < 0 ? 0 : maxlen) & 0xffff) << 16) | (offs & 0xffff), dest.off);
          }
          continue stage2;
        }
        pc++;
        ret = total;
      }
      return code[pc]?.op === 'END' ? ret : EILSEQ;
    }
  }
}

/** process_fetch_insn(): one argument's program; bytes of dynamic data used (sizing when dest is null), or a negative errno. */
function processFetch(code: readonly FetchInsn[], dest: Dest | null, run: Run): number {
  const first = fetchFirst(code, run);
  if (typeof first === 'number') return first;
  return fetchBottom(code, first.next, first.val, dest, run);
}

/** The probe's part of a record: its arguments' bytes (fixed) and their dynamic data. */
interface ProbeArgsLayout {
  readonly args: readonly ProbeArg[];
  /** Bytes of the fixed argument area. */
  readonly size: number;
}

/**
 * Builds a whole record: `headerSize` bytes (trace_entry and the probe's own
 * fields, filled by `head`), then the arguments (store_trace_args()), then
 * the dynamic data. `__get_data_size()` sizes the strings first.
 */
export function buildProbeRecord(
  tp: ProbeArgsLayout,
  headerSize: number,
  src: FetchSource,
  head: (buf: Buffer) => void,
): Buffer {
  const run = new Run(src);
  let dsize = 0;
  for (const a of tp.args) {
    if (!a.dynamic) continue;
    const n = processFetch(a.code, null, run);
    if (n > 0) dsize += n;
  }
  const buf = Buffer.alloc(headerSize + tp.size + dsize);
  head(buf);
  let dyn = headerSize + tp.size;
  let maxlen = dsize;
  for (const a of tp.args) {
    const off = headerSize + a.offset;
    if (a.dynamic) buf.writeUInt32LE(((maxlen & 0xffff) << 16) | (dyn & 0xffff), off);
    const ret = processFetch(a.code, { buf, off }, run);
    if (a.dynamic && ret > 0) {
      dyn += ret;
      maxlen -= ret;
    }
  }
  return buf;
}

/** store_*_entry_data(): the function arguments a return probe saves at entry (8 bytes each). */
export function storeEntryData(entryArgs: readonly number[], regs: FetchRegs | undefined, mem: ProbeMemory): Buffer {
  const run = new Run({ regs, comm: '', mem });
  const b = Buffer.alloc(entryArgs.length * 8);
  entryArgs.forEach((n, i) => {
    const v = n < 6 ? (regs?.arg(n + 1) ?? 0n) : run.regsStackNth(n - 5);
    b.writeBigUInt64LE(BigInt.asUintN(64, v), i * 8);
  });
  return b;
}
