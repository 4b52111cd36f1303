/** Linux 7.2 as Debian builds it (7.2.13+deb14-amd64): the default series. */
import { SAMPLE_MODULES_7_2 } from '../sample_modules.js';
import type { KernelProfile } from './profile.js';

export const LINUX_7_2: KernelProfile<'7.2'> = {
  series: '7.2',
  dataSeries: '7.2',
  build: {
    release: '7.2.13+deb14-amd64',
    compileBy: 'debian-kernel@lists.debian.org',
    compiler: 'x86_64-linux-gnu-gcc-16 (Debian 16.2.0-4) 16.2.0, GNU ld (GNU Binutils for Debian) 2.47.50.20261021',
    version: '#1 SMP PREEMPT_DYNAMIC Debian 7.2.13-1 (2026-10-28)',
  },
  sampleModules: SAMPLE_MODULES_7_2,
  traceRemotes: true,
  preemptModel: 'PREEMPT(lazy)',

  trampolineBase: 0xffffffffc0600000n,
  ftracePages: { perPage: 46795 / 192, groups: 2, bootNs: 29797462 },
  showsSubops: true,
  fprobeBackend: 'fgraph',
  fprobeReregisterErrno: 'EEXIST',
  fprobeNoMatchErrno: 'ENOENT',

  functionArgs: true,
  graphDepth: 'unsigned',
  graphRetvalLabel: ' ret=',
  profilerCoreOptions: true,

  ftraceEntryIds: { print: 5, rawData: 19, funcRepeats: 20 },
  markerCopy: 'per-cpu',
  markWriteIpOffset: 0x81n,
  copyTraceMarker: true,
  bitmaskList: true,
  lazyResched: true,
  maxLatencyFile: false,
  timerlatAlign: true,
  osnoiseSampleEvents: true,

  headerPageIntOverwrite: false,
  setEventModules: true,
  showEventFilters: true,
  syscallUserData: true,
  inodeDirtyFirstBit: 4,
  filterRejectsTrailingOp: false,

  fprobeRegisters: 'enable',
  fprobeMaxactive: false,
  fprobeEventFailsEinval: true,
  logsTooManyArgs: true,
  logsNoMatchingDynevent: true,
  probeTypecasts: 'eprobe',
  probeArgMaxLen: 63,
  probeCurrent: false,
  probePerCpu: false,
  eprobeBareFields: false,
  probeVarNumberErrno: false,
  btfFieldGarbageCaret: true,
  probeRegisterRefusalLogsTwice: true,
  fileOnKprobeError: 'File offset is not available with kprobe',
  symbolCountVmlinuxFirst: true,
  synthFieldSeparator: ' ',

  readmeSyntheticEvents: 'synthetic_events',
};
