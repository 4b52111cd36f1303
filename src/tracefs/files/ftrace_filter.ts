/**
 * set_ftrace_filter / set_ftrace_notrace (per trace array) and
 * set_graph_function / set_graph_notrace (top level): the write edits a copy
 * of the hash one word per write(2), applied at close; reads list it.
 */
import { FtraceRegex, type RegexKind } from '../../ftrace/ftrace_regex.js';
import { GraphHashFile, type GraphHashKind } from '../../ftrace/graph_hash.js';
import type { TraceArray } from '../../trace/trace_array.js';
import { O_TRUNC, type FileOps, type OpenFile } from '../node.js';
import { sliceAt } from '../seq_file.js';
import { trFile } from './common.js';

interface Listing {
  show(): string;
  text?: Buffer;
}

/** seq_read over an object that lists itself; the text is made on the first read of each pass. */
function readListing(f: OpenFile, size: number, pos: number): Buffer {
  const l = f.private as Listing;
  if (!l.text || pos === 0) l.text = Buffer.from(l.show(), 'latin1');
  return sliceAt(l.text, size, pos);
}

export function ftraceRegexFile(tr: TraceArray, kind: RegexKind): FileOps {
  return trFile(tr, {
    open(f) {
      f.private = new FtraceRegex(tr.ftrace.fa, kind, f.writable, (f.flags & O_TRUNC) !== 0);
    },
    read: readListing,
    write(f, data) {
      return (f.private as FtraceRegex).write(data);
    },
    release(f) {
      (f.private as FtraceRegex).release();
    },
  });
}

export function graphHashFile(tr: TraceArray, kind: GraphHashKind): FileOps {
  const ftrace = tr.tracing.ftrace;
  return {
    open(f) {
      f.private = new GraphHashFile(ftrace, kind, f.writable, (f.flags & O_TRUNC) !== 0);
    },
    read: readListing,
    write(f, data) {
      return (f.private as GraphHashFile).write(data);
    },
    release(f) {
      (f.private as GraphHashFile).release();
    },
  };
}
