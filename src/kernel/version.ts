/**
 * The banner of the build a series reproduces (its profile's `build`):
 * /proc/version, and linux_proc_banner (the format string /proc/version is
 * printed from, which a probe can read as `@linux_proc_banner:string`).
 */
import type { KernelBuild } from './profiles/profile.js';

/** linux_proc_banner: "%s version %s (BY) (COMPILER) %s\n". */
export function linuxProcBanner(b: KernelBuild): string {
  return `%s version %s (${b.compileBy}) (${b.compiler}) %s\n`;
}

/** /proc/version: the banner filled with the system name, release and version. */
export function procVersion(b: KernelBuild): string {
  return `Linux version ${b.release} (${b.compileBy}) (${b.compiler}) ${b.version}\n`;
}
