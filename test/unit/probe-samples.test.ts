/**
 * The probe samples of the real kernels (test/fixtures/kernel-SERIES/samples):
 * the same writes, in the same order, give the same statuses,
 * error_log entries, listings and formats.
 */
import { describe, expect, it } from 'vitest';
import { SERIES, type Series } from '../../src/kernel/series.js';
import type { EventField } from '../../src/trace/event_type.js';
import { DynEventRegistry, type DynTraceEvent } from '../../src/trace/dynevent/trace_dynevent.js';
import type { ErrorLogEntry } from '../../src/trace/probe/probe_log.js';
import { kernelSample as sample } from '../helpers/fixtures.js';
import { testProbeEnv } from '../helpers/probe-env.js';

const STRERROR: Record<string, string> = {
  'Invalid argument': 'EINVAL',
  'No such file or directory': 'ENOENT',
  'File exists': 'EEXIST',
};

/** `## def` / `echo: write error: …` / `exit status: N` / error_log lines, as the sample scripts print them. */
function parseWrites(text: string): { def: string; errno: string | 0; log: string[] }[] {
  const out: { def: string; errno: string | 0; log: string[] }[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) out.push({ def: line.slice(3), errno: 0, log: [] });
    else if (line.startsWith('echo: write error: ')) out[out.length - 1].errno = STRERROR[line.slice(19)] ?? line;
    else if (line && !line.startsWith('exit status')) out[out.length - 1]?.log.push(line);
  }
  return out;
}

/** error_log text without timestamps. */
function logText(entries: readonly ErrorLogEntry[]): string[] {
  return entries.flatMap((e) => [`${e.loc}: error: ${e.message}`, `  Command: ${e.command}`, `${' '.repeat(11 + e.pos)}^`]);
}
const stripTs = (lines: string[]): string[] => lines.map((l) => l.replace(/^\[\s*\d+\.\d+\] /, ''));

function fieldLine(f: EventField): string {
  const lb = f.type.indexOf('[');
  const decl = lb >= 0 && !f.type.startsWith('__data_loc') ? `${f.type.slice(0, lb)} ${f.name}${f.type.slice(lb)}` : `${f.type} ${f.name}`;
  return `\tfield:${decl};\toffset:${f.offset};\tsize:${f.size};\tsigned:${f.signed ? 1 : 0};`;
}

/** A format file without its ID line and common fields. */
function formatOf(ev: DynTraceEvent): string[] {
  return [`name: ${ev.name}`, ...ev.fields.map(fieldLine), `print fmt: ${ev.printFmt}`];
}
const sampleFormat = (text: string): string[] => text.split('\n').filter((l) => l && !/^(ID:|format:|\tfield:.* common_)/.test(l));

const lines = (s: string): string[] => s.split('\n').filter(Boolean);

describe.each(SERIES)('probe samples of %s', (series) => {
  const { env } = testProbeEnv(series);

  it('four probe events on vfs_read: listings and formats', () => {
    const reg = new DynEventRegistry(env);
    for (const def of ['f:myprobe vfs_read', 'f:myretprobe vfs_read%return arg1=$retval', 'p:kp1 vfs_read', 'r:kr1 vfs_read']) {
      expect(reg.write('dynamic_events', def + '\n').errno, def).toBe(0);
    }
    expect(lines(reg.listing('dynamic_events'))).toEqual(lines(sample(series, 'dynamic_events.after-adding-4.txt')));
    expect(lines(reg.listing('kprobe_events'))).toEqual(lines(sample(series, 'kprobe_events.after-adding-4.txt')));
    for (const [file, sys, name] of [['fprobes-myprobe', 'fprobes', 'myprobe'], ['fprobes-myretprobe', 'fprobes', 'myretprobe'], ['kprobes-kp1', 'kprobes', 'kp1'], ['kprobes-kr1', 'kprobes', 'kr1']]) {
      expect(formatOf(reg.event(sys, name)!), file).toEqual(sampleFormat(sample(series, `format.${file}.txt`)));
    }
  });

  it('the bad (and surprising) fprobe writes: statuses, error_log, listing', () => {
    const reg = new DynEventRegistry(env);
    for (const def of ['f:myprobe vfs_read', 'f:myretprobe vfs_read%return arg1=$retval', 'p:kp1 vfs_read', 'r:kr1 vfs_read', 'f:myopen do_sys_openat2']) {
      reg.write('dynamic_events', def + '\n');
    }
    const log: ErrorLogEntry[] = [];
    for (const w of parseWrites(sample(series, 'error_log.fprobe-writes-and-their-status.txt'))) {
      const r = reg.write('dynamic_events', w.def + '\n');
      expect(r.errno, w.def).toBe(w.errno);
      log.push(...r.log);
    }
    // error_log keeps the last 8 entries
    expect(logText(log.slice(-8))).toEqual(stripTs(lines(sample(series, 'error_log.after-fprobe-writes.txt'))));
    expect(lines(reg.listing('dynamic_events'))).toEqual(lines(sample(series, 'dynamic_events.after-fprobe-writes.txt')));
    const one = reg.write('dynamic_events', 'f:bad vfs_read $none_var\n');
    expect(logText(one.log)).toEqual(stripTs(lines(sample(series, 'error_log.after-one-bad-fprobe.txt'))));
    expect(reg.truncate('dynamic_events')).toBe(0);
    expect(reg.listing('dynamic_events')).toBe(sample(series, 'dynamic_events.after-clear.txt'));
  });

  it('BTF arguments: listing and formats (x-args, x-format)', () => {
    const reg = new DynEventRegistry(env);
    for (const w of parseWrites(sample(series, 'x-args.writes-status-and-error_log.txt'))) {
      expect(reg.write('dynamic_events', w.def + '\n').errno, w.def).toBe(w.errno);
    }
    expect(lines(reg.listing('dynamic_events'))).toEqual(lines(sample(series, 'x-args.dynamic_events.txt')));
    for (const name of ['fret', 'fargs', 'btf', 'btfret', 'btfmem', 'argret']) {
      expect(formatOf(reg.event('fprobes', name)!), name).toEqual(sampleFormat(sample(series, `x-format.fprobes-${name}.txt`)));
    }
  });

  it('more writes: each status and error_log entry, then the listing', () => {
    const reg = new DynEventRegistry(env);
    for (const w of parseWrites(sample(series, 'x-error_log.more-writes-status-and-error_log.txt'))) {
      const r = reg.write('dynamic_events', w.def + '\n');
      expect(r.errno, w.def).toBe(w.errno);
      expect(logText(r.log), w.def).toEqual(stripTs(w.log));
    }
    expect(lines(reg.listing('dynamic_events'))).toEqual(lines(sample(series, 'x-dynamic_events.after-more-writes.txt')));
  });

  it('the default kretprobe maxactive follows the CPU count (8 vCPUs: r16)', () => {
    const reg = new DynEventRegistry(testProbeEnv(series, 8).env);
    reg.write('dynamic_events', 'r:kr1 vfs_read\n');
    expect(lines(reg.listing('dynamic_events'))).toEqual(lines(sample(series, 'x-dynamic_events.kretprobe-smp8.txt')).slice(1));
  });
});
