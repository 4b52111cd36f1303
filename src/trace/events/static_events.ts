/** Makes the event types of the static catalogue (syscalls get their own printers). */
import type { KernelProfile } from '../../kernel/profiles/profile.js';
import type { StaticEventSpec } from './catalogue.js';
import { printFmtConstants } from './print_fmt/constants.js';
import { type PrintEnvSource, StaticEventType } from './static_event.js';
import { SyscallEnterType, SyscallExitType } from './syscall_event.js';

export function createStaticEventType(spec: StaticEventSpec, env: PrintEnvSource, profile: KernelProfile): StaticEventType {
  if (spec.system === 'syscalls') {
    if (spec.name.startsWith('sys_enter_')) return new SyscallEnterType(spec, env, profile);
    if (spec.name.startsWith('sys_exit_')) return new SyscallExitType(spec, env);
  }
  return new StaticEventType(spec, env, printFmtConstants(profile));
}
