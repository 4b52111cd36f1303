/**
 * trace_get_user(): how the filter files read a write — one blank-separated
 * word per call (a write returns after its first word, so a shell writes the
 * rest in later calls), a word cut by the end of a write continued by the
 * next one, EINVAL for a word longer than the buffer.
 */
import { fail } from '../kernel/errno.js';

/** FTRACE_BUFF_MAX: KSYM_SYMBOL_LEN plus room for wildcards. */
export const FTRACE_BUFF_MAX = 662;

const isSpace = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d);

export class TraceParser {
  private buf: number[] = [];
  /** The last word was cut by the end of a write. */
  cont = false;
  /** Bytes consumed since open (the file position). */
  private pos = 0;

  constructor(private readonly size: number) {}

  /** trace_parser_loaded(): a word is held. */
  get loaded(): boolean {
    return this.buf.length > 0;
  }

  get word(): string {
    return Buffer.from(this.buf).toString('latin1');
  }

  clear(): void {
    this.buf = [];
    this.cont = false;
  }

  /**
   * Reads from `data` up to the end of its first word (and the blank after
   * it). Returns the bytes consumed; the word is complete when loaded and not cont.
   */
  read(data: Buffer): number {
    if (!data.length) return 0;
    if (this.pos === 0) this.clear();
    let i = 0;
    let ch = data[i++];
    if (!this.cont) {
      while (i < data.length && isSpace(ch)) ch = data[i++];
      this.buf = [];
      if (isSpace(ch) || ch === 0) {
        this.pos += i;
        return i;
      }
    }
    while (i < data.length && !isSpace(ch) && ch !== 0) {
      if (this.buf.length >= this.size - 1) this.failWord();
      this.buf.push(ch);
      ch = data[i++];
    }
    if (isSpace(ch) || ch === 0) {
      this.cont = false;
    } else if (this.buf.length < this.size - 1) {
      this.cont = true;
      this.buf.push(ch);
    } else this.failWord();
    this.pos += i;
    return i;
  }

  private failWord(): never {
    this.clear();
    fail('EINVAL');
  }
}
