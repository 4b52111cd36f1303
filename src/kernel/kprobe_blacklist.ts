/**
 * The kprobe blacklist (/sys/kernel/debug/kprobes/blacklist): address ranges
 * of functions no kprobe may be put on (entry code, noinstr, the kprobes
 * machinery itself, NOKPROBE_SYMBOL()s). Registering a kprobe inside one
 * fails with EINVAL. The built-in model carries the real kernel's list.
 */
interface BlacklistEntry {
  start: bigint;
  end: bigint;
  name: string;
}

export class KprobeBlacklist {
  readonly entries: readonly BlacklistEntry[];
  private readonly sorted: BlacklistEntry[];

  /** @param text the file's content: `0x<start>-0x<end>\t<symbol>` lines. */
  constructor(readonly text: string) {
    const entries: BlacklistEntry[] = [];
    for (const line of text.split('\n')) {
      const m = /^0x([0-9a-f]+)-0x([0-9a-f]+)\t(.*)$/.exec(line);
      if (m) entries.push({ start: BigInt('0x' + m[1]), end: BigInt('0x' + m[2]), name: m[3]! });
    }
    this.entries = entries;
    this.sorted = [...entries].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  }

  /** The entry whose range holds `addr`, if any. */
  find(addr: bigint): BlacklistEntry | undefined {
    let lo = 0;
    let hi = this.sorted.length - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sorted[mid]!.start <= addr) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    // Ranges may nest or overlap: look back over the ones starting before addr.
    for (let i = best; i >= 0 && i > best - 8; i--) {
      const e = this.sorted[i]!;
      if (addr >= e.start && addr < e.end) return e;
    }
    return undefined;
  }

  contains(addr: bigint): boolean {
    return this.find(addr) !== undefined;
  }
}
