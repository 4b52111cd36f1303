/**
 * The kernel's banner (init/version.c): `linux_proc_banner`, the format
 * string /proc/version prints with the kernel's name, release and version,
 * as Debian built each series. Its bytes sit at the symbol's address in
 * kernel memory, where a probe's `@linux_proc_banner:string` reads them.
 */
import type { Kernel } from './kernel.js';
import type { Series } from './series.js';

interface Uts {
  release: string;
  version: string;
  /** LINUX_COMPILE_BY@LINUX_COMPILE_HOST and LINUX_COMPILER. */
  compileBy: string;
  compiler: string;
}

const UTS: Record<Series, Uts> = {
  '7.2': {
    release: '7.2.13+deb14-amd64',
    version: '#1 SMP PREEMPT_DYNAMIC Debian 7.2.13-1 (2026-10-28)',
    compileBy: 'debian-kernel@lists.debian.org',
    compiler: 'x86_64-linux-gnu-gcc-16 (Debian 16.2.0-4) 16.2.0, GNU ld (GNU Binutils for Debian) 2.47.50.20261021',
  },
  '6.12': {
    release: '6.12.117+deb12-amd64',
    version: '#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1~deb12u1 (2026-11-14)',
    compileBy: 'debian-kernel@lists.debian.org',
    compiler: 'x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40',
  },
};

/** linux_proc_banner: `%s version %s (by) (compiler) %s\n`. */
export function procBanner(series: Series): string {
  const u = UTS[series];
  return `%s version %s (${u.compileBy}) (${u.compiler}) %s\n`;
}

/** /proc/version. */
export function procVersion(series: Series): string {
  const u = UTS[series];
  return `Linux version ${u.release} (${u.compileBy}) (${u.compiler}) ${u.version}\n`;
}

const written = new WeakSet<Kernel>();

/** Puts the banner's bytes at linux_proc_banner in kernel memory (once). */
export function mapBanner(kernel: Kernel): void {
  if (written.has(kernel)) return;
  written.add(kernel);
  const sym = kernel.symbols.lookupName('linux_proc_banner');
  if (!sym) return;
  kernel.kernelMemory.writeCString(sym.addr, procBanner(kernel.series));
}
