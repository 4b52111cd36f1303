/**
 * The top-level listings of the function records: available_filter_functions
 * (and _addrs), enabled_functions, touched_functions, dyn_ftrace_total_info.
 */
import type { Ftrace } from '../../ftrace/ftrace.js';
import { FunctionListing } from '../../ftrace/enabled_functions.js';
import { availableFilterFunctionsAddrsText, availableFilterFunctionsText } from '../../kernel/kallsyms.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { FileOps } from '../node.js';
import { seqRead, sliceAt } from '../seq_file.js';

export function availableFilterFunctionsFile(kernel: Kernel, addrs: boolean): FileOps {
  return {
    read(_f, size, pos) {
      const t = kernel.symbols;
      return sliceAt(addrs ? availableFilterFunctionsAddrsText(t) : availableFilterFunctionsText(t), size, pos);
    },
  };
}

export function enabledFunctionsFile(ftrace: Ftrace, which: 'enabled' | 'touched'): FileOps {
  return seqRead(() => {
    const l = new FunctionListing(ftrace);
    return which === 'enabled' ? l.enabled() : l.touched();
  });
}

/** dyn_ftrace_total_info: records, their pages and groups (and update times, where the series shows them). */
export function dynFtraceTotalInfoFile(ftrace: Ftrace): FileOps {
  return seqRead(() => {
    const n = ftrace.kernel.symbols.traceable().length; // records of modules not loaded are not there
    const p = ftrace.kernel.profile.ftracePages;
    let s = `${n} pages:${Math.ceil(n / p.perPage)} groups: ${p.groups}\n`;
    if (p.bootNs !== undefined) s += `ftrace boot update time = ${p.bootNs} (ns)\nftrace module total update time = 0 (ns)\n`;
    return s;
  });
}
