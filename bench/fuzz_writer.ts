/**
 * One writer of `tracefs-emu fuzz`, a child process of the fuzzer: a
 * process of its own, as a user's shell is, writing to the mount with plain
 * blocking open/write/close (the process serving the mount is the parent,
 * or a daemon), so its work and its memory are not the server's. It writes
 * in rounds: the parent says how many writes, the writer answers with what
 * each got, and waits while the parent resets the state between rounds.
 * A writer that put a tracer on every function (function, function_graph)
 * takes it off again some writes later, as a user does: the kernel's every
 * call is traced meanwhile, which is slow on a real kernel too.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { type FileKind, inputFor, rng } from './fuzz_inputs.js';

/** What the parent tells a writer first. */
export interface WriterInit {
  type: 'init';
  dir: string;
  /** The files written, with their kinds. */
  files: [string, FileKind][];
  seed: number;
  id: number;
}

/** Writes `n` inputs, then answers with a RoundDone. */
export interface WriterRound {
  type: 'round';
  n: number;
}

export interface RoundDone {
  type: 'done';
  /** Per file: the results, as [errno name or '0', count]. */
  results: [string, [string, number][]][];
  /** Inputs answered EIO (`file <- input`). */
  eio: string[];
}

/** Tracers that trace every function the kernel calls. */
const WHOLE_KERNEL_TRACERS = new Set(['function', 'function_graph']);

/** Writes of its own (the writers together make about four times as many) after which a writer takes off a whole-kernel tracer it put on. */
const TRACER_SPAN = 8;

/** `file <- input` as printed in samples. */
export function describeWrite(file: string, data: Buffer): string {
  return `${file} <- ${JSON.stringify(data.toString('latin1').slice(0, 200))}`;
}

/** One write(2) of `data` to `path`: '0' or the errno's name. */
function writeOnce(path: string, data: Buffer, append: boolean): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, append ? 'a' : 'w');
    writeSync(fd, data, 0, data.length, null);
    return '0';
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  } finally {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // close(2) of a tracefs file reports nothing worth counting
      }
    }
  }
}

function serve(init: WriterInit, send: (m: RoundDone) => void): (m: WriterRound) => void {
  const r = rng(init.seed * 1000 + init.id + 1);
  const byKind = new Map<FileKind, string[]>();
  for (const [f, k] of init.files) byKind.set(k, [...(byKind.get(k) ?? []), f]);
  const kinds = [...byKind.keys()].sort();
  const kindOf = new Map(init.files);
  /** current_tracer files this writer put a whole-kernel tracer in, and the write at which it puts nop back. */
  const tracerOff = new Map<string, number>();
  let writes = 0;
  return ({ n }) => {
    const results = new Map<string, Map<string, number>>();
    const eio: string[] = [];
    for (let i = 0; i < n; i++, writes++) {
      let file: string | undefined;
      let data: Buffer;
      for (const [f, at] of tracerOff) if (at <= writes) file = f;
      if (file) {
        tracerOff.delete(file);
        data = Buffer.from('nop\n');
      } else {
        // a kind of file, then one of its files: the few probe files get their share
        const same = byKind.get(kinds[Math.floor(r() * kinds.length)]!)!;
        file = same[Math.floor(r() * same.length)]!;
        data = inputFor(r, file, kindOf.get(file)!);
      }
      const res = writeOnce(join(init.dir, file), data, r() < 0.7);
      if (res === '0' && kindOf.get(file) === 'tracer' && WHOLE_KERNEL_TRACERS.has(data.toString('latin1').trim())) tracerOff.set(file, writes + TRACER_SPAN);
      let m = results.get(file);
      if (!m) results.set(file, (m = new Map()));
      m.set(res, (m.get(res) ?? 0) + 1);
      if (res === 'EIO' && eio.length < 20) eio.push(describeWrite(file, data));
    }
    send({ type: 'done', results: [...results].map(([f, m]) => [f, [...m]]), eio });
  };
}

// As a child of the fuzzer: serve its rounds until it disconnects.
if (process.send) {
  let round: ((m: WriterRound) => void) | undefined;
  process.on('message', (m: WriterInit | WriterRound) => {
    if (m.type === 'init') round = serve(m, (d) => process.send!(d));
    else round?.(m);
  });
  process.on('disconnect', () => process.exit(0));
}
