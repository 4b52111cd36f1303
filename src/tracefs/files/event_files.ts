/**
 * The event files at the root of a trace array: set_event, available_events,
 * set_event_pid, set_event_notrace_pid, and in 7.2 show_event_filters,
 * show_event_triggers and syscall_user_buf_size.
 */
import { fail } from '../../kernel/errno.js';
import type { ArrayEvents } from '../../trace/events/array_events.js';
import { updateBuffers } from '../../trace/events/array_hooks.js';
import { SYSCALL_USER_BUF_MAX } from '../../trace/events/array_events.js';
import { canEnable, parseSelector, setClearEvents, showSetEvent } from '../../trace/events/set_event.js';
import type { TraceEvents } from '../../trace/events/trace_events.js';
import type { TraceArray } from '../../trace/trace_array.js';
import { TraceParser } from '../../ftrace/trace_parser.js';
import { Dir, File, type FileOps, O_TRUNC, type OpenFile } from '../node.js';
import { parseUlong, seqRead } from '../seq_file.js';

/** EVENT_BUF_SIZE + 1: the longest set_event word. */
const EVENT_BUF = 128;
/** PID_BUF_SIZE + 1. */
const PID_BUF = 128;
/** pid_list's MAX_PID. */
const MAX_PID = 1 << 30;

function holding(tr: TraceArray, ops: FileOps, ae?: ArrayEvents): FileOps {
  return {
    ...ops,
    open(f: OpenFile) {
      if (ae?.dead) fail('ENODEV');
      tr.refs++;
      return ops.open?.(f);
    },
    release(f: OpenFile) {
      tr.refs--;
      ops.release?.(f);
    },
  };
}

function setEventFile(ae: ArrayEvents): FileOps {
  const allowMod = ae.events.profile.setEventModules;
  return {
    ...seqRead(() => showSetEvent(ae)),
    open(f) {
      // `>` empties the list first (ftrace_clear_events()).
      if (f.writable && f.flags & O_TRUNC) ae.clearEvents();
    },
    write(_f, data) {
      if (data.length === 0) return 0;
      updateBuffers(ae.tr);
      const p = new TraceParser(EVENT_BUF);
      const n = p.read(data, 0);
      if (p.loaded) {
        const set = !p.word.startsWith('!');
        setClearEvents(ae, parseSelector(set ? p.word : p.word.slice(1), allowMod), set);
      }
      return n;
    },
  };
}

/** "%u\n" per pid, ascending. */
function showPids(pids: Set<number> | null): string {
  return pids ? [...pids].sort((a, b) => a - b).map((p) => `${p >>> 0}\n`).join('') : '';
}

function pidFile(ae: ArrayEvents, which: 'pids' | 'noPids'): FileOps {
  return {
    ...seqRead(() => showPids(ae.pids[which])),
    open(f) {
      if (f.writable && f.flags & O_TRUNC) {
        ae.pids[which] = null;
        ae.events.pidListsChanged(ae);
      }
    },
    write(_f, data) {
      if (data.length === 0) return 0;
      updateBuffers(ae.tr);
      // All or nothing: a copy of the list gets the new pids.
      const list = new Set(ae.pids[which] ?? []);
      const p = new TraceParser(PID_BUF);
      let off = 0;
      while (off < data.length) {
        off += p.read(data.subarray(off), 0);
        if (!p.loaded) break;
        const word = p.word;
        let v: bigint;
        if (/^0[xX][0-9a-fA-F]+$/.test(word)) v = BigInt(word);
        else if (/^0[0-7]*$/.test(word)) v = word.length > 1 ? BigInt('0o' + word.slice(1)) : 0n;
        else if (/^\+?[1-9][0-9]*$/.test(word)) v = BigInt(word.replace('+', ''));
        else fail('EINVAL');
        if (v >= 1n << 64n) fail('ERANGE');
        const pid = Number(BigInt.asUintN(32, v));
        if (pid >= MAX_PID) fail('EPERM');
        list.add(pid);
      }
      ae.pids[which] = list.size ? list : null;
      ae.events.pidListsChanged(ae);
      return data.length;
    },
  };
}

/** "system:event" padded to 32 columns (get_call_len()). */
function callName(system: string, name: string): string {
  const len = system.length + 1 + name.length;
  return `${system}:${name}${' '.repeat(len >= 32 ? 1 : 32 - len)}`;
}

function showFilters(ae: ArrayEvents): string {
  let out = '';
  for (const t of ae.events.types()) {
    const f = ae.peek(t)?.filter;
    if (f) out += `${callName(t.system, t.name)}${f.text}\n`;
  }
  return out;
}

function showTriggersAll(ae: ArrayEvents): string {
  let out = '';
  for (const t of ae.events.types()) {
    const f = ae.peek(t);
    if (!f) continue;
    for (const d of f.triggers) out += `${callName(t.system, t.name)}${d.cmd.print(d)}`;
  }
  return out;
}

function availableEvents(te: TraceEvents): string {
  let out = '';
  for (const t of te.types()) if (canEnable(t)) out += `${t.system}:${t.name}\n`;
  return out;
}

/** Adds the root event files of a trace array to its directory. */
export function addEventRootFiles(dir: Dir, te: TraceEvents, tr: TraceArray): void {
  const ae = te.array(tr);
  dir.add(new File('set_event', 0o640, holding(tr, setEventFile(ae), ae)));
  dir.add(new File('available_events', 0o440, holding(tr, seqRead(() => availableEvents(te)))));
  dir.add(new File('set_event_pid', 0o640, holding(tr, pidFile(ae, 'pids'), ae)));
  dir.add(new File('set_event_notrace_pid', 0o640, holding(tr, pidFile(ae, 'noPids'), ae)));
  if (te.profile.showEventFilters) {
    dir.add(new File('show_event_filters', 0o440, holding(tr, seqRead(() => showFilters(ae)))));
    dir.add(new File('show_event_triggers', 0o440, holding(tr, seqRead(() => showTriggersAll(ae)))));
  }
  if (te.profile.syscallUserData) {
    dir.add(
      new File('syscall_user_buf_size', 0o640, holding(tr, {
        ...seqRead(() => `${ae.syscallBufSize}\n`),
        write(_f, data) {
          ae.syscallBufSize = Math.min(parseUlong(data), SYSCALL_USER_BUF_MAX);
          return data.length;
        },
      })),
    );
  }
}
