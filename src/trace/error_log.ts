/**
 * error_log: the last commands each trace array refused, with where and why.
 * Subsystems (probe parser, filters, triggers, ...) report through log().
 */
import type { TraceArray } from './trace_array.js';

/** Entries kept per trace array (TRACING_LOG_ERRS_MAX). */
const ERROR_LOG_MAX = 8;
const LOC_MAX = 128;
const CMD_PREFIX = '  Command: ';

interface ErrorEntry {
  /** `loc: error: ` as the kernel stores it (truncated to 127 bytes). */
  loc: string;
  msg: string;
  cmd: string;
  pos: number;
  /** local_clock() at the time, ns. */
  ts: number;
}

export class ErrorLog {
  private readonly logs = new WeakMap<TraceArray, ErrorEntry[]>();

  constructor(private readonly now: () => number) {}

  private entries(tr: TraceArray): ErrorEntry[] {
    let l = this.logs.get(tr);
    if (!l) this.logs.set(tr, (l = []));
    return l;
  }

  /**
   * tracing_log_err(): records that `cmd` failed at caret position `pos`
   * with `msg`, reported by `loc` (e.g. 'trace_kprobe'). Oldest entries go
   * once the log is full.
   */
  log(tr: TraceArray, loc: string, cmd: string, pos: number, msg: string): void {
    const l = this.entries(tr);
    if (l.length >= ERROR_LOG_MAX) l.shift();
    l.push({ loc: `${loc}: error: `.slice(0, LOC_MAX - 1), msg, cmd, pos: pos & 0xffff, ts: this.now() });
  }

  clear(tr: TraceArray): void {
    this.logs.delete(tr);
  }

  /** The error_log file. */
  show(tr: TraceArray): string {
    let out = '';
    for (const e of this.logs.get(tr) ?? []) {
      const sec = Math.floor(e.ts / 1e9);
      const usec = Math.floor((e.ts - sec * 1e9) / 1000);
      out += `[${String(sec).padStart(5)}.${String(usec).padStart(6, '0')}] ${e.loc}${e.msg}`;
      out += `\n${CMD_PREFIX}${e.cmd}\n`;
      out += ' '.repeat(CMD_PREFIX.length + e.pos) + '^\n';
    }
    return out;
  }
}
