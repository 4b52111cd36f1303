/**
 * The `hist` trigger command (event_hist_trigger_parse and friends): making,
 * pausing, continuing, clearing and removing hist triggers — named ones
 * sharing one histogram across events — and what one does when its event
 * fires (event_hist_trigger): the key, the element, the sums and variables,
 * the variables of other triggers it reads, its actions.
 */
import type { ExecContext } from '../../../kernel/context.js';
import { expectKernelError, KernelError } from '../../../kernel/errno.js';
import { sprintSymbol, sprintSymbolNoOffset } from '../../../kernel/kallsyms.js';
import { SYSCALL_NR } from '../../../kernel/syscall_nr.js';
import { SynthEvent } from '../../dynevent/trace_events_synth.js';
import { stackEntries } from '../../ftrace/kernel_stack.js';
import type { TraceArray } from '../../trace_array.js';
import type { Tracing } from '../../tracing.js';
import { armSnapshot, takeSnapshot } from '../array_hooks.js';
import type { EventFile } from '../event_file.js';
import { ETT_EVENT_HIST, newTriggerData, type RecTriggerCommand, setTriggerFilter, type TriggerData } from '../triggers/trigger.js';
import { type ActionData, type ActionEnv, createActions, parseActions } from './hist_actions.js';
import { parseHistAttrs } from './hist_attrs.js';
import { type HistEnv, HistData } from './hist_data.js';
import { HistErrors } from './hist_errors.js';
import { HistParseError } from './hist_expr.js';
import { type EvalCtx, HF, HIST_STACKTRACE_DEPTH, type HistVal, toU64 } from './hist_field.js';
import { histShow, histTriggerLine, type PrintEnv, type SnapshotNote } from './hist_print.js';
import { TRACING_MAP_BITS_DEFAULT, type MapElt } from './tracing_map.js';

/** A hist trigger's own data on its TriggerData. */
interface HistTriggerData extends TriggerData {
  hist?: HistData;
  /** A named trigger's `name=NAME`. */
  name?: string;
  /** The first trigger of that name, whose data this one shares. */
  namedData?: HistTriggerData;
}

/** What the hist triggers of one tracing instance share. */
export class HistState implements HistEnv, ActionEnv {
  readonly errors: HistErrors;
  readonly named: HistTriggerData[] = [];
  private readonly vars = new WeakMap<TraceArray, Set<HistData>>();
  /** Cond snapshots: the onmax/onchange().snapshot() action of a trace array, and what it last took. */
  readonly condSnapshots = new WeakMap<TraceArray, { hist: HistData; action: ActionData; note?: SnapshotNote }>();
  /** Pollers of hist files (hist_poll_wait). */
  readonly pollers = new Set<() => void>();
  readonly print: PrintEnv;
  /** The `hist` command of this instance's event layer. */
  command?: RecTriggerCommand;

  constructor(readonly tracing: Tracing) {
    this.errors = new HistErrors((tr, loc, cmd, pos, msg) => tracing.errorLog.log(tr, loc, cmd, pos, msg));
    const names = new Map<number, string>();
    for (const [n, nr] of Object.entries(SYSCALL_NR)) if (!names.has(nr)) names.set(nr, `sys_${n}`);
    const symbols = tracing.kernel.symbols;
    // %pS with .sym-offset, %ps with .sym
    const symbol = (addr: bigint, offset: boolean): string => (offset ? sprintSymbol(symbols, addr) : sprintSymbolNoOffset(symbols, addr));
    this.print = { symbol, syscallName: (nr) => names.get(nr) };
  }

  histVars(tr: TraceArray): Set<HistData> {
    let s = this.vars.get(tr);
    if (!s) this.vars.set(tr, (s = new Set()));
    return s;
  }

  findFile(tr: TraceArray, system: string | undefined, event: string | undefined): EventFile | undefined {
    if (!system || !event) return undefined;
    const te = this.tracing.events;
    const type = te.find(system, event);
    return type ? te.array(tr).file(type) : undefined;
  }

