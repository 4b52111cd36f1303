/**
 * syscalls/sys_enter_* and sys_exit_*: their output is not their print fmt
 * but print_syscall_enter() / print_syscall_exit(): "sys_NAME(arg: value, ...)"
 * and "sys_NAME -> 0xRET"; with syscallUserData also the user memory recorded.
 */
import type { KernelProfile } from '../../kernel/profiles/profile.js';
import type { EventField, OutputContext, TraceRecord } from '../event_type.js';
import type { StaticEventSpec } from './catalogue.js';
import { dynamicBytes, fieldLayout, type FieldLayout } from './field_layout.js';
import { printFlags } from './print_fmt/print_helpers.js';
import { number } from './print_fmt/vsprintf.js';
import { type PrintEnvSource, StaticEventType } from './static_event.js';

/** Syscalls whose recorded user buffer is sized by another argument (7.2 check_faultable_syscall). */
export const USER_SIZE_ARG: Readonly<Record<string, { sizeArg: number; isString: boolean }>> = {
  write: { sizeArg: 2, isString: false },
  pwrite64: { sizeArg: 2, isString: false },
  mq_timedsend: { sizeArg: 2, isString: false },
  sethostname: { sizeArg: 1, isString: true },
  setdomainname: { sizeArg: 1, isString: true },
  kexec_file_load: { sizeArg: 3, isString: true },
};

const O_FLAGS: Array<{ mask: bigint; name: string }> = [
  { mask: 0o20200000n, name: 'O_TMPFILE' },
  { mask: 0o1n, name: 'O_WRONLY' },
  { mask: 0o2n, name: 'O_RDWR' },
  { mask: 0o100n, name: 'O_CREAT' },
  { mask: 0o200n, name: 'O_EXCL' },
  { mask: 0o400n, name: 'O_NOCTTY' },
  { mask: 0o1000n, name: 'O_TRUNC' },
  { mask: 0o2000n, name: 'O_APPEND' },
  { mask: 0o4000n, name: 'O_NONBLOCK' },
  { mask: 0o10000n, name: 'O_DSYNC' },
  { mask: 0o40000n, name: 'O_DIRECT' },
  { mask: 0o100000n, name: 'O_LARGEFILE' },
  { mask: 0o200000n, name: 'O_DIRECTORY' },
  { mask: 0o400000n, name: 'O_NOFOLLOW' },
  { mask: 0o1000000n, name: 'O_NOATIME' },
  { mask: 0o2000000n, name: 'O_CLOEXEC' },
];
const O_CREAT = 0o100n;
const O_TMPFILE = 0o20200000n;

/** The syscall name of a syscalls/* event ("sys_enter_openat" -> "openat"). */
function syscallOf(eventName: string): string {
  return eventName.replace(/^sys_(enter|exit)_/, '');
}

function isPrintable(b: number): boolean {
  return b >= 0x20 && b < 0x7f;
}

function cstr(b: Buffer): string {
  const z = b.indexOf(0);
  return b.toString('latin1', 0, z < 0 ? b.length : z);
}

export class SyscallEnterType extends StaticEventType {
  /** The syscall's arguments (the fields between __syscall_nr and the user data). */
  readonly args: FieldLayout[];
  /** Per argument: its recorded user data field (syscallUserData), if any. */
  readonly userFields: Array<FieldLayout | undefined>;
  readonly syscall: string;

  constructor(
    spec: StaticEventSpec,
    env: PrintEnvSource,
    private readonly profile: KernelProfile,
  ) {
    super(spec, env);
    this.syscall = syscallOf(spec.name);
    const all = spec.fields.map(fieldLayout);
    this.args = all.filter((f) => f.name !== '__syscall_nr' && f.kind === 'int');
    this.userFields = this.args.map((a) => all.find((f) => f.name === `__${a.name}_val`));
  }

  private arg(data: Buffer, i: number): bigint {
    const f = this.args[i];
    return f.offset + 8 <= data.length ? data.readBigUInt64LE(f.offset) : 0n;
  }

  override output(rec: TraceRecord, ctx: OutputContext): string {
    const data = rec.data;
    const verbose = ctx.option('verbose');
    if (!this.profile.syscallUserData) {
      const parts = this.args.map((a, i) => `${verbose ? `${a.type} ` : ''}${a.name}: ${this.arg(data, i).toString(16)}`);
      return `sys_${this.syscall}(${parts.join(', ')})`;
    }
    if (this.syscall === 'openat' && !verbose) return this.openat(data);
    const user = USER_SIZE_ARG[this.syscall];
    let out = `sys_${this.syscall}(`;
    this.args.forEach((a, i) => {
      if (i) out += ', ';
      if (verbose) out += `${a.type} `;
      const v = this.arg(data, i);
      out += v < 10n ? `${a.name}: ${v}` : `${a.name}: 0x${v.toString(16)}`;
      const uf = this.userFields[i];
      if (!uf) return;
      const bytes = dynamicBytes(data, uf);
      if (!user || user.isString) {
        out += ` "${cstr(bytes)}"`;
        return;
      }
      const want = Number(BigInt.asIntN(32, this.arg(data, user.sizeArg)));
      const more = bytes.length < want;
      out += ` (${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join(':')}${more ? ', ...' : ''})`;
      if (![...bytes].some(isPrintable)) return;
      out += ` "${[...bytes].map((b) => (isPrintable(b) ? String.fromCharCode(b) : '.')).join('')}${more ? '"...' : '"'}`;
    });
    return out + ')';
  }

  /** sys_enter_openat_print(): flags by name, the mode in octal only when it matters. */
  private openat(data: Buffer): string {
    let out = `sys_${this.syscall}(`;
    for (let i = 0; i < this.args.length; i++) {
      if (i) out += ', ';
      const v = this.arg(data, i);
      if (i === 2) {
        const bits = BigInt.asIntN(32, v);
        out += 'flags: ';
        const done = (bits & (O_CREAT | O_TMPFILE)) === 0n;
        if ((bits & 3n) === 0n) {
          if (bits === 0n) {
            out += 'O_RDONLY';
            if (done) break;
            continue;
          }
          out += 'O_RDONLY|';
        }
        out += printFlags(BigInt.asUintN(64, bits), '|', O_FLAGS);
        if (done) break;
        continue;
      }
      if (i === 3) {
        out += `${this.args[i].name}: 0${number(BigInt.asUintN(32, v), { flags: 16, width: 3, precision: -1, base: 8 })}`;
        continue;
      }
      out += `${this.args[i].name}: ${v}`;
      const uf = this.userFields[i];
      if (uf) out += ` "${cstr(dynamicBytes(data, uf))}"`;
    }
    return out + ')';
  }
}

export class SyscallExitType extends StaticEventType {
  readonly syscall: string;
  private readonly ret: EventField;

  constructor(spec: StaticEventSpec, env: PrintEnvSource) {
    super(spec, env);
    this.syscall = syscallOf(spec.name);
    this.ret = spec.fields.find((f) => f.name === 'ret') ?? { type: 'long', name: 'ret', offset: 16, size: 8, signed: true };
  }

  override output(rec: TraceRecord): string {
    const ret = rec.data.length >= this.ret.offset + 8 ? rec.data.readBigUInt64LE(this.ret.offset) : 0n;
    return `sys_${this.syscall} -> 0x${ret.toString(16)}`;
  }
}
