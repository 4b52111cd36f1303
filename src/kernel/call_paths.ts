/**
 * The call trees the emulated kernel replays: what a real kernel of the
 * series calls for each system call on tracefs, for each f_op, for fork,
 * exec and exit, and in its own background work — names only, cut out of
 * function_graph traces of the real kernel (tools/kernel-paths/build.mjs),
 * with holes where the emulator puts its own pieces.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { profileOf, type Series } from './series.js';
import { seriesDir } from './symbols_builtin.js';

export interface PathNode {
  /** Function name, or a hole (`$name`). */
  readonly name: string;
  readonly kids: readonly PathNode[];
  /** Consecutive identical calls folded into one node. */
  readonly rep: number;
  /** Runs only when the flag holds in the running path (`[write] mnt_want_write`). */
  readonly flag?: string;
  /** The subtree holds a hole (`$op`, `$fop.read`...): its functions return the system call's result. */
  readonly chain: boolean;
}

export function isHole(n: PathNode): boolean {
  return n.name.charCodeAt(0) === 36; /* $ */
}

export class CallPaths {
  constructor(private readonly blocks: ReadonlyMap<string, readonly PathNode[]>) {}

  get(name: string): readonly PathNode[] | undefined {
    return this.blocks.get(name);
  }

  names(): string[] {
    return [...this.blocks.keys()];
  }

  static parse(text: string): CallPaths {
    type Raw = { name: string; kids: Raw[]; rep: number; flag?: string };
    const blocks = new Map<string, Raw[]>();
    let top: Raw[] | undefined;
    const stack: Raw[] = [];
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('#')) continue;
      if (line.startsWith('@')) {
        top = [];
        blocks.set(line.slice(1).trim(), top);
        stack.length = 0;
        continue;
      }
      if (!top) continue;
      const indent = line.length - line.trimStart().length;
      const depth = indent >> 1;
      let rest = line.slice(indent);
      let flag: string | undefined;
      const fm = /^\[([^\]]+)\]\s+/.exec(rest);
      if (fm) {
        flag = fm[1];
        rest = rest.slice(fm[0].length);
      }
      const [name, mult] = rest.split(/\s+\*/);
      const node: Raw = { name: name!, kids: [], rep: mult ? Number(mult) : 1, flag };
      stack.length = depth;
      if (depth === 0) top.push(node);
      else stack[depth - 1]?.kids.push(node);
      stack[depth] = node;
    }
    const finish = (r: Raw): PathNode => {
      const kids = r.kids.map(finish);
      const chain = r.name.startsWith('$') || kids.some((k) => k.chain);
      return { name: r.name, kids, rep: r.rep, flag: r.flag, chain };
    };
    const out = new Map<string, PathNode[]>();
    for (const [k, v] of blocks) out.set(k, v.map(finish));
    return new CallPaths(out);
  }
}

const loaded = new Map<string, CallPaths>();

/** The call paths of a series, from its profile's dataSeries (none when that ships none). */
export function loadCallPaths(series: Series): CallPaths {
  let c = loaded.get(series);
  if (c) return c;
  const file = join(seriesDir(profileOf(series).dataSeries), 'call-paths.txt.br');
  c = existsSync(file) ? CallPaths.parse(brotliDecompressSync(readFileSync(file)).toString('latin1')) : new CallPaths(new Map());
  loaded.set(series, c);
  return c;
}
