/**
 * trace_get_user(): how tracing files that take lists (set_event,
 * set_event_pid, set_ftrace_filter...) read a write: one whitespace-separated
 * word per call, the call consuming the word and the space after it, so a
 * writer sees a short write and writes the rest. A word cut by the end of a
 * write continues in the next write of the same open file.
 */
import { fail } from '../kernel/errno.js';

export class TraceParser {
  private buf = '';
  /** The last word is incomplete: the next write continues it. */
  private cont = false;
  /** A complete word is ready (trace_parser_loaded). */
  loaded = false;

  constructor(private readonly size: number) {}

  get word(): string {
    return this.buf;
  }

  clear(): void {
    this.buf = '';
    this.cont = false;
    this.loaded = false;
  }

  /**
   * Consumes from `data` (written at file position `pos`) and returns the
   * byte count consumed; `word` / `loaded` tell whether a word is complete.
   * Throws EINVAL for a word longer than the parser holds.
   */
  feed(data: Buffer, pos: number): number {
    if (pos === 0) this.clear();
    this.loaded = false;
    let i = 0;
    const n = data.length;
    const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);
    if (!this.cont) {
      while (i < n && isSpace(data[i])) i++;
      this.buf = '';
      if (i >= n || data[i] === 0) return Math.min(n, i + 1);
    }
    while (i < n && !isSpace(data[i]) && data[i] !== 0) {
      if (this.buf.length >= this.size - 1) fail('EINVAL');
      this.buf += String.fromCharCode(data[i]);
      i++;
    }
    if (i < n) {
      // Ended by a space or NUL, which is consumed too.
      this.cont = false;
      this.loaded = this.buf.length > 0;
      return i + 1;
    }
    // The write ended inside the word.
    this.cont = true;
    this.loaded = this.buf.length > 0;
    return n;
  }

  /** The word is complete (not waiting for more input). */
  get complete(): boolean {
    return !this.cont;
  }
}
