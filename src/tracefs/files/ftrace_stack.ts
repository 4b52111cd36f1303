/**
 * The stack tracer's files (stack_trace, stack_max_size, stack_trace_filter)
 * and its sysctl, /proc/sys/kernel/stack_tracer_enabled, for whoever serves
 * /proc views of the emulated kernel.
 */
import { fail } from '../../kernel/errno.js';
import type { Ftrace } from '../../ftrace/ftrace.js';
import { FtraceRegex } from '../../ftrace/ftrace_regex.js';
import { O_TRUNC, type FileOps, type OpenFile } from '../node.js';
import { parseUlong, seqRead, sliceAt } from '../seq_file.js';
import { simpleRead } from './common.js';

export function stackTraceFile(ftrace: Ftrace): FileOps {
  return seqRead(() => ftrace.stackTracer.show());
}

export function stackMaxSizeFile(ftrace: Ftrace): FileOps {
  return {
    ...simpleRead(() => `${ftrace.stackTracer.maxSize}\n`),
    write(_f, data) {
      ftrace.stackTracer.setMaxSize(parseUlong(data, 10));
      return data.length;
    },
  };
}

export function stackTraceFilterFile(ftrace: Ftrace): FileOps {
  interface State {
    regex: FtraceRegex;
    text?: Buffer;
  }
  return {
    open(f) {
      const regex = new FtraceRegex({ ftrace, ops: ftrace.stackTracer.ops }, 'filter', f.writable, (f.flags & O_TRUNC) !== 0);
      f.private = { regex } satisfies State;
    },
    read(f: OpenFile, size, pos) {
      const st = f.private as State;
      if (!st.text || pos === 0) st.text = Buffer.from(st.regex.show(), 'latin1');
      return sliceAt(st.text, size, pos);
    },
    write(f, data) {
      return (f.private as State).regex.write(data);
    },
    release(f) {
      (f.private as State).regex.release();
    },
  };
}

/** proc_dointvec() of an int sysctl: `%d\n` out; in, an optional sign and digits after blanks. */
function parseSysctlInt(text: string): number {
  const m = /^\s*([-+]?\d+)\s*$/.exec(text);
  if (!m) fail('EINVAL');
  const v = Number(m[1]);
  if (!Number.isSafeInteger(v) || v > 0x7fffffff || v < -0x80000000) fail('EINVAL');
  return v;
}

/** /proc/sys/kernel/stack_tracer_enabled. */
export function stackTracerEnabledFile(ftrace: Ftrace): FileOps {
  let value = 0;
  return {
    ...simpleRead(() => `${value}\n`),
    write(_f, data) {
      value = parseSysctlInt(data.toString('latin1'));
      ftrace.stackTracer.setEnabled(value !== 0);
      return data.length;
    },
  };
}
