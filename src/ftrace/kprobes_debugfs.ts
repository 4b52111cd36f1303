/**
 * What debugfs shows of kprobes (kprobes/list, kprobes/enabled,
 * kprobes/blacklist).
 */
import type { Ftrace } from './ftrace.js';

interface KprobesView {
  list(): string;
  blacklist(): string;
  armed(): boolean;
  setArmed(on: boolean): void;
}

export function kprobesDebugView(ftrace: Ftrace): KprobesView {
  const { kprobes, kernel } = ftrace;
  return {
    list: () => kprobes.listText(),
    blacklist: () => kernel.kprobeBlacklist.text,
    armed: () => kprobes.armed,
    setArmed: (on) => kprobes.setArmed(on),
  };
}