  histsOn(file: EventFile): HistData[] {
    return histTriggers(file).map((t) => t.hist!);
  }

  findSynth(name: string): SynthEvent | undefined {
    const t = this.tracing.events.find('synthetic', name);
    return t instanceof SynthEvent ? t : undefined;
  }

  createFieldVarHist(_hd: HistData, file: EventFile, cmd: string): HistData | undefined {
    try {
      histParse(this, file, '', cmd);
    } catch (e) {
      expectKernelError(e);
      return undefined;
    }
    return this.histsOn(file).at(-1);
  }

  wakePollers(): void {
    for (const w of [...this.pollers]) w();
  }
}

function histTriggers(file: EventFile): HistTriggerData[] {
  return file.triggers.filter((t) => t.cmd.type === ETT_EVENT_HIST) as HistTriggerData[];
}

const einval = (): never => {
  throw new KernelError('EINVAL');
};

/** Splits `param [if filter]` as event_hist_trigger_parse does (the `if` a word of its own). */
function splitFilter(paramAndFilter: string): { param: string; filter?: string } {
  let p = 0;
  for (;;) {
    const i = paramAndFilter.indexOf('if', p);
    if (i < 0) return { param: paramAndFilter };
    if (i === 0) einval();
    const before = paramAndFilter[i - 1];
    if (before !== ' ' && before !== '\t') {
      p = i + 1;
      continue;
    }
    if (i >= paramAndFilter.length - 2 - 1) einval();
    const after = paramAndFilter[i + 2];
    if (after !== ' ' && after !== '\t') {
      p = i + 1;
      continue;
    }
    return { param: paramAndFilter.slice(0, i - 1).trim(), filter: paramAndFilter.slice(i).trim() };
  }
}

/** compatible_field(). */
function compatibleField(a: HistData['fields'][number]['field'], b: HistData['fields'][number]['field']): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  return a.name === b.name && a.type === b.type && a.size === b.size && a.signed === b.signed;
}

/** hist_trigger_match(). */
function histTriggerMatch(data: HistTriggerData, test: HistTriggerData, named: HistTriggerData | undefined, ignoreFilter: boolean): boolean {
  if (named && named !== test && named !== test.namedData) return false;
  if (!named && test.name !== undefined) return false;
  const a = data.hist!;
  const b = test.hist!;
  if (a.nVals !== b.nVals || a.fields.length !== b.fields.length || a.sortKeys.length !== b.sortKeys.length) return false;
  if (!ignoreFilter && (data.filterStr === undefined) !== (test.filterStr === undefined)) return false;
  for (let i = 0; i < a.fields.length; i++) {
    const x = a.fields[i]!;
    const y = b.fields[i]!;
    if (x.flags !== y.flags || !compatibleField(x.field, y.field) || x.offset !== y.offset || x.size !== y.size || x.isSigned !== y.isSigned) return false;
    if ((x.varName === undefined) !== (y.varName === undefined) || (x.varName !== undefined && x.varName !== y.varName)) return false;
  }
  for (let i = 0; i < a.sortKeys.length; i++) {
    if (a.sortKeys[i]!.fieldIdx !== b.sortKeys[i]!.fieldIdx || a.sortKeys[i]!.descending !== b.sortKeys[i]!.descending) return false;
  }
  if (!ignoreFilter && data.filterStr !== undefined && data.filterStr !== test.filterStr) return false;
  return actionsMatch(a, b);
}

