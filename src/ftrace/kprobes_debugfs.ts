/**
 * What debugfs shows of kprobes (kprobes/list, kprobes/enabled,
 * kprobes/blacklist), made lazily so a kernel nobody probes pays nothing.
 */
import type { Kernel } from '../kernel/kernel.js';
import { Kprobes } from './kprobes.js';

export interface KprobesView {
  list(): string;
  blacklist(): string;
  armed(): boolean;
  setArmed(on: boolean): void;
}

export function kprobesDebugView(kernel: Kernel): KprobesView {
  return {
    list: () => Kprobes.of(kernel).listText(),
    blacklist: () => kernel.kprobeBlacklist.text,
    armed: () => Kprobes.of(kernel).armed,
    setArmed: (on) => Kprobes.of(kernel).setArmed(on),
  };
}
