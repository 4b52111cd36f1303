/** Replays captured real-kernel trace lines: records + the symbols and pointer hashes of that boot. */
import { readFileSync } from 'node:fs';
import type { KernelFunction, SymbolLookup, SymbolTable } from '../../src/kernel/symbols.js';
import type { PrintEnv } from '../../src/trace/events/print_fmt/value.js';

export interface Fixture {
  series: string;
  symbols: Array<[string, number, string, string?]>;
  lines: Array<{ event: string; data: string; text: string }>;
}

export function loadFixture(series: string): Fixture {
  return JSON.parse(readFileSync(new URL(`../fixtures/event-lines-${series}.json`, import.meta.url), 'utf8')) as Fixture;
}

export function fixtureSymbols(f: Fixture): SymbolTable {
  const syms = f.symbols
    .map(([addr, size, name, module], id) => ({ id, addr: BigInt('0x' + addr), size, name, module, type: 't', traceable: true, fentryOffset: 0 }) as KernelFunction)
    .sort((a, b) => (a.addr < b.addr ? -1 : 1));
  return {
    functions: syms,
    byName: (name: string) => syms.filter((s) => s.name === name),
    traceable: () => syms,
    lookup(addr: bigint): SymbolLookup | undefined {
      const s = syms.find((x) => addr >= x.addr && addr < x.addr + BigInt(x.size));
      return s && { sym: s, offset: Number(addr - s.addr) };
    },
  };
}

const MARK = 0xfe000000n;

/**
 * An environment whose pointer hashes and kernel strings are placeholders:
 * `match` turns a rendered line into a pattern and checks it against the real
 * line, learning (and then holding to) the boot's hash of each address.
 */
export class PlaceholderEnv implements PrintEnv {
  private readonly ptrs: bigint[] = [];
  readonly learned = new Map<bigint, string>();
  symbols: SymbolTable;

  constructor(symbols: SymbolTable) {
    this.symbols = symbols;
  }

  hashPointer = (addr: bigint): bigint => {
    this.ptrs.push(addr);
    return MARK + BigInt(this.ptrs.length - 1);
  };

  readKernelString = (_addr: bigint): string => '\u0001';

  begin(): void {
    this.ptrs.length = 0;
  }

  /** Null when the rendered text matches the real one; else why not. */
  match(rendered: string, real: string): string | null {
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const parts = rendered.split(/(00000000fe[0-9a-f]{6}|\u0001)/);
    let re = '^';
    const groups: Array<bigint | 'str'> = [];
    for (const p of parts) {
      if (/^00000000fe[0-9a-f]{6}$/.test(p)) {
        const addr = this.ptrs[Number(BigInt('0x' + p) - MARK)];
        const known = this.learned.get(addr);
        if (known) re += known;
        else {
          re += '([0-9a-f]{16})';
          groups.push(addr);
        }
      } else if (p === '\u0001') {
        re += '(.*?)';
        groups.push('str');
      } else re += esc(p);
    }
    const m = new RegExp(re + '$', 's').exec(real);
    if (!m) return `rendered ${JSON.stringify(rendered)}`;
    groups.forEach((g, i) => {
      if (g !== 'str') this.learned.set(g, m[i + 1]);
    });
    return null;
  }
}