/** actions_match(). */
function actionsMatch(a: HistData, b: HistData): boolean {
  if (a.actions.length !== b.actions.length) return false;
  return a.actions.every((x, i) => {
    const y = b.actions[i]!;
    if (x.handler !== y.handler || x.action !== y.action || x.params.length !== y.params.length) return false;
    if (x.params.some((p, j) => p !== y.params[j])) return false;
    const nx = x.useTraceKeyword ? x.synthEventName : x.actionName;
    const ny = y.useTraceKeyword ? y.synthEventName : y.actionName;
    if (nx !== ny) return false;
    if (x.handler === 'onmatch') return x.matchSystem === y.matchSystem && x.matchEvent === y.matchEvent;
    return x.varStr === y.varStr;
  });
}

function findNamed(state: HistState, name: string | undefined): HistTriggerData | undefined {
  if (!name) return undefined;
  return state.named.find((d) => !d.namedData && d.name === name);
}

/** event_hist_trigger_parse(). `glob` is '' for a trigger made by the kernel itself (field variable histograms). */
function histParse(state: HistState, file: EventFile, glob: string, paramAndFilter: string | undefined): void {
  const { errors } = state;
  const tr = file.tr;
  if (glob) {
    errors.clear();
    if (paramAndFilter !== undefined) errors.set(paramAndFilter, file.type.system, file.type.name);
  }
  const remove = glob.startsWith('!');
  if (paramAndFilter === undefined) einval();
  const { param: rawParam, filter } = splitFilter(paramAndFilter!);
  // `.sym-offset` becomes `.symXoffset` so that its '-' is not an operator
  const param = rawParam.replace(/\.sym-offset/g, '.symXoffset');
  const attrs = parseHistAttrs(tr, errors, param);
  if (attrs === 'EINVAL') einval();
  const hd = new HistData(state, file, attrs as Exclude<typeof attrs, 'EINVAL'>, remove);
  const data: HistTriggerData = newTriggerData(histCommand(state), undefined);
  data.hist = hd;
  try {
    parseActions(hd);
    hd.createFields();
    hd.createSortKeys();
    hd.createMap(hd.attrs.mapBits || TRACING_MAP_BITS_DEFAULT);
    setTriggerFilter(file, filter, data);
    hd.filterStr = data.filterStr;
    if (remove) {
      const named = findNamed(state, hd.attrs.name);
      const match = histTriggers(file).find((t) => histTriggerMatch(data, t, named, false));
      if (!match) return;
      if (match.hist!.varsReferenced()) throw new KernelError('EBUSY');
      unregisterHist(state, file, match);
      return;
    }
    if (existingUpdateOnly(state, data, file)) return;
    const named = findNamed(state, hd.attrs.name);
    if (!named) {
      createActions(hd, state);
      enableCondSnapshot(state, hd);
      if (hd.hasHistVars() || hd.varRefs.length) state.histVars(tr).add(hd);
    }
    registerHist(state, file, data, named);
    if (glob) errors.clear();
  } catch (e) {
    state.histVars(tr).delete(hd);
    for (const a of hd.actions) if (a.synth) a.synth.refs--;
    const c = state.condSnapshots.get(tr);
    if (c?.hist === hd) state.condSnapshots.delete(tr);
    if (e instanceof HistParseError) throw new KernelError(e.errno);
    throw e;
  }
}

/** tracing_snapshot_cond_enable() for a snapshot() action: one per trace array (EBUSY), with a spare buffer. */
function enableCondSnapshot(state: HistState, hd: HistData): void {
  const a = hd.actions.find((x) => x.action === 'snapshot');
  if (!a) return;
  if (state.condSnapshots.has(hd.tr)) throw new KernelError('EBUSY');
  armSnapshot(hd.tr);
  state.condSnapshots.set(hd.tr, { hist: hd, action: a });
}

/** existing_hist_update_only(): pause, cont and clear act on the matching trigger. */
function existingUpdateOnly(state: HistState, data: HistTriggerData, file: EventFile): boolean {
  const a = data.hist!.attrs;
  if (!a.pause && !a.cont && !a.clear) return false;
  let named: HistTriggerData | undefined;
  if (a.name) {
    named = findNamed(state, a.name);
    if (named && !histTriggerMatch(data, named, named, true)) return false;
    if (!named) return false;
  }
  for (const t of histTriggers(file)) {
    if (!histTriggerMatch(data, t, named, false)) continue;
    if (a.pause) t.paused = true;
    else if (a.cont) t.paused = false;
    else if (a.clear) t.hist!.map.clear();
    return true;
  }
  return false;
}

