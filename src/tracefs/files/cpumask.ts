/** tracing_cpumask: the CPUs whose events are recorded, as a hex bitmap (%*pb). */
import { fail } from '../../kernel/errno.js';
import type { TraceArray } from '../../trace/trace_array.js';
import type { FileOps } from '../node.js';
import { simpleRead, trFile } from './common.js';

/** bitmap_print: 32-bit groups, comma separated, the first as wide as the CPU count needs. */
function formatCpumask(mask: readonly boolean[]): string {
  const nbits = mask.length;
  const groups = Math.ceil(nbits / 32);
  const parts: string[] = [];
  for (let g = groups - 1; g >= 0; g--) {
    let v = 0;
    for (let b = 0; b < 32 && g * 32 + b < nbits; b++) if (mask[g * 32 + b]) v += 2 ** b;
    const bitsInGroup = Math.min(32, nbits - g * 32);
    const width = g === groups - 1 ? Math.ceil(bitsInGroup / 4) : 8;
    parts.push(v.toString(16).padStart(width, '0'));
  }
  return parts.join(',');
}

/** bitmap_parse(): hex, optionally in comma-separated 32-bit groups; EOVERFLOW past the CPU count. */
function parseCpumask(text: string, nbits: number): boolean[] {
  const s = text.trim();
  if (!s) fail('EINVAL');
  const groups = s.split(',');
  const mask = new Array<boolean>(nbits).fill(false);
  let bit = 0;
  for (let i = groups.length - 1; i >= 0; i--, bit += 32) {
    const g = groups[i];
    if (!/^[0-9a-fA-F]{1,8}$/.test(g)) fail('EINVAL');
    const v = parseInt(g, 16);
    for (let b = 0; b < 32; b++) {
      if (!(Math.floor(v / 2 ** b) & 1)) continue;
      if (bit + b >= nbits) fail('EOVERFLOW');
      mask[bit + b] = true;
    }
  }
  return mask;
}

export function cpumaskFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    ...simpleRead(() => `${formatCpumask(tr.cpumask)}\n`),
    write(_f, data) {
      tr.setCpumask(parseCpumask(data.toString('latin1'), tr.cpumask.length));
      return data.length;
    },
  });
}
