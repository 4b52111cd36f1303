/**
 * set_ftrace_pid / set_ftrace_notrace_pid: which tasks a trace array's
 * function tracers follow. O_TRUNC clears the list, writes add pids
 * (all or nothing), reads list them or say `no pid`.
 */
import { fail } from '../../kernel/errno.js';
import type { TraceArray } from '../../trace/trace_array.js';
import { O_TRUNC, type FileOps } from '../node.js';
import { seqRead } from '../seq_file.js';
import { trFile } from './common.js';

/** trace_pid_write(): the current list plus the pids written (blank-separated, kstrtoul base 0). */
function parsePids(current: ReadonlySet<number> | null, text: string): Set<number> {
  const next = new Set(current ?? []);
  for (const w of text.split(/[\s\0]+/)) {
    if (!w) continue;
    let v: number;
    if (/^0[xX][0-9a-fA-F]+$/.test(w)) v = parseInt(w.slice(2), 16);
    else if (/^0[0-7]*$/.test(w)) v = parseInt(w, 8);
    else if (/^[1-9][0-9]*$/.test(w)) v = parseInt(w, 10);
    else fail('EINVAL');
    if (!Number.isSafeInteger(v) || v > 0xffffffff) fail('ERANGE');
    next.add(v | 0);
  }
  return next;
}

export function ftracePidFile(tr: TraceArray, which: 'pids' | 'noPids'): FileOps {
  const { fa } = tr.ftrace;
  return trFile(tr, {
    open(f) {
      if (f.writable && f.flags & O_TRUNC) fa.setPids(which, null);
    },
    ...seqRead(() => {
      const list = fa[which];
      if (!list) return 'no pid\n';
      return [...list].sort((a, b) => a - b).map((p) => `${p}\n`).join('');
    }),
    write(_f, data) {
      if (!data.length) return 0;
      const next = parsePids(fa[which], data.toString('latin1'));
      fa.setPids(which, next);
      return data.length;
    },
  });
}
