/** Plumbing shared by the core tracefs files of a trace array. */
import type { ExecContext } from '../../kernel/context.js';
import { fail } from '../../kernel/errno.js';
import type { Task } from '../../kernel/task.js';
import type { TraceArray } from '../../trace/trace_array.js';
import type { FileOps, OpenFile } from '../node.js';
import { parseUlong, sliceAt } from '../seq_file.js';

/**
 * A file of a trace array (tracing_open_generic_tr()): while open it holds a
 * reference that keeps the instance from being removed.
 */
export function trFile(tr: TraceArray, fops: FileOps): FileOps {
  return {
    ...fops,
    async open(f) {
      tr.refs++;
      try {
        await fops.open?.(f);
      } catch (e) {
        tr.refs--;
        throw e;
      }
    },
    release(f) {
      try {
        fops.release?.(f);
      } finally {
        tr.refs--;
      }
    },
  };
}

/**
 * simple_read_from_buffer() over text generated on every read call (as the
 * kernel's small attribute files do: each read(2) formats afresh).
 */
export function simpleRead(show: (f: OpenFile) => string): Pick<FileOps, 'read'> {
  return {
    read(f, size, pos) {
      return sliceAt(Buffer.from(show(f), 'latin1'), size, pos);
    },
  };
}

/** kstrtoul_from_user() of a write. */
export function writeUlong(data: Buffer): number {
  return parseUlong(data, 10);
}

/** A write as text, refused with EINVAL when not shorter than `max` bytes. */
export function writeText(data: Buffer, max: number): string {
  if (data.length >= max) fail('EINVAL');
  return data.toString('latin1');
}

/** The context of the task making a call on the mount, as a tracing hook sees it. */
export function callerContext(tr: TraceArray, task: Task, preemptCount = 0): ExecContext {
  return { task, cpu: task.cpu % tr.tracing.kernel.nrCpus, flags: 0, preemptCount };
}
