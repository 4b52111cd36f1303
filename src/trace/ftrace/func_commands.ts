/**
 * The set_ftrace_filter commands that act on a trace array
 * (trace_functions.c, trace_snapshot.c, trace_events.c): traceon, traceoff,
 * stacktrace, snapshot, dump, cpudump, enable_event and disable_event, each
 * with an optional count, removed with `!`, listed with `:count=N` or
 * `:unlimited`.
 */
import { fail } from '../../kernel/errno.js';
import type { Ftrace } from '../../ftrace/ftrace.js';
import type { FtraceArray, FtraceCommand } from '../../ftrace/ftrace_array.js';
import type { ProbeOps } from '../../ftrace/func_probe.js';
import type { EventFile } from '../events/event_file.js';
import { ALL_CPUS } from '../ring_buffer.js';
import type { TraceArray } from '../trace_array.js';
import { recordStack, stackEntries } from './kernel_stack.js';
import { ctxDec } from './record.js';

/** A per-function count (ftrace_func_mapper entry). */
interface Count {
  n: number;
}

const trOf = (owner: unknown) => owner as TraceArray;

/** kstrtoul(number, 0): the count of `func:cmd:N` (decimal, 0x hex or 0 octal). */
function parseCount(s: string): number {
  let v: number;
  if (/^0[xX][0-9a-fA-F]+$/.test(s)) v = parseInt(s.slice(2), 16);
  else if (/^0[0-7]*$/.test(s)) v = parseInt(s, 8);
  else if (/^[1-9][0-9]*$/.test(s)) v = parseInt(s, 10);
  else fail('EINVAL');
  if (!Number.isSafeInteger(v)) fail('ERANGE');
  return v;
}

function printCount(name: string, cmd: string, data: unknown): string {
  const c = data as Count | undefined;
  return c ? `${name}:${cmd}:count=${c.n}` : `${name}:${cmd}:unlimited`;
}

const countInit = (_id: number, init: unknown): Count => ({ n: init as number });

// ------------------------------------------------------------------ traceon / traceoff

function onoffOps(on: boolean, counted: boolean): ProbeOps {
  const name = on ? 'traceon' : 'traceoff';
  return {
    func: (_hit, owner, data) => {
      const tr = trOf(owner);
      if (!counted) {
        if (tr.tracingOn !== on) tr.setTracerTracing(on);
        return;
      }
      // update_traceon_count(): a count is used up only by a real change.
      const c = data as Count | undefined;
      if (!c || c.n <= 0 || on === tr.tracingOn) return;
      tr.setTracerTracing(on);
      c.n--;
    },
    print: (fn, data) => printCount(fn, name, data),
    init: counted ? countInit : undefined,
  };
}

const traceonOps = onoffOps(true, false);
const traceonCountOps = onoffOps(true, true);
const traceoffOps = onoffOps(false, false);
const traceoffCountOps = onoffOps(false, true);

// ------------------------------------------------------------------ stacktrace

function stackOps(counted: boolean): ProbeOps {
  return {
    func: (hit, owner, data) => {
      const tr = trOf(owner);
      const ctx = ctxDec(tr.tracing.kernel.context(hit.task));
      if (!counted) {
        recordStack(tr, ctx, stackEntries(hit.task));
        return;
      }
      if (!tr.tracingOn) return;
      const c = data as Count | undefined;
      if (!c) {
        recordStack(tr, ctx, stackEntries(hit.task));
        return;
      }
      if (!c.n) return;
      c.n--;
      recordStack(tr, ctx, stackEntries(hit.task));
    },
    print: (fn, data) => printCount(fn, 'stacktrace', data),
    init: counted ? countInit : undefined,
  };
}

const stacktraceOps = stackOps(false);
const stacktraceCountOps = stackOps(true);

// ------------------------------------------------------------------ snapshot

function snapshotOps(counted: boolean): ProbeOps {
  return {
    func: (hit, owner, data) => {
      const tr = trOf(owner);
      const c = data as Count | undefined;
      if (counted && c) {
        if (c.n <= 0) return;
        c.n--;
      }
      tr.snapshotFromKernel(tr.tracing.kernel.context(hit.task));
    },
    print: (fn, data) => printCount(fn, 'snapshot', data),
    init: counted ? countInit : undefined,
  };
}

const snapshotOpsPlain = snapshotOps(false);
const snapshotCountOps = snapshotOps(true);

// ------------------------------------------------------------------ dump / cpudump

/** ftrace_dump(): the top-level buffer goes to the console (consumed) and tracing stops. */
function dumpBuffer(top: TraceArray, cpu: number): void {
  top.setTracerTracing(false);
  const rb = top.buffer;
  for (const cb of rb.cpus) {
    if (cpu !== ALL_CPUS && cb.cpu !== cpu) continue;
    while (cb.peek()) cb.consume();
  }
}

const dumpOps: ProbeOps = {
  func: (_hit, owner, data) => {
    const c = data as Count | undefined;
    if (c) {
      if (c.n <= 0) return;
      c.n--;
    }
    dumpBuffer(trOf(owner).tracing.top, ALL_CPUS);
  },
  print: (fn, data) => printCount(fn, 'dump', data),
  init: countInit,
};

const cpudumpOps: ProbeOps = {
  func: (hit, owner) => {
    const tr = trOf(owner);
    dumpBuffer(tr.tracing.top, tr.tracing.kernel.context(hit.task).cpu);
  },
  print: (fn, data) => printCount(fn, 'cpudump', data),
};