/** hist_register_trigger() + hist_trigger_enable(). */
function registerHist(state: HistState, file: EventFile, data: HistTriggerData, named: HistTriggerData | undefined): void {
  const { errors } = state;
  const tr = file.tr;
  const hd = data.hist!;
  if (hd.attrs.name && named && !histTriggerMatch(data, named, named, true)) {
    errors.err(tr, 'NAMED_MISMATCH', errors.pos(hd.attrs.name));
    throw new KernelError('EINVAL');
  }
  if (!(hd.attrs.name && !named)) {
    for (const t of histTriggers(file)) {
      if (histTriggerMatch(data, t, named, false)) {
        errors.err(tr, 'TRIGGER_EEXIST', 0);
        throw new KernelError('EEXIST');
      }
    }
  }
  if (hd.attrs.cont || hd.attrs.clear) {
    errors.err(tr, 'TRIGGER_ENOENT_CLEAR', 0);
    throw new KernelError('ENOENT');
  }
  if (hd.attrs.pause) data.paused = true;
  if (named) {
    data.hist = named.hist;
    data.namedData = named;
    data.name = named.name;
    state.histVars(tr).delete(hd);
  }
  if (hd.enableTimestamps) {
    try {
      tr.setClock(hd.attrs.clock);
    } catch (e) {
      expectKernelError(e);
      errors.err(tr, 'SET_CLOCK_FAIL', errors.pos(hd.attrs.clock));
      throw new KernelError('EINVAL');
    }
  }
  if (!named && hd.attrs.name) {
    data.name = hd.attrs.name;
    state.named.push(data);
  } else if (named) state.named.push(data);
  // hist triggers go at the end of the list (list_add_tail)
  file.triggers.push(data);
  file.updateCond();
  file.triggerModeRef(true);
  const se = state.findSynth(file.type.name);
  if (se && file.type.system === 'synthetic') se.refs++;
}

/** hist_unregister_trigger() + the trigger's free: its field variable histograms go too. */
function unregisterHist(state: HistState, file: EventFile, t: HistTriggerData): void {
  const i = file.triggers.indexOf(t);
  if (i >= 0) file.triggers.splice(i, 1);
  file.triggerModeRef(false);
  file.updateCond();
  const n = state.named.indexOf(t);
  if (n >= 0) state.named.splice(n, 1);
  const se = state.findSynth(file.type.name);
  if (se && file.type.system === 'synthetic') se.refs--;
  const hd = t.hist!;
  // the data is the named set's: it goes with its last trigger
  if (t.name !== undefined && state.named.some((d) => d.hist === hd)) return;
  state.histVars(file.tr).delete(hd);
  for (const a of hd.actions) {
    if (a.synth) a.synth.refs--;
    if (a.action === 'snapshot') {
      const c = state.condSnapshots.get(file.tr);
      if (c?.hist === hd) state.condSnapshots.delete(file.tr);
    }
  }
  for (const fvh of hd.fieldVarHists) {
    try {
      histParse(state, fvh.hist.file, '!hist', fvh.cmd);
    } catch (e) {
      expectKernelError(e); // gone already
    }
  }
}

/** hist_unreg_all(): an O_TRUNC open of `trigger` removes the hist triggers (unless another trigger reads their variables). */
function unregAll(state: HistState, file: EventFile): void {
  const hists = histTriggers(file);
  if (hists.some((t) => t.hist!.varsReferenced())) return;
  for (const t of hists) unregisterHist(state, file, t);
}

// ------------------------------------------------------------------ firing

