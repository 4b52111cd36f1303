/**
 * trace_get_user(): how tracing files that take lists of words
 * (set_ftrace_filter, set_graph_function, set_event, set_event_pid...) read
 * a write — one blank-separated word per call (the call consumes the word
 * and the blank after it, so a writer sees a short write and writes the rest
 * in later calls), a word cut by the end of a write continued by the next
 * one, EINVAL for a word longer than the parser holds (after which the
 * parser never holds a word again: trace_parser_fail()).
 */
import { fail } from '../kernel/errno.js';

/** FTRACE_BUFF_MAX: KSYM_SYMBOL_LEN plus room for wildcards. */
export const FTRACE_BUFF_MAX = 662;

const isSpace = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d);

export class TraceParser {
  private buf: number[] = [];
  /** trace_parser_cont(): the last word was cut by the end of a write; the next one continues it. */
  cont = false;
  /** A word was too long: nothing is loaded any more. */
  private failed = false;
  /** Bytes consumed since the parser was made (the file position of a file opened for it). */
  private pos = 0;

  /** `size`: the buffer, its final NUL included (a word holds size - 1 bytes). */
  constructor(private readonly size: number) {}

  /** trace_parser_loaded(): a word is held. */
  get loaded(): boolean {
    return !this.failed && this.buf.length > 0;
  }

  get word(): string {
    return Buffer.from(this.buf).toString('latin1');
  }

  /** trace_parser_clear(). */
  clear(): void {
    this.buf = [];
    this.cont = false;
  }

  /**
   * Reads from `data` up to the end of its first word (and the blank after
   * it) and returns the bytes consumed; the word is complete when loaded and
   * not cont. `pos` is the file position the data was written at (0 starts
   * afresh); by default, what this parser consumed so far — the position of
   * a file opened for it, which FUSE does not pass for appending writes.
   */
  read(data: Buffer, pos: number = this.pos): number {
    if (!data.length) return 0;
    if (pos === 0) this.clear();
    let i = 0;
    let ch = data[i++]!;
    if (!this.cont) {
      while (i < data.length && isSpace(ch)) ch = data[i++]!;
      this.buf = [];
      // Only blanks (or a NUL) were written.
      if (isSpace(ch) || ch === 0) {
        this.pos = pos + i;
        return i;
      }
    }
    while (i < data.length && !isSpace(ch) && ch !== 0) {
      if (this.buf.length >= this.size - 1) this.failWord();
      this.buf.push(ch);
      ch = data[i++]!;
    }
    if (isSpace(ch) || ch === 0) {
      this.cont = false;
    } else if (this.buf.length < this.size - 1) {
      // The write ended inside the word.
      this.cont = true;
      this.buf.push(ch);
    } else this.failWord();
    this.pos = pos + i;
    return i;
  }

  private failWord(): never {
    this.failed = true;
    fail('EINVAL');
  }
}
