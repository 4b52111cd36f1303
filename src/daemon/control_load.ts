/**
 * The `load` control command: what the daemon has spent so far — its CPU
 * time and memory, its FUSE requests by kind with their latency, what the
 * emulated kernel ran (function calls, subtrees nobody could see, process
 * lives), and what the machine reported. The selftests bench takes it before
 * and after each test.
 */
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { nativeAddon } from '../host/native_addon.js';
import { registerControlCommand } from './control.js';

/** RSS, V8's heap (in all and by space) and the C heap: where the daemon's memory is. */
function memoryReport() {
  const mem = process.memoryUsage();
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((x) => [x.space_name, { size: x.space_size, used: x.space_used_size }]));
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = mem;
  return { rss, heapUsed, heapTotal, external, arrayBuffers, cHeap: nativeAddon().heapStats(), spaces };
}

registerControlCommand('load', "the daemon's CPU time, memory, FUSE requests by kind, and the emulated kernel's work so far", (_args, ctx) => {
  const cpu = process.cpuUsage();
  const { kernel } = ctx.emulator;
  return {
    uptimeMs: process.uptime() * 1000,
    cpu: { userMs: cpu.user / 1000, systemMs: cpu.system / 1000 },
    eventLoop: performance.eventLoopUtilization(),
    memory: memoryReport(),
    requests: ctx.mount.requests.report(),
    cachedAnswers: ctx.mount.cachedAnswers(),
    knownNodes: ctx.mount.knownNodes,
    kernel: {
      calls: kernel.exec.calls,
      unseenSubtrees: kernel.runner.skipped,
      ...kernel.procs.counts,
      tasks: [...kernel.tasks.all()].length,
    },
    host: ctx.host?.reported,
  };
});
