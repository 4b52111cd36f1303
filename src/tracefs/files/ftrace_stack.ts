/**
 * The stack tracer's files (stack_trace, stack_max_size, stack_trace_filter)
 * and its sysctl, /proc/sys/kernel/stack_tracer_enabled, for whoever serves
 * /proc views of the emulated kernel.
 */
import { fail } from '../../kernel/errno.js';
import type { Kernel } from '../../kernel/kernel.js';
import { Ftrace } from '../../ftrace/ftrace.js';
import { FtraceRegex } from '../../ftrace/ftrace_regex.js';
import { StackTracer } from '../../ftrace/stack_tracer.js';
import { O_TRUNC, type FileOps, type OpenFile } from '../node.js';
import { parseUlong, seqRead, sliceAt } from '../seq_file.js';
import { simpleRead } from './common.js';

export function stackTraceFile(kernel: Kernel): FileOps {
  return seqRead(() => StackTracer.of(kernel).show());
}

export function stackMaxSizeFile(kernel: Kernel): FileOps {
  return {
    ...simpleRead(() => `${StackTracer.of(kernel).maxSize}\n`),
    write(_f, data) {
      StackTracer.of(kernel).setMaxSize(parseUlong(data, 10));
      return data.length;
    },
  };
}

export function stackTraceFilterFile(kernel: Kernel): FileOps {
  interface State {
    regex: FtraceRegex;
    text?: Buffer;
  }
  return {
    open(f) {
      const regex = new FtraceRegex({ ftrace: Ftrace.of(kernel), ops: StackTracer.of(kernel).ops }, 'filter', f.writable, (f.flags & O_TRUNC) !== 0);
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
export function parseSysctlInt(text: string): number {
  const m = /^\s*([-+]?\d+)\s*$/.exec(text);
  if (!m) fail('EINVAL');
  const v = Number(m[1]);
  if (!Number.isSafeInteger(v) || v > 0x7fffffff || v < -0x80000000) fail('EINVAL');
  return v;
}

/** /proc/sys/kernel/stack_tracer_enabled. */
export function stackTracerEnabledFile(kernel: Kernel): FileOps {
  let value = 0;
  return {
    ...simpleRead(() => `${value}\n`),
    write(_f, data) {
      value = parseSysctlInt(data.toString('latin1'));
      StackTracer.of(kernel).setEnabled(value !== 0);
      return data.length;
    },
  };
}
