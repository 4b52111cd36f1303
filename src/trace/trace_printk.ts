/**
 * trace_printk() of kernel code (the sample modules' calls): its text as an
 * ftrace/print record of the array trace_printk() writes to, and the
 * printk_formats listing of the formats loaded modules carry.
 */
import type { Task } from '../kernel/task.js';
import { traceArrayPuts } from './trace_puts.js';
import type { Tracing } from './tracing.js';

/** trace_printk() from `ip` in `task`: a print record in the array trace_printk() writes to. */
export function recordTracePrintk(tracing: Tracing, task: Task, ip: bigint, text: string): void {
  traceArrayPuts(tracing.printkTrace, ip, text, tracing.kernel.context(task));
}

/** printk_formats: `0xADDR : "FORMAT"` for each trace_printk() format of the loaded modules. */
export function printkFormatsText(tracing: Tracing): string {
  let out = '';
  for (const mod of tracing.kernel.modules.loaded) {
    const fmts = mod.def.printkFormats ?? [];
    fmts.forEach((f, i) => {
      const addr = mod.base + 0x9000n + BigInt(i * 8); // its __trace_printk_fmt section, after its data
      out += `0x${addr.toString(16)} : "${f.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"\n`;
    });
  }
  return out;
}
