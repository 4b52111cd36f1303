/**
 * remotes/<name>/ (trace_remote.c's files): tracing_on, buffer_size_kb, the
 * consuming trace_pipe and the non-consuming trace (whose write resets the
 * buffer), per_cpu/cpuN/, the remote's events/, and what the remote adds
 * itself (write_event, a hypervisor's trace_clock). The directory appears
 * with the first remote registered.
 */
import { fail } from '../../kernel/errno.js';
import { REMOTE_EVENT_HDR_SIZE, type RemoteEventDef } from '../../kernel/remote_event.js';
import { RemoteIterator } from '../../trace/remote/remote_iterator.js';
import type { RemoteEvent, TraceRemote } from '../../trace/remote/trace_remote.js';
import { ALL_CPUS } from '../../trace/ring_buffer.js';
import { entryHeaderFormat, pageHeaderFormat } from '../../trace/ring_buffer_event.js';
import type { Tracing } from '../../trace/tracing.js';
import { Dir, File, type FileOps } from '../node.js';
import { parseU64, parseUlong, seqRead, sliceAt } from '../seq_file.js';
import { simpleRead } from './common.js';
import { waitOn } from './trace_pipe.js';

const MODE_WRITE = 0o640;
const MODE_READ = 0o440;
/** What one fill of trace_pipe's trace_seq holds (TRACE_SEQ_BUFFER_SIZE less the byte seq_buf keeps free). */
const SEQ_MAX = 8155;

/** tracing_on: 0 or 1; a write loads the buffer or lets it go. */
function tracingOnFile(remote: TraceRemote): FileOps {
  return {
    ...seqRead(() => `${remote.tracingOn ? 1 : 0}\n`),
    write(_f, data) {
      remote.setTracingOn(parseUlong(data) !== 0);
      return data.length;
    },
  };
}

/** buffer_size_kb: the size the next load gets, and whether the buffer is loaded. */
function bufferSizeKbFile(remote: TraceRemote): FileOps {
  return {
    ...seqRead(() => remote.bufferSizeText()),
    write(_f, data) {
      remote.setBufferSizeKb(parseU64(data));
      return data.length;
    },
  };
}

/** A reader's hold on the remote and its iterator (trace_remote_iter()): ENODEV for a CPU the buffer lacks. */
function openIterator(remote: TraceRemote, cpu: number, consuming: boolean): RemoteIterator {
  remote.get();
  if (!remote.hasCpu(cpu)) {
    remote.put();
    fail('ENODEV');
  }
  return new RemoteIterator(remote, cpu, consuming);
}

function closeIterator(iter: RemoteIterator): void {
  iter.close();
  iter.remote.put();
}

/** trace_pipe: consumes what it shows, waiting while there is nothing (O_NONBLOCK or not, as the kernel's). */
function tracePipeFile(remote: TraceRemote, cpu: number): FileOps {
  interface State {
    iter: RemoteIterator;
    leftover: Buffer;
  }
  return {
    open(f) {
      f.private = { iter: openIterator(remote, cpu, true), leftover: Buffer.alloc(0) } satisfies State;
    },
    async read(f, size, _pos, abort) {
      const st = f.private as State;
      for (;;) {
        if (st.leftover.length) {
          const out = st.leftover.subarray(0, size);
          st.leftover = st.leftover.subarray(out.length);
          return Buffer.from(out);
        }
        while (st.iter.empty()) await waitOn(() => [remote.buffer!], cpu, abort);
        st.leftover = Buffer.from(st.iter.read(SEQ_MAX), 'latin1');
      }
    },
    release(f) {
      closeIterator((f.private as State).iter);
    },
  };
}

/** trace: the events without consuming them (nothing while unloaded); any write resets the buffer. */
function traceFile(remote: TraceRemote, cpu: number): FileOps {
  interface State {
    iter: RemoteIterator | null;
    text?: Buffer;
  }
  return {
    open(f) {
      if (!f.readable) return;
      f.private = { iter: remote.loaded ? openIterator(remote, cpu, false) : null } satisfies State;
    },
    read(f, size, pos) {
      const st = f.private as State;
      st.text ??= Buffer.from(st.iter?.read() ?? '', 'latin1');
      return sliceAt(st.text, size, pos);
    },
    write(_f, data) {
      remote.reset(cpu);
      return data.length;
    },
    release(f) {
      const iter = (f.private as State | undefined)?.iter;
      if (iter) closeIterator(iter);
    },
  };
}

