/** Linux 6.12 as Debian builds it (6.12.117+deb12-amd64): fprobe still on rethook, the older ABI strings. */
import { SAMPLE_MODULES } from '../sample_modules.js';
import type { KernelProfile } from './profile.js';

export const LINUX_6_12: KernelProfile<'6.12'> = {
  series: '6.12',
  dataSeries: '6.12',
  build: {
    release: '6.12.117+deb12-amd64',
    compileBy: 'debian-kernel@lists.debian.org',
    compiler: 'x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40',
    version: '#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1~deb12u1 (2026-11-14)',
  },
  sampleModules: SAMPLE_MODULES,
  traceRemotes: false,
  preemptModel: 'desktop',

  trampolineBase: 0xffffffffc0290000n,
  ftracePages: { perPage: 42862 / 176, groups: 3 },
  showsSubops: false,
  fprobeBackend: 'rethook',
  fprobeReregisterErrno: 'EBUSY',
  fprobeNoMatchErrno: 'EINVAL',

  functionArgs: false,
  graphDepth: 'int',
  graphRetvalLabel: ' = ',
  profilerCoreOptions: false,

  ftraceEntryIds: { print: 5, rawData: 18, funcRepeats: 19 },
  markerCopy: 'in-event',
  markWriteIpOffset: 0xdfn,
  copyTraceMarker: false,
  bitmaskList: false,
  lazyResched: false,
  maxLatencyFile: true,
  timerlatAlign: false,
  osnoiseSampleEvents: false,

  headerPageIntOverwrite: true,
  setEventModules: false,
  showEventFilters: false,
  syscallUserData: false,
  inodeDirtyFirstBit: 3,
  filterRejectsTrailingOp: true,

  fprobeRegisters: 'definition',
  fprobeMaxactive: true,
  fprobeEventFailsEinval: false,
  logsTooManyArgs: false,
  logsNoMatchingDynevent: false,
  probeTypecasts: 'none',
  probeArgMaxLen: 63,
  probeCurrent: false,
  probePerCpu: false,
  eprobeBareFields: false,
  probeVarNumberErrno: false,
  btfFieldGarbageCaret: true,
  probeRegisterRefusalLogsTwice: true,
  fileOnKprobeError: 'File offset is not available with kprobe',
  symbolCountVmlinuxFirst: false,
  synthFieldSeparator: ', ',

  readmeSyntheticEvents: 'events/synthetic_events',
};
