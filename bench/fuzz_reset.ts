/**
 * What a user does between two experiments, as the selftests' initialize
 * step does: in the top array and the instance, the tracer back to nop,
 * events off, function filters and their commands, graph and pid filters
 * emptied; then the event triggers and filters the fuzzer set removed, the
 * dynamic events cleared, and every file written since the last reset whose
 * value was a plain one (an option, a number, a clock) given that value
 * back; a trace array whose buffers were resized gets its first size back
 * (a size of hundreds of megabytes is a write away). Every write's result
 * is counted.
 */
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileKind } from './fuzz_inputs.js';

/** Files a reset empties in each trace array that has them, after the tracer and the events are off. */
const EMPTIED = ['set_ftrace_notrace', 'set_graph_function', 'set_graph_notrace', 'stack_trace_filter', 'set_event_pid', 'set_event_notrace_pid', 'set_ftrace_pid', 'set_ftrace_notrace_pid'];

/** Buffer sizes: restored per trace array, not per file (a per-CPU size's first value is the unexpanded one); free_buffer shrinks them too. */
const SIZE = /(^|\/)(buffer_size_kb|free_buffer)$/;

/** Snapshot files: a write may allocate the spare buffer, `0` frees it. */
const SNAPSHOT = /(^|\/)snapshot$/;

/** Kinds of file whose first value is put back if the fuzzer wrote to them. */
const RESTORED_KINDS = new Set<FileKind>(['enable', 'number', 'text']);