/** write_event: the remote writes its selftest event with the value, on the writer's CPU. */
function writeEventFile(remote: TraceRemote): FileOps {
  return {
    write(_f, data, _pos, task) {
      remote.writer.writeEvent(task.cpu % remote.nrCpus, parseU64(data));
      return data.length;
    },
  };
}

/** kstrtou8_from_user(). */
function parseU8(data: Buffer): number {
  const v = parseU64(data);
  if (v > 255n) fail('ERANGE');
  return Number(v);
}

/** An event's format file: the fields at offsets that follow each other from the header on. */
function formatText(def: RemoteEventDef): string {
  let out = `name: ${def.name}\nID: ${def.id}\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n`;
  let offset = REMOTE_EVENT_HDR_SIZE;
  for (const f of def.fields) {
    out += `\tfield:${f.type} ${f.name};\toffset:${offset};\tsize:${f.size};\tsigned:${f.signed ? 1 : 0};\n`;
    offset += f.size;
  }
  if (def.fields.length) out += '\n';
  return `${out}print fmt: ${def.printFmt}\n`;
}

/** An eventfs directory (one link). */
function eventfsDir(name: string): Dir {
  const d = new Dir(name, 0o755);
  d.fixedNlink = 1;
  return d;
}

function eventDir(remote: TraceRemote, ev: RemoteEvent): Dir {
  const d = eventfsDir(ev.def.name);
  d.add(
    new File('enable', MODE_WRITE, {
      ...seqRead(() => `${ev.enabled ? 1 : 0}\n`),
      write(_f, data) {
        remote.enableEvent(ev, parseU8(data) !== 0);
        return data.length;
      },
    }),
  );
  d.add(new File('id', MODE_READ, seqRead(() => `${ev.def.id}\n`)));
  d.add(new File('format', MODE_READ, seqRead(() => formatText(ev.def))));
  return d;
}

/** events/: enable, header_page, header_event, then <remote>/<event>/. */
function eventsDir(remote: TraceRemote): Dir {
  const dir = eventfsDir('events');
  dir.add(
    new File('enable', MODE_WRITE, {
      ...simpleRead(() => `${remote.enabledState()}\n`),
      write(_f, data) {
        remote.enableAll(parseU8(data) !== 0);
        return data.length;
      },
    }),
  );
  dir.add(new File('header_page', MODE_READ, simpleRead(() => pageHeaderFormat())));
  dir.add(new File('header_event', MODE_READ, simpleRead(() => entryHeaderFormat())));
  if (remote.events.length) {
    const sys = dir.add(eventfsDir(remote.name));
    for (const ev of remote.events) sys.add(eventDir(remote, ev));
  }
  return dir;
}

function remoteDir(remote: TraceRemote, nrCpus: number): Dir {
  const dir = new Dir(remote.name, 0o750);
  dir.add(new File('tracing_on', MODE_WRITE, tracingOnFile(remote)));
  dir.add(new File('buffer_size_kb', MODE_WRITE, bufferSizeKbFile(remote)));
  dir.add(new File('trace_pipe', MODE_READ, tracePipeFile(remote, ALL_CPUS)));
  dir.add(new File('trace', MODE_WRITE, traceFile(remote, ALL_CPUS)));
  const perCpu = dir.add(new Dir('per_cpu', 0o750));
  for (let cpu = 0; cpu < nrCpus; cpu++) {
    const d = perCpu.add(new Dir(`cpu${cpu}`, 0o750));
    d.add(new File('trace_pipe', MODE_READ, tracePipeFile(remote, cpu)));
    d.add(new File('trace', MODE_WRITE, traceFile(remote, cpu)));
  }
  dir.add(eventsDir(remote));
  dir.add(new File('write_event', 0o200, writeEventFile(remote)));
  for (const f of remote.writer.def.files ?? []) dir.add(new File(f.name, f.perm, seqRead(() => f.text)));
  return dir;
}

/** remotes/ under `root`, from the first remote registered on, with a directory per remote. */
export function addRemotesDir(root: Dir, tracing: Tracing): void {
  const add = (remote: TraceRemote) => root.dir('remotes', 0o750).add(remoteDir(remote, tracing.kernel.nrCpus));
  for (const remote of tracing.remotes.all) add(remote);
  tracing.remotes.onRegister.add(add);
}

