/** The machine's /proc/interrupts: what the `exec` namespace shows there (the emulated kernel counts no interrupts of its own). */
import { readFileSync } from 'node:fs';
import { expectSystemError } from './system_error.js';

export function hostInterrupts(): string {
  try {
    return readFileSync('/proc/interrupts', 'latin1');
  } catch (e) {
    expectSystemError(e);
    return '';
  }
}
