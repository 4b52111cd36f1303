/**
 * syscalls/sys_enter_* and sys_exit_*: all fed by the raw sys_enter /
 * sys_exit tracepoints (as ftrace_syscall_enter/exit are), which are attached
 * while any syscall event is on. Each record is built per trace array since
 * 7.2 records as much user memory as that array's syscall_user_buf_size.
 */
import type { ExecContext } from '../../kernel/context.js';
import { SYSCALL_NR } from '../../kernel/syscall_nr.js';
import type { SysEnterArgs, TracepointProbe } from '../../kernel/tracepoint.js';
import type { TraceEventType } from '../event_type.js';
import { writeCommonHeader } from '../event_type.js';
import { SYSCALL_USER_BUF_MAX } from './array_events.js';
import type { PendingRecord } from './event_file.js';
import { SyscallEnterType, SyscallExitType, USER_SIZE_ARG } from './syscall_event.js';
import type { EventRegistration, TraceEvents } from './trace_events.js';

/** SYSCALL_FAULT_ARG_SZ - 1: the most user memory read per argument. */
const FAULT_READ_MAX = SYSCALL_USER_BUF_MAX + 4;

function isPrint(b: number): boolean {
  return b >= 0x20 && b < 0x7f;
}

/** The user data 7.2 appends for one argument (sys_fault_user()). */
function userData(type: SyscallEnterType, argIndex: number, args: SysEnterArgs, bufSize: number): Buffer {
  if (!bufSize) return Buffer.alloc(0);
  const sized = USER_SIZE_ARG[type.syscall];
  if (sized && !sized.isString) {
    const want = Math.min(Number(BigInt.asUintN(64, BigInt(args.args[sized.sizeArg] ?? 0))), FAULT_READ_MAX);
    const got = args.user?.(argIndex, want);
    if (!got) return Buffer.alloc(0);
    return Buffer.from(got.subarray(0, Math.min(got.length, want, bufSize)));
  }
  const got = args.user?.(argIndex, FAULT_READ_MAX);
  if (!got) return Buffer.alloc(0);
  const z = got.indexOf(0);
  const str = Buffer.from(z < 0 ? got.subarray(0, FAULT_READ_MAX) : got.subarray(0, z));
  for (let i = 0; i < str.length; i++) if (!isPrint(str[i])) str[i] = 0x2e;
  const size = Math.min(bufSize, SYSCALL_USER_BUF_MAX);
  if (str.length > size) return Buffer.concat([str.subarray(0, size), Buffer.from('...\0', 'latin1')]);
  return Buffer.concat([str, Buffer.from([0])]);
}

function enterRecord(type: SyscallEnterType, ctx: ExecContext, args: SysEnterArgs, bufSize: number): Buffer {
  const user = type.args.map((_, i) => (type.userFields[i] ? userData(type, i, args, bufSize) : undefined));
  const fixed = Math.max(...type.fields.map((f) => f.offset + f.size), 16);
  const total = fixed + user.reduce((n, b) => n + (b?.length ?? 0), 0);
  const buf = Buffer.alloc(total);
  writeCommonHeader(buf, type.id, ctx);
  buf.writeInt32LE(args.id, 8);
  type.args.forEach((f, i) => buf.writeBigUInt64LE(BigInt.asUintN(64, BigInt(args.args[i] ?? 0)), f.offset));
  let off = fixed;
  type.userFields.forEach((uf, i) => {
    const b = user[i];
    if (!uf || !b) return;
    buf.writeUInt32LE(((b.length & 0xffff) << 16) | off, uf.offset);
    b.copy(buf, off);
    off += b.length;
  });
  return buf;
}

function exitRecord(type: TraceEventType, ctx: ExecContext, id: number, ret: number | bigint): Buffer {
  const buf = Buffer.alloc(24);
  writeCommonHeader(buf, type.id, ctx);
  buf.writeInt32LE(id, 8);
  buf.writeBigInt64LE(BigInt.asIntN(64, BigInt(ret)), 16);
  return buf;
}

export class SyscallTracepoints {
  private readonly enterByNr = new Map<number, SyscallEnterType>();
  private readonly exitByNr = new Map<number, SyscallExitType>();
  private enterUsers = 0;
  private exitUsers = 0;

  constructor(private readonly events: TraceEvents) {}

  private readonly onEnter: TracepointProbe<SysEnterArgs> = (ctx, args) => {
    const type = this.enterByNr.get(args.id);
    const files = type && this.events.activeFiles(type);
    if (!type || !files?.size) return;
    for (const f of [...files]) {
      let data: Buffer | undefined;
      const p: PendingRecord = { ctx, data: () => (data ??= enterRecord(type, ctx, args, f.owner.syscallBufSize)) };
      f.handle(p);
    }
  };

  private readonly onExit: TracepointProbe<{ id: number; ret: number | bigint }> = (ctx, args) => {
    const type = this.exitByNr.get(args.id);
    if (type) this.events.emit(type, ctx, () => exitRecord(type, ctx, args.id, args.ret));
  };

  /** Whether every syscalls/* event of one side (by number) leaves nothing where it is on. */
  private quiet(types: ReadonlyMap<number, TraceEventType>): boolean {
    for (const t of types.values()) if (!this.events.quiet(t)) return false;
    return true;
  }

  /** The reg() of a syscalls/* event; undefined for other events. */
  registrationFor(type: TraceEventType): EventRegistration | undefined {
    const enter = type instanceof SyscallEnterType;
    if (!enter && !(type instanceof SyscallExitType)) return undefined;
    const nr = SYSCALL_NR[type.syscall];
    if (nr === undefined) return { register() {}, unregister() {} };
    if (enter) this.enterByNr.set(nr, type);
    else this.exitByNr.set(nr, type as SyscallExitType);
    const point = enter ? 'sys_enter' : 'sys_exit';
    const probe = (enter ? this.onEnter : this.onExit) as TracepointProbe<never>;
    return {
      register: () => {
        const n = enter ? this.enterUsers++ : this.exitUsers++;
        if (n === 0) this.events.tracepoints.register(point, probe, 0, () => this.quiet(enter ? this.enterByNr : this.exitByNr));
      },
      unregister: () => {
        const n = enter ? --this.enterUsers : --this.exitUsers;
        if (n === 0) this.events.tracepoints.unregister(point, probe);
      },
    };
  }
}
