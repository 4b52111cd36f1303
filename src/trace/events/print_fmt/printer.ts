/**
 * Renders a record through its event's `print fmt`, as the kernel's compiled
 * TP_printk() would (and as libtraceevent does for trace-cmd): parsed once,
 * on first use.
 */
import type { EventField } from '../../event_type.js';
import { COMMON_FIELDS, type FieldLayout, fieldLayout } from '../field_layout.js';
import type { PrintFmt } from './ast.js';
import { evaluate, type EvalContext } from './evaluate.js';
import { parsePrintFmt } from './parser.js';
import { DEFAULT_PRINT_OPTIONS, EvalError, type PrintEnv, type PrintOptions } from './value.js';
import { vsprintf } from './vsprintf.js';

export class PrintFmtPrinter {
  private parsed?: PrintFmt | Error;
  private readonly fields = new Map<string, FieldLayout>();

  constructor(
    readonly printFmt: string,
    fields: readonly EventField[],
    private readonly consts?: ReadonlyMap<string, bigint>,
  ) {
    for (const f of [...COMMON_FIELDS, ...fields]) this.fields.set(f.name, fieldLayout(f));
  }

  private get program(): PrintFmt | Error {
    if (!this.parsed) {
      try {
        this.parsed = parsePrintFmt(this.printFmt);
      } catch (e) {
        this.parsed = e instanceof Error ? e : new Error(String(e));
      }
    }
    return this.parsed;
  }

  /** The text TP_printk() makes of this record (without the "name: " prefix). */
  print(data: Buffer, env: PrintEnv = {}, opts: PrintOptions = DEFAULT_PRINT_OPTIONS): string {
    const p = this.program;
    if (!(p instanceof Error)) {
      const c: EvalContext = { data, fields: this.fields, env, opts, consts: this.consts };
      try {
        return vsprintf(p.fmt, p.args.map((a) => evaluate(a, c)), env, opts);
      } catch (e) {
        if (!(e instanceof EvalError)) throw e; // falls through to the raw field dump
      }
    }
    return this.fallback(data);
  }

  /** What libtraceevent shows for a format it cannot interpret: the fields by name. */
  private fallback(data: Buffer): string {
    const parts: string[] = [];
    for (const f of this.fields.values()) {
      if (f.name.startsWith('common_')) continue;
      if (f.kind === 'int') parts.push(`${f.name}=0x${data.length >= f.offset + f.size ? (f.size === 8 ? data.readBigUInt64LE(f.offset) : BigInt(data.readUIntLE(f.offset, f.size))).toString(16) : '0'}`);
    }
    return `[FAILED TO PARSE] ${parts.join(' ')}`;
  }
}
