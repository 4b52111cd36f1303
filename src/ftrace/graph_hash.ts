/**
 * set_graph_function / set_graph_notrace (ftrace_graph_hash and
 * ftrace_graph_notrace_hash): which functions the function_graph tracer
 * starts a graph at, and which it leaves out with everything they call.
 * They filter inside the tracer's entry callback, not at the call sites.
 */
import { expectKernelError, fail } from '../kernel/errno.js';
import type { Ftrace } from './ftrace.js';
import { FtraceHash } from './ftrace_hash.js';
import { listHash } from './ftrace_regex.js';
import { parseFilterRegex } from './glob.js';
import { FTRACE_BUFF_MAX, TraceParser } from './trace_parser.js';

export type GraphHashKind = 'function' | 'notrace';

/** The two global graph hashes of a kernel. */
export class GraphHashes {
  function = new FtraceHash();
  notrace = new FtraceHash();
}

/** ftrace_graph_set_hash(): adds (or with `!` removes) matching functions; EINVAL when none did. */
function graphSetHash(ftrace: Ftrace, hash: FtraceHash, word: string): void {
  const g = parseFilterRegex(word);
  const { ids } = ftrace.records;
  let failed = true;
  // An index is no function name here: it matches none.
  for (const r of ftrace.matcher.matching(g)) {
    const id = ids[r]!;
    if (!g.not) {
      failed = false;
      hash.add(id);
    } else if (hash.delete(id)) failed = false;
  }
  if (failed) fail('EINVAL');
}

/** One open of set_graph_function or set_graph_notrace. */
export class GraphHashFile {
  private readonly next?: FtraceHash;
  private readonly parser = new TraceParser(FTRACE_BUFF_MAX);

  constructor(
    private readonly ftrace: Ftrace,
    readonly kind: GraphHashKind,
    writable: boolean,
    truncate: boolean,
  ) {
    const cur = ftrace.graphHashes[kind];
    if (writable) this.next = truncate ? new FtraceHash() : cur.copy();
  }

  write(data: Buffer): number {
    if (!this.next) fail('EBADF');
    const read = this.parser.read(data);
    if (this.parser.loaded && !this.parser.cont) {
      const word = this.parser.word;
      this.parser.clear();
      graphSetHash(this.ftrace, this.next, word);
    }
    return read;
  }

  release(): void {
    if (!this.next) return;
    if (this.parser.loaded) {
      try {
        graphSetHash(this.ftrace, this.next, this.parser.word);
      } catch (e) {
        expectKernelError(e); // not reported at close
      }
      this.parser.clear();
    }
    this.ftrace.graphHashes[this.kind] = this.next;
    // Whether the function_graph tracer is quiet with tracing off depends on these hashes.
    this.ftrace.exec.hooksChanged();
  }

  show(): string {
    const cur = this.ftrace.graphHashes[this.kind];
    if (cur.empty) return this.kind === 'function' ? '#### all functions enabled ####\n' : '#### no functions disabled ####\n';
    return listHash(this.ftrace, cur);
  }
}