/** event_hist_trigger(). */
function histTrigger(state: HistState, data: HistTriggerData, ctx: ExecContext, rec: Buffer): void {
  const hd = data.hist!;
  const tr = hd.tr;
  let ts = BigInt(tr.clock.now());
  if (hd.attrs.tsInUsecs && tr.clock.inNs) ts /= 1000n;
  let stack: bigint[] | undefined;
  const e: EvalCtx = { rec, ctx, ts, varRefVals: [], stack: () => (stack ??= stackEntries(ctx.task)) };
  const key = Buffer.alloc(hd.keySize);
  for (const f of hd.keyFields) {
    if (f.has(HF.STACKTRACE)) {
      const v = f.value(e);
      const entries = Array.isArray(v) ? v : e.stack();
      entries.slice(0, HIST_STACKTRACE_DEPTH).forEach((a, j) => {
        if (f.offset + j * 8 + 8 <= key.length) key.writeBigUInt64LE(BigInt.asUintN(64, a), f.offset + j * 8);
      });
      continue;
    }
    const v = f.value(e);
    if (typeof v === 'string') Buffer.from(v, 'latin1').copy(key, f.offset, 0, Math.max(0, Math.min(v.length, f.size - 1)));
    else key.writeBigUInt64LE(BigInt.asUintN(64, toU64(v)), f.offset);
  }
  if (hd.varRefs.length && !resolveVarRefs(hd, key, e.varRefVals, false)) return;
  const comm = ctx.task.pid === 0 ? '<idle>' : ctx.task.comm;
  const elt = hd.map.insert(key, hd.savesComm ? (made) => (made.comm = comm) : undefined);
  if (!elt) return;
  e.elt = elt;
  updateElt(hd, elt, e);
  if (resolveVarRefs(hd, key, e.varRefVals, true)) runActions(state, hd, elt, key, e);
  state.wakePollers();
}

/** resolve_var_refs(): the values of the variables this trigger reads, for this key (others' or its own). */
function resolveVarRefs(hd: HistData, key: Buffer, vals: HistVal[], self: boolean): boolean {
  for (let i = 0; i < hd.varRefs.length; i++) {
    const ref = hd.varRefs[i]!;
    const owner = ref.varHist;
    if (!owner) return false;
    if ((self && owner !== hd) || (!self && owner === hd)) continue;
    const elt = owner.map.lookup(key);
    if (!elt || !elt.varSet[ref.varIdx]) return false;
    vals[i] = elt.vars[ref.varIdx]!;
    if (!self && ref.readOnce) elt.varSet[ref.varIdx] = false;
  }
  return true;
}

/** hist_trigger_elt_update(): sums, variables, field variables. */
function updateElt(hd: HistData, elt: MapElt, e: EvalCtx): void {
  hd.valFields.forEach((f, i) => {
    const v = f.value(e);
    if (f.has(HF.VAR)) {
      setVar(elt, f.varIdx, f.has(HF.STRING) && typeof v === 'string' ? v.slice(0, Math.min(f.size, 256) - 1) : v);
      return;
    }
    elt.sums[i] = BigInt.asUintN(64, (elt.sums[i] ?? 0n) + toU64(v));
  });
  for (const f of hd.keyFields) if (f.has(HF.VAR)) setVar(elt, f.varIdx, f.value(e));
  for (const fv of hd.fieldVars) setVar(elt, fv.var.varIdx, fieldVarValue(fv.val, e));
}

function fieldVarValue(val: HistData['fields'][number], e: EvalCtx): HistVal {
  if (val.has(HF.STACKTRACE)) return e.stack();
  const v = val.value(e);
  return typeof v === 'string' ? v.slice(0, Math.min(val.size, 256) - 1) : v;
}

function setVar(elt: MapElt, idx: number, v: HistVal): void {
  elt.vars[idx] = v;
  elt.varSet[idx] = true;
}

