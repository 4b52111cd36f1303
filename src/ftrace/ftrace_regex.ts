/**
 * set_ftrace_filter / set_ftrace_notrace (ftrace_regex_open/write/release):
 * an open for write edits a copy of the hash (emptied by O_TRUNC), each
 * word adds or removes functions or runs a command (`func:cmd[:param]`),
 * and the copy replaces the hash at close. Reads list the functions in
 * record order (or `#### all functions enabled ####`), then the waiting
 * `:mod:` filters, then (filter only) the function probes.
 */
import { expectKernelError, fail } from '../kernel/errno.js';
import type { Ftrace } from './ftrace.js';
import { FtraceArray, type FtraceCommand, type FtraceModLoad } from './ftrace_array.js';
import type { FtraceOps } from './ftrace_ops.js';
import type { FtraceHash } from './ftrace_hash.js';
import { FTRACE_BUFF_MAX, TraceParser } from './trace_parser.js';

/** The commands set_ftrace_filter knows (ftrace_commands), `mod` built in. */
export class FtraceCommands {
  private readonly commands = new Map<string, FtraceCommand>([['mod', modCommand]]);

  /** register_ftrace_command(): EBUSY when the name is taken. */
  register(name: string, cmd: FtraceCommand): void {
    if (this.commands.has(name)) fail('EBUSY');
    this.commands.set(name, cmd);
  }

  get(name: string): FtraceCommand | undefined {
    return this.commands.get(name);
  }
}

/** ftrace_mod_callback(): `func:mod:module`, remembered while the module is not loaded. */
const modCommand: FtraceCommand = (fa, hash, func, _cmd, module, enable) => {
  if (!fa) fail('ENODEV');
  const mod = module ?? '';
  if (fa.ftrace.matchRecords(hash, func, mod) > 0) return;
  cacheMod(fa, func, mod, enable);
};

/** cache_mod(): `!func:mod:m` forgets such filters; others wait for a module not loaded yet. */
function cacheMod(fa: FtraceArray, func: string, module: string, enable: boolean): void {
  const key = enable ? 'modTrace' : 'modNotrace';
  if (func.startsWith('!')) {
    const f = func.slice(1);
    const keep = fa[key].filter((m) => !(m.module === module && (f === '*' || m.func === f)));
    if (keep.length === fa[key].length) fail('EINVAL');
    fa[key] = keep;
    return;
  }
  if (fa.kernel.symbols.hasModule(module)) fail('EINVAL');
  fa[key] = [{ func, module }, ...fa[key]];
}

export type RegexKind = 'filter' | 'notrace';

/**
 * One open of set_ftrace_filter or set_ftrace_notrace (of a trace array), or
 * of a filter file of an ops that belongs to no trace array (stack_trace_filter:
 * no `:mod:` cache, no commands, no probes).
 */
export class FtraceRegex {
  private readonly hash: FtraceHash;
  private readonly parser = new TraceParser(FTRACE_BUFF_MAX);
  readonly ops: FtraceOps;
  private readonly ftrace: Ftrace;

  constructor(
    target: FtraceArray | { ftrace: Ftrace; ops: FtraceOps },
    readonly kind: RegexKind,
    readonly writable: boolean,
    truncate: boolean,
  ) {
    this.fa = target instanceof FtraceArray ? target : undefined;
    this.ops = target.ops;
    this.ftrace = target.ftrace;
    const cur = this.ops.funcHash[kind];
    this.hash = cur.copy();
    if (writable && truncate) {
      this.hash.clear();
      this.hash.mod = false;
      if (this.fa && kind === 'filter') this.fa.modTrace = [];
      else if (this.fa) this.fa.modNotrace = [];
    }
  }

  readonly fa: FtraceArray | undefined;

  /** ftrace_regex_write(): consumes up to one word; a word that fails fails the write. */
  write(data: Buffer): number {
    const read = this.parser.read(data);
    if (this.parser.loaded && !this.parser.cont) {
      const word = this.parser.word;
      this.parser.clear();
      this.process(word);
    }
    return read;
  }

  /** ftrace_process_regex(): a function glob, or `func:command[:param]`. */
  private process(word: string): void {
    const colon = word.indexOf(':');
    if (colon < 0) {
      if (this.ftrace.matchRecords(this.hash, word) <= 0) fail('EINVAL');
      return;
    }
    const func = word.slice(0, colon);
    const rest = word.slice(colon + 1);
    const c2 = rest.indexOf(':');
    const cmd = c2 < 0 ? rest : rest.slice(0, c2);
    const param = c2 < 0 ? undefined : rest.slice(c2 + 1);
    const run = this.ftrace.commands.get(cmd);
    if (!run) fail('EINVAL');
    run(this.fa, this.hash, func, cmd, param, this.kind === 'filter');
  }

  /** ftrace_regex_release(): a pending word is processed, then the edited hash replaces the live one. */
  release(): void {
    if (this.parser.loaded) {
      const word = this.parser.word;
      this.parser.clear();
      try {
        this.process(word);
      } catch (e) {
        expectKernelError(e); // errors of the last word are not reported at close
      }
    }
    if (!this.writable) return;
    if (this.kind === 'filter' && this.fa) this.hash.mod = this.fa.modTrace.length > 0;
    this.ftrace.setHash(this.ops.funcHash, this.kind, this.hash);
  }

  /** The listing of the file (t_start/t_show). */
  show(): string {
    let out = '';
    if (this.hash.empty) out += this.kind === 'notrace' ? '#### no functions disabled ####\n' : '#### all functions enabled ####\n';
    else out += listHash(this.ftrace, this.hash);
    if (this.fa) {
      out += showMods(this.kind === 'filter' ? this.fa.modTrace : this.fa.modNotrace);
      if (this.kind === 'filter') out += this.fa.probes.show();
    }
    return out;
  }
}

/** Names of the functions in a hash, in record order (` [mod]` after module functions). */
export function listHash(ftrace: Ftrace, hash: FtraceHash): string {
  const { records } = ftrace;
  const rs = [...hash].map((id) => records.indexOf[id]).filter((r) => r >= 0);
  rs.sort((a, b) => a - b);
  let out = '';
  for (const r of rs) {
    const fn = records.fns[r];
    out += fn.module ? `${fn.name} [${fn.module}]\n` : `${fn.name}\n`;
  }
  return out;
}

function showMods(list: readonly FtraceModLoad[]): string {
  return list.map((m) => `${m.func || '*'}:mod:${m.module}\n`).join('');
}
