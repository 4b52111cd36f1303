/** Open file handles of the mount, by the fh number FUSE carries for them. */
import type { Handle } from '../tracefs/tracefs.js';

const MAX_FH = 0x7fffffff;

export class FdTable {
  private readonly open = new Map<number, Handle>();
  private next = 1;

  /** Stores `h` and returns its fh (a positive int32: what the patched binding passes back). */
  add(h: Handle): number {
    if (this.open.size >= MAX_FH - 1) throw new Error('fd table full');
    while (this.open.has(this.next)) this.next = this.next >= MAX_FH ? 1 : this.next + 1;
    const fh = this.next;
    this.next = fh >= MAX_FH ? 1 : fh + 1;
    this.open.set(fh, h);
    return fh;
  }

  get(fh: number): Handle | undefined {
    return this.open.get(fh);
  }

  remove(fh: number): Handle | undefined {
    const h = this.open.get(fh);
    this.open.delete(fh);
    return h;
  }

  get size(): number {
    return this.open.size;
  }

  handles(): IterableIterator<[number, Handle]> {
    return this.open.entries();
  }
}
