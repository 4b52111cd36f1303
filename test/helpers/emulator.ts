/** The one emulator factory of the in-process tests. */
import { createEmulator, type Emulator, type EmulatorOptions } from '../../src/index.js';

/** An emulator with 2 CPUs unless told otherwise, everything else as the library's defaults. */
export function testEmulator(opts: EmulatorOptions = {}): Emulator {
  return createEmulator({ ...opts, cpus: opts.cpus ?? 2 });
}