export class FuzzReset {
  /** First values of the files that have a plain one (`1`, `50`, the clock between brackets). */
  private readonly initial = new Map<string, string>();
  private initialOptions = new Map<string, string>();
  /** First buffer size of each trace array (KB per CPU). */
  private readonly sizes = new Map<string, string>();
  /** Writes of resets: `file=result` → count. */
  readonly results = new Map<string, number>();
  /** Resets that failed with EIO (a bug). */
  readonly eio: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly files: ReadonlyMap<string, FileKind>,
    /** Trace array directories: '' (top) and the instance's `instances/NAME/`. */
    private readonly arrays: readonly string[],
  ) {}

  /** Reads the first values of the files a reset may restore. */
  async snapshot(): Promise<void> {
    for (const [file, kind] of this.files) {
      if (!RESTORED_KINDS.has(kind) || SIZE.test(file)) continue;
      const text = await this.read(file);
      const v = text === undefined ? undefined : plainValue(text);
      if (v !== undefined) this.initial.set(file, v);
    }
    for (const a of this.arrays) {
      // `7 (expanded: 1408)` before anything traced: the size it takes once it does
      const text = (await this.read(`${a}buffer_size_kb`)) ?? '';
      const size = /expanded: (\d+)/.exec(text)?.[1] ?? /^(\d+)\n?$/.exec(text)?.[1];
      if (size) this.sizes.set(a, size);
    }
    this.initialOptions = options(await this.read('trace_options'));
  }

  /** Resets the state; `written`: the files written with success since the last reset. */
  async reset(written: ReadonlySet<string>): Promise<void> {
    for (const a of this.arrays) {
      await this.write(`${a}current_tracer`, 'nop');
      await this.write(`${a}events/enable`, '0');
      await this.clearFunctionFilter(a);
      for (const f of EMPTIED) if (this.files.has(`${a}${f}`)) await this.write(`${a}${f}`, '');
    }
    const triggers = [...written].filter((f) => this.files.get(f) === 'trigger');
    // Triggers can need others gone first (an action's target, a variable's user): a few passes.
    for (let pass = 0; pass < 3 && triggers.length; pass++) {
      let left = 0;
      for (const f of triggers) left += await this.clearTriggers(f);
      if (!left) break;
    }
    for (const f of written) if (this.files.get(f) === 'filter') await this.write(f, '0');
    for (const f of ['dynamic_events', 'kprobe_events', 'uprobe_events', 'synthetic_events']) if (this.files.has(f)) await this.write(f, '');
    for (const f of written) {
      const v = this.initial.get(f);
      if (v !== undefined) await this.write(f, v);
    }
    for (const a of this.arrays) await this.restoreOptions(a);
    for (const a of this.arrays) {
      const touched = (re: RegExp): boolean => [...written].some((f) => re.test(f) && f.startsWith(a) && (a !== '' || !f.startsWith('instances/')));
      const size = this.sizes.get(a);
      if (size && touched(SIZE)) await this.write(`${a}buffer_size_kb`, size);
      if (touched(SNAPSHOT)) await this.write(`${a}snapshot`, '0');
    }
    for (const a of this.arrays) await this.write(`${a}trace`, '');
  }

  /** Empties set_ftrace_filter, then takes off its commands (`func:cmd` lines), each kind at once with `!*:cmd`. */
  private async clearFunctionFilter(a: string): Promise<void> {
    const file = `${a}set_ftrace_filter`;
    if (!this.files.has(file)) return;
    await this.write(file, '');
    const removals = new Set<string>();
    for (const line of ((await this.read(file)) ?? '').split('\n')) {
      if (!line.includes(':') || line.startsWith('#')) continue;
      const [, cmd, ...rest] = line.split(':');
      // enable_event:SYS:EVENT:(count=N|unlimited), the others cmd:(count=N|unlimited); a counted one is removed with a count
      const ev = cmd === 'enable_event' || cmd === 'disable_event' ? rest.splice(0, 2) : [];
      const counted = rest[0]?.startsWith('count') ? ['1'] : [];
      removals.add(['!*', cmd, ...ev, ...counted].join(':'));
    }
    for (const r of removals) await this.write(file, r, true);
  }

  /** Takes off every trigger of a trigger file (`!` and the trigger, without its state); how many are left. */
  private async clearTriggers(file: string): Promise<number> {
    const lines = ((await this.read(file)) ?? '').split('\n').filter((l) => l && !l.startsWith('#'));
    // actions (onmatch, onmax...) before the others, as the selftests do
    lines.sort((x, y) => Number(!/:on[a-z]+\(/.test(x)) - Number(!/:on[a-z]+\(/.test(y)));
    for (const l of lines) await this.write(file, `!${l.split(' [')[0]!.trim()}`, true);
    return ((await this.read(file)) ?? '').split('\n').filter((l) => l && !l.startsWith('#')).length;
  }

  /** trace_options back to its first lines, writing only those that differ. */
  private async restoreOptions(a: string): Promise<void> {
    const file = `${a}trace_options`;
    if (!this.files.has(file)) return;
    const now = options(await this.read(file));
    for (const [name, line] of this.initialOptions) if (now.has(name) && now.get(name) !== line) await this.write(file, line);
  }

  private async read(file: string): Promise<string | undefined> {
    try {
      return await readFile(join(this.dir, file), 'latin1');
    } catch {
      return undefined;
    }
  }

  private async write(file: string, text: string, append = false): Promise<void> {
    let res = '0';
    let fh;
    try {
      fh = await open(join(this.dir, file), append ? 'a' : 'w');
      const data = Buffer.from(`${text}\n`, 'latin1');
      await fh.write(data, 0, data.length, null);
    } catch (e) {
      res = (e as NodeJS.ErrnoException).code ?? String(e);
    } finally {
      await fh?.close().catch(() => {});
    }
    // counted by kind of file: events/*/*/trigger, options/*
    const key = `${file.replace(/^instances\/[^/]+\//, 'instance:').replace(/events\/[^/]+\/[^/]+\//, 'events/*/*/').replace(/options\/.*/, 'options/*')}=${res}`;
    this.results.set(key, (this.results.get(key) ?? 0) + 1);
    if (res === 'EIO' && this.eio.length < 20) this.eio.push(`reset: ${file} <- ${JSON.stringify(text)} gave EIO`);
  }
}

/** The value a file shows that can be written back: one word or number, or the selected one of a `[x] y z` list. */
function plainValue(text: string): string | undefined {
  const t = text.trim();
  if (t.includes('\n')) return undefined;
  const sel = /^(?:[\w-]+ )*\[([\w-]+)\]( [\w-]+)*$/.exec(t);
  if (sel) return sel[1];
  return /^[\w-]+$/.test(t) ? t : undefined;
}

/** trace_options' lines by option name (`noname` and `name` are one option). */
function options(text: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of (text ?? '').split('\n')) if (line) out.set(line.replace(/^no/, ''), line);
  return out;
}