/** hist_trigger_actions(). */
function runActions(state: HistState, hd: HistData, elt: MapElt, key: Buffer, e: EvalCtx): void {
  for (const a of hd.actions) {
    if (a.handler === 'onmatch') {
      traceSynth(state, a, e);
      continue;
    }
    const varVal = toU64(e.varRefVals[a.varRef!.varRefIdx] ?? 0n);
    const trackIdx = a.trackVar!.varIdx;
    const track = toU64(elt.vars[trackIdx] ?? 0n);
    if (a.handler === 'onmax' ? varVal <= track : varVal === track) continue;
    elt.vars[trackIdx] = varVal;
    elt.varSet[trackIdx] = true;
    if (a.action === 'save') for (const sv of hd.saveVars) setVar(elt, sv.var.varIdx, fieldVarValue(sv.val, e));
    else if (a.action === 'trace') traceSynth(state, a, e);
    else condSnapshot(state, hd, a, elt, key, varVal, e);
  }
}

/** trace_synth(): the synthetic event with the referenced variables' values. */
function traceSynth(state: HistState, a: ActionData, e: EvalCtx): void {
  const synth = a.synth;
  if (!synth) return;
  const values = a.varRefIdx.map((i) => e.varRefVals[i] ?? 0n);
  state.tracing.events.emit(synth, e.ctx, () => synth.build(e.ctx, values));
}

/** tracing_snapshot_cond(): a snapshot when the tracked value moved past the one last snapshotted. */
function condSnapshot(state: HistState, hd: HistData, a: ActionData, elt: MapElt, key: Buffer, val: bigint, e: EvalCtx): void {
  const c = state.condSnapshots.get(hd.tr);
  if (!c || c.hist !== hd) return;
  const last = c.note?.trackVal ?? 0n;
  if (a.handler === 'onmax' ? val <= last : val === last) return;
  // the key and the comm as they were (cond_snapshot_update): only they are printed with the snapshot
  c.note = { action: a, trackVal: val, key: Buffer.from(key), elt: { ...elt } };
  takeSnapshot(hd.tr, e.ctx);
}

// ------------------------------------------------------------------ the command

function histCommand(state: HistState): RecTriggerCommand {
  return (state.command ??= {
    name: 'hist',
    type: ETT_EVENT_HIST,
    post: false,
    needsRec: true,
    parse: (file, glob, paramAndFilter) => histParse(state, file, glob, paramAndFilter),
    countFunc: () => true,
    trigger: () => {},
    triggerRec: (data, _file, ctx, rec) => histTrigger(state, data as HistTriggerData, ctx, rec),
    print: (data) => {
      const d = data as HistTriggerData;
      return `${histTriggerLine(d.hist!, d.name, d.filterStr, d.paused)}\n`;
    },
    unregAll: (file) => unregAll(state, file),
  });
}

/** The `hist` file of an event: every hist trigger's histogram. */
export function histFileText(tracing: Tracing, file: EventFile): string {
  const state = tracing.events.hist;
  let s = '';
  histTriggers(file).forEach((t, n) => {
    const c = state.condSnapshots.get(file.tr);
    const snap = c && c.hist === t.hist ? c.note : undefined;
    s += histShow(t.hist!, state.print, histTriggerLine(t.hist!, t.name, t.filterStr, t.paused), n, snap);
  });
  return s;
}

/** get_hist_hit_count(): hits of every hist trigger of an event (the hist file's poll compares them). */
export function histHits(file: EventFile): bigint {
  let n = 0n;
  for (const t of histTriggers(file)) n += t.hist!.map.hits;
  return n;
}

/** hist_poll_wait(): `wake` is called once, at the next hit of any hist trigger of this tracing. */
export function histPollWait(tracing: Tracing, wake: () => void): void {
  const { pollers } = tracing.events.hist;
  const once = () => {
    pollers.delete(once);
    wake();
  };
  pollers.add(once);
}

export { histCommand };
