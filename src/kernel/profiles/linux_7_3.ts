/**
 * Linux 7.3 as Debian builds it (7.3.4+deb13-amd64, trixie-backports): 7.2
 * plus BTF typecasts, `$current` and this_cpu_*() in probe arguments, a
 * non-recursive argument parser with its own limits and errors, event
 * filters that may not end after an operator, and a trace-events-sample
 * with a per-CPU counting timer.
 */
import { SAMPLE_MODULES_7_3 } from '../sample_modules.js';
import { LINUX_7_2 } from './linux_7_2.js';
import type { KernelProfile } from './profile.js';

export const LINUX_7_3: KernelProfile<'7.3'> = {
  ...LINUX_7_2,
  series: '7.3',
  dataSeries: '7.3',
  build: {
    release: '7.3.4+deb13-amd64',
    compileBy: 'debian-kernel@lists.debian.org',
    compiler: 'x86_64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0, GNU ld (GNU Binutils for Debian) 2.44',
    version: '#1 SMP PREEMPT_DYNAMIC Debian 7.3.4-1~bpo13+1 (2026-11-15)',
  },

  sampleModules: SAMPLE_MODULES_7_3,

  ftracePages: { perPage: 47382 / 192, groups: 2, bootNs: 0 },

  markWriteIpOffset: 0x76n,

  filterRejectsTrailingOp: true,

  probeTypecasts: 'btf',
  probeArgMaxLen: 255,
  probeArgMaxNesting: 8,
  probeCurrent: true,
  probePerCpu: true,
  eprobeBareFields: true,
  probeVarNumberErrno: true,
  btfFieldGarbageCaret: false,
  probeRegisterRefusalLogsTwice: false,
  fileOnKprobeError: 'File offset is not available for kernel probes',
};