// ------------------------------------------------------------------ enable_event / disable_event

/** find_event_file(): the event file of a trace array an enable_event probe switches. */
function findEventFile(tr: TraceArray, system: string, event: string): EventFile | undefined {
  const events = tr.tracing.events;
  const type = events.find(system, event);
  return type ? events.array(tr).file(type) : undefined;
}

interface EventProbeData {
  enable: boolean;
  /** -1: unlimited. */
  count: number;
  file: EventFile;
  ref: number;
}

function eventOps(counted: boolean): ProbeOps {
  return {
    func: (_hit, _owner, data) => {
      const e = data as EventProbeData | undefined;
      if (!e) return;
      if (counted) {
        if (!e.count) return;
        if (e.enable === !e.file.softDisabled) return;
        if (e.count !== -1) e.count--;
      }
      // update_event_probe()
      e.file.softDisabled = !e.enable;
    },
    print: (fn, data) => {
      const e = data as EventProbeData;
      const cmd = e.enable ? 'enable_event' : 'disable_event';
      const tail = e.count === -1 ? ':unlimited' : `:count=${e.count}`;
      return `${fn}:${cmd}:${e.file.type.system}:${e.file.type.name}${tail}`;
    },
    init: (_id, init) => {
      const e = init as EventProbeData;
      e.ref++;
      return e;
    },
    free: (_id, data) => {
      const e = data as EventProbeData | undefined;
      if (!e) return;
      if (--e.ref === 0) e.file.enableDisable(false, true);
    },
  };
}

const enableEventOps = eventOps(false);
const enableEventCountOps = eventOps(true);
const disableEventOps = eventOps(false);
const disableEventCountOps = eventOps(true);

// ------------------------------------------------------------------ registration

/** ftrace_trace_probe_callback(): `!glob` removes, else registers with an optional count. */
function probeCallback(fa: FtraceArray | undefined, ops: ProbeOps, glob: string, param: string | undefined, enable: boolean): void {
  if (!fa) fail('ENODEV');
  if (!enable) fail('EINVAL');
  if (glob.startsWith('!')) {
    fa.probes.unregister(glob.slice(1), ops);
    return;
  }
  let count = -1;
  if (param !== undefined) {
    const number = param.split(':')[0];
    if (number.length) count = parseCount(number);
  }
  fa.probes.register(glob, ops, count);
}

/** Registers the commands with the ftrace core (once per kernel). */
export function registerFuncCommands(ftrace: Ftrace): void {
  const { commands } = ftrace;
  const onoff: FtraceCommand = (fa, _hash, glob, cmd, param, enable) => {
    const ops = cmd === 'traceon' ? (param !== undefined ? traceonCountOps : traceonOps) : param !== undefined ? traceoffCountOps : traceoffOps;
    probeCallback(fa, ops, glob, param, enable);
  };
  commands.register('traceoff', onoff);
  commands.register('traceon', onoff);
  commands.register('stacktrace', (fa, _h, glob, _cmd, param, enable) =>
    probeCallback(fa, param !== undefined ? stacktraceCountOps : stacktraceOps, glob, param, enable),
  );
  commands.register('dump', (fa, _h, glob, _cmd, _param, enable) => probeCallback(fa, dumpOps, glob, '1', enable));
  commands.register('cpudump', (fa, _h, glob, _cmd, _param, enable) => {
    if (!fa) fail('ENODEV');
    if (!enable) fail('EINVAL');
    if (glob.startsWith('!')) fa.probes.unregister(glob.slice(1), cpudumpOps);
    else fa.probes.register(glob, cpudumpOps);
  });
  commands.register('snapshot', (fa, _h, glob, _cmd, param, enable) => {
    if (!fa) fail('ENODEV');
    if (!enable) fail('EINVAL');
    const ops = param !== undefined ? snapshotCountOps : snapshotOpsPlain;
    const tr = trOf(fa.owner);
    if (glob.startsWith('!')) {
      fa.probes.unregister(glob.slice(1), ops);
      return;
    }
    // tracing_arm_snapshot(): the spare buffer is allocated with the probe.
    tr.allocSnapshot();
    probeCallback(fa, ops, glob, param, enable);
  });
  const eventCmd: FtraceCommand = (fa, _h, glob, cmd, param, enable) => {
    if (!fa) fail('ENODEV');
    if (!enable || param === undefined) fail('EINVAL');
    const parts = param.split(':');
    if (parts.length < 2) fail('EINVAL');
    const [system, event] = parts;
    const rest = parts.length > 2 ? parts.slice(2).join(':') : undefined;
    const tr = trOf(fa.owner);
    const file = findEventFile(tr, system, event);
    if (!file) fail('EINVAL');
    const isEnable = cmd === 'enable_event';
    const ops = isEnable ? (rest !== undefined ? enableEventCountOps : enableEventOps) : rest !== undefined ? disableEventCountOps : disableEventOps;
    if (glob.startsWith('!')) {
      fa.probes.unregister(glob.slice(1), ops);
      return;
    }
    let count = -1;
    if (rest !== undefined) {
      const number = rest.split(':')[0];
      if (!number.length) fail('EINVAL');
      count = parseCount(number);
    }
    file.enableDisable(true, true);
    const data: EventProbeData = { enable: isEnable, count, file, ref: 0 };
    try {
      fa.probes.register(glob, ops, data);
    } finally {
      if (data.ref === 0) file.enableDisable(false, true);
    }
  };
  commands.register('enable_event', eventCmd);
  commands.register('disable_event', eventCmd);
}
