/** trace_options and the options/ directory (one 0/1 file per option). */
import { fail } from '../../kernel/errno.js';
import type { TraceArray } from '../../trace/trace_array.js';
import { parseOptionWrite } from '../../trace/trace_options.js';
import type { Tracer } from '../../trace/tracer.js';
import { Dir, File, type FileOps } from '../node.js';
import { simpleRead, trFile, writeText, writeUlong } from './common.js';

/** trace_options: the options in effect; a write sets `name` or clears `noname`. */
export function traceOptionsFile(tr: TraceArray): FileOps {
  return trFile(tr, {
    ...simpleRead(() => tr.showOptions()),
    write(_f, data) {
      const { name, on } = parseOptionWrite(writeText(data, 64));
      tr.setOptionByName(name, on);
      return data.length;
    },
  });
}

function flagValue(data: Buffer): boolean {
  const v = writeUlong(data);
  if (v !== 0 && v !== 1) fail('EINVAL');
  return v === 1;
}

function coreOptionFile(tr: TraceArray, name: string): FileOps {
  return trFile(tr, {
    ...simpleRead(() => (tr.options.has(name) ? '1\n' : '0\n')),
    write(_f, data) {
      tr.setCoreOption(name, flagValue(data));
      return data.length;
    },
  });
}

function tracerOptionFile(tr: TraceArray, t: Tracer, name: string): FileOps {
  return trFile(tr, {
    ...simpleRead(() => (tr.tracerOptions.get(t.name)?.has(name) ? '1\n' : '0\n')),
    write(_f, data) {
      tr.setTracerOption(t, name, flagValue(data));
      return data.length;
    },
  });
}

/** Adds the option files of tracer `t` (if usable on `tr`) to `dir`. */
export function addTracerOptionFiles(dir: Dir, tr: TraceArray, t: Tracer): void {
  if (!tr.isTop && !t.allowInstances) return;
  for (const o of t.options ?? []) {
    if (!dir.get(o.name)) dir.add(new File(o.name, 0o640, tracerOptionFile(tr, t, o.name)));
  }
}

/** options/: core options (the top-level-only ones at the top only) and every tracer's. */
export function optionsDir(tr: TraceArray): Dir {
  const dir = new Dir('options', 0o750);
  for (const o of tr.coreOptions()) {
    if (o.topOnly && !tr.isTop) continue;
    dir.add(new File(o.name, 0o640, coreOptionFile(tr, o.name)));
  }
  for (const t of tr.tracing.tracers.all()) addTracerOptionFiles(dir, tr, t);
  return dir;
}
