/**
 * The buffer geometry files: buffer_size_kb (all CPUs and per CPU),
 * buffer_total_size_kb, buffer_subbuf_size_kb, buffer_percent, free_buffer.
 */
import { expectKernelError, fail } from '../../kernel/errno.js';
import { ALL_CPUS } from '../../trace/ring_buffer.js';
import { TRACE_BUF_SIZE_DEFAULT, type TraceArray } from '../../trace/trace_array.js';
import type { FileOps } from '../node.js';
import { simpleRead, trFile, writeUlong } from './common.js';

/** Largest per-CPU size accepted before the allocation is refused (ENOMEM). */
const MAX_BUFFER_BYTES = 1 << 30;

/** tracing_entries_read() / tracing_entries_write(). */
export function bufferSizeFile(tr: TraceArray, cpu = ALL_CPUS): FileOps {
  return trFile(tr, {
    ...simpleRead(() => {
      if (cpu !== ALL_CPUS) return `${tr.bufferEntries[cpu] >> 10}\n`;
      const sizes = tr.bufferEntries;
      if (!sizes.every((s) => s === sizes[0])) return 'X\n';
      const kb = Math.floor(sizes[0] / 1024);
      return tr.expanded ? `${kb}\n` : `${kb} (expanded: ${TRACE_BUF_SIZE_DEFAULT >> 10})\n`;
    }),
    write(_f, data) {
      const kb = writeUlong(data);
      if (!kb) fail('EINVAL');
      if (kb * 1024 > MAX_BUFFER_BYTES) fail('ENOMEM');
      tr.resize(kb * 1024, cpu);
      return data.length;
    },
  });
}

/** tracing_total_entries_read(). */
export function bufferTotalSizeFile(tr: TraceArray): FileOps {
  return trFile(
    tr,
    simpleRead(() => {
      let size = 0;
      for (const s of tr.bufferEntries) size += Math.floor(s / 1024);
      if (tr.expanded) return `${size}\n`;
      return `${size} (expanded: ${(TRACE_BUF_SIZE_DEFAULT >> 10) * tr.bufferEntries.length})\n`;
    }),
  );
}

/** buffer_subbuf_size_kb: 4 KiB << order, order 0..7. */
export function bufferSubbufSizeFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    ...simpleRead(() => `${tr.buffer.subbufSize / 1024}\n`),
    write(_f, data) {
      const kb = writeUlong(data);
      const pages = Math.ceil((kb * 1024) / 4096);
      if (pages === 0) fail('EINVAL');
      const order = pages === 1 ? 0 : 32 - Math.clz32(pages - 1);
      if (order > 7) fail('EINVAL');
      tr.setSubbufOrder(order);
      return data.length;
    },
  });
}

/** buffer_percent: how full a per-CPU buffer gets before waiting readers wake (0-100). */
export function bufferPercentFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    ...simpleRead(() => `${tr.bufferPercent}\n`),
    write(_f, data) {
      const v = writeUlong(data);
      if (v > 100) fail('EINVAL');
      tr.bufferPercent = v;
      return data.length;
    },
  });
}

/** free_buffer: closing it shrinks the buffers to the minimum (and stops tracing with disable_on_free). */
export function freeBufferFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    write(_f, data) {
      return data.length;
    },
    release() {
      if (tr.options.has('disable_on_free')) tr.tracingOn = false;
      try {
        tr.resize(0);
      } catch (e) {
        expectKernelError(e); // As the kernel, a close cannot fail: a busy buffer just keeps its size.
      }
    },
  });
}
