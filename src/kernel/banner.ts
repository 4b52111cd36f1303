/**
 * linux_proc_banner in kernel memory: the bytes of the format string
 * /proc/version is printed from (kernel/version.ts) sit at the symbol's
 * address, where a probe's `@linux_proc_banner:string` reads them.
 */
import type { Kernel } from './kernel.js';
import { linuxProcBanner } from './version.js';

const written = new WeakSet<Kernel>();

/** Puts the banner's bytes at linux_proc_banner in kernel memory (once). */
export function mapBanner(kernel: Kernel): void {
  if (written.has(kernel)) return;
  written.add(kernel);
  const sym = kernel.symbols.lookupName('linux_proc_banner');
  if (!sym) return;
  kernel.kernelMemory.writeCString(sym.addr, linuxProcBanner(kernel.profile.build));
}
