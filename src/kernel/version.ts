/**
 * The build of the kernel each series reproduces, as its banner shows it:
 * /proc/version, and linux_proc_banner (the format string /proc/version is
 * printed from, which a probe can read as `@linux_proc_banner:string`).
 * Values from the real Debian kernels' /proc/version.
 */
import type { Series } from './series.js';

export interface KernelBuild {
  /** uname -r. */
  release: string;
  /** LINUX_COMPILE_BY@LINUX_COMPILE_HOST. */
  compileBy: string;
  /** LINUX_COMPILER. */
  compiler: string;
  /** uname -v. */
  version: string;
}

export const KERNEL_BUILD: Record<Series, KernelBuild> = {
  '7.2': {
    release: '7.2.13+deb14-amd64',
    compileBy: 'debian-kernel@lists.debian.org',
    compiler: 'x86_64-linux-gnu-gcc-16 (Debian 16.2.0-4) 16.2.0, GNU ld (GNU Binutils for Debian) 2.47.50.20261021',
    version: '#1 SMP PREEMPT_DYNAMIC Debian 7.2.13-1 (2026-10-28)',
  },
  '6.12': {
    release: '6.12.117+deb12-amd64',
    compileBy: 'debian-kernel@lists.debian.org',
    compiler: 'x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40',
    version: '#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1~deb12u1 (2026-11-14)',
  },
};

/** linux_proc_banner: "%s version %s (BY) (COMPILER) %s\n". */
export function linuxProcBanner(series: Series): string {
  const b = KERNEL_BUILD[series];
  return `%s version %s (${b.compileBy}) (${b.compiler}) %s\n`;
}

/** /proc/version: the banner filled with the system name, release and version. */
export function procVersion(series: Series): string {
  const b = KERNEL_BUILD[series];
  return `Linux version ${b.release} (${b.compileBy}) (${b.compiler}) ${b.version}\n`;
}
