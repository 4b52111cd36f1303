/** snapshot and per_cpu/cpuN/snapshot: the spare buffer, its help text, and the commands written to it. */
import { fail } from '../../kernel/errno.js';
import { ALL_CPUS } from '../../trace/ring_buffer.js';
import type { TraceArray } from '../../trace/trace_array.js';
import { TraceIterator } from '../../trace/trace_iterator.js';
import type { FileOps, OpenFile } from '../node.js';
import { trFile, writeUlong } from './common.js';
import { TraceReader } from './trace.js';

/** tracing_snapshot_write(): 0 frees, 1 allocates and swaps, anything else clears. */
function snapshotWrite(tr: TraceArray, cpu: number, data: Buffer): number {
  tr.updateBuffers();
  const val = writeUlong(data);
  if (tr.tracer.usesSnapshot) fail('EBUSY');
  switch (val) {
    case 0:
      if (cpu !== ALL_CPUS) fail('EINVAL');
      tr.freeSnapshot();
      break;
    case 1:
      // Per-CPU swaps need CONFIG_RING_BUFFER_ALLOW_SWAP, which these kernels lack.
      if (cpu !== ALL_CPUS) fail('EINVAL');
      tr.takeSnapshot();
      break;
    default:
      tr.clearSnapshot(cpu);
  }
  return data.length;
}

export function snapshotFile(tr: TraceArray, cpu = ALL_CPUS): FileOps {
  return trFile(tr, {
    open(f: OpenFile) {
      if (f.readable) f.private = new TraceReader(() => new TraceIterator(tr, { cpu, snapshot: true }));
    },
    read(f, size, pos) {
      // s_start(): a latency tracer's maximum is not for the snapshot file.
      if (tr.tracer.usesSnapshot) fail('EBUSY');
      return (f.private as TraceReader).read(size, pos);
    },
    write(_f, data) {
      return snapshotWrite(tr, cpu, data);
    },
    release(f) {
      (f.private as TraceReader | undefined)?.close();
    },
  });
}
