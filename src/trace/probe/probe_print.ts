/**
 * How the trace output prints a probe event's arguments
 * (trace_probe_print_args() and the print functions of the fetch types):
 * ` name=value` each, arrays as `{a,b,c}`, strings quoted or `(fault)`.
 */
import type { ProbeArg } from './parse_context.js';

/** FAULT_STRING. */
const FAULT_STRING = '(fault)';

function readInt(data: Buffer, off: number, size: number, signed: boolean): bigint {
  if (off + size > data.length) return 0n;
  switch (size) {
    case 1:
      return BigInt(signed ? data.readInt8(off) : data.readUInt8(off));
    case 2:
      return BigInt(signed ? data.readInt16LE(off) : data.readUInt16LE(off));
    case 4:
      return BigInt(signed ? data.readInt32LE(off) : data.readUInt32LE(off));
    default:
      return signed ? data.readBigInt64LE(off) : data.readBigUInt64LE(off);
  }
}

/** One value of `arg` at `off` of the record `rec`. */
function printOne(arg: ProbeArg, rec: Buffer, off: number, sprintSymbol: (addr: bigint) => string): string {
  const t = arg.type;
  switch (t.print) {
    case 'u':
      return readInt(rec, off, t.size, false).toString();
    case 'd':
      return readInt(rec, off, t.size, true).toString();
    case 'x':
      return `0x${readInt(rec, off, t.size, false).toString(16)}`;
    case 'char':
      return `'${String.fromCharCode(Number(readInt(rec, off, 1, false)))}'`;
    case 'symbol':
      return sprintSymbol(readInt(rec, off, 8, false));
    case 'string': {
      if (off + 4 > rec.length) return FAULT_STRING;
      const loc = rec.readUInt32LE(off);
      if (loc >>> 16 === 0) return FAULT_STRING;
      const start = loc & 0xffff;
      let end = rec.indexOf(0, start);
      if (end < 0) end = rec.length;
      return `"${rec.subarray(start, end).toString('latin1')}"`;
    }
  }
}

/** The text after the probe's head: ` name=value` for each argument. */
export function printProbeArgs(args: readonly ProbeArg[], rec: Buffer, argsOffset: number, sprintSymbol: (addr: bigint) => string): string {
  let s = '';
  for (const a of args) {
    s += ` ${a.name}=`;
    const base = argsOffset + a.offset;
    if (!a.count) {
      s += printOne(a, rec, base, sprintSymbol);
      continue;
    }
    s += '{';
    for (let j = 0; j < a.count; j++) {
      s += printOne(a, rec, base + j * a.type.size, sprintSymbol);
      s += j === a.count - 1 ? '}' : ',';
    }
  }
  return s;
}
