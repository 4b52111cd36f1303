/**
 * How hist triggers show: the `hist` file (one histogram per trigger: the
 * trigger's line, an entry per key — its key fields, hitcount and values,
 * what onmax/onchange kept — and the totals) and the trigger's line in the
 * `trigger` file.
 */
import type { ActionData } from './hist_actions.js';
import type { HistData } from './hist_data.js';
import { HF, HIST_STACKTRACE_DEPTH, type HistField, histFieldName, histFieldPrint } from './hist_field.js';
import type { MapElt } from './tracing_map.js';

/** What printing needs besides the trigger: symbol names, syscall names, snapshot state. */
export interface PrintEnv {
  /** `%ps` (sym) or `%pS` (sym-offset) of an address. */
  symbol(addr: bigint, offset: boolean): string;
  /** The name of syscall `nr` (sys_*), if any. */
  syscallName(nr: number): string | undefined;
}

/** event_hist_trigger_print(): the trigger's line (without the newline the caller adds). */
export function histTriggerLine(hd: HistData, name: string | undefined, filterStr: string | undefined, paused: boolean): string {
  let s = 'hist:';
  if (name) s += `${name}:`;
  s += 'keys=';
  s += hd.keyFields
    .map((f) => (f.has(HF.STACKTRACE) ? (f.field ? `${f.field.name}.stacktrace` : 'common_stacktrace') : histFieldPrint(f)))
    .join(',');
  s += ':vals=';
  let showVal = false;
  let haveVar = false;
  hd.valFields.forEach((f, i) => {
    if (f.has(HF.VAR)) {
      haveVar = true;
      return;
    }
    if (i === 0) {
      if (hd.attrs.noHitcount) return;
      s += 'hitcount';
    } else {
      if (showVal) s += ',';
      s += histFieldPrint(f);
    }
    showVal = true;
  });
  if (haveVar) s += `:${hd.valFields.filter((f) => f.has(HF.VAR)).map(histFieldPrint).join(',')}`;
  s += ':sort=';
  const firstKeyIdx = hd.nVals - hd.nVars;
  s += hd.sortKeys
    .map((k) => {
      let idx = k.fieldIdx;
      let t: string;
      if (idx === 0) t = 'hitcount';
      else {
        if (idx >= firstKeyIdx) idx += hd.nVars;
        t = histFieldPrint(hd.fields[idx]!);
      }
      return k.descending ? `${t}.descending` : t;
    })
    .join(',');
  s += `:size=${hd.map.maxElts}`;
  if (hd.enableTimestamps) s += `:clock=${hd.attrs.clock}`;
  if (hd.attrs.noHitcount) s += ':nohitcount';
  s += actionsSpec(hd);
  if (filterStr !== undefined) s += ` if ${filterStr}`;
  s += paused ? ' [paused]' : ' [active]';
  return s;
}

/** print_actions_spec(). */
function actionsSpec(hd: HistData): string {
  let s = '';
  for (const a of hd.actions) {
    if (a.handler === 'onmatch') s += `:onmatch(${a.matchSystem}.${a.matchEvent}).${a.actionName}(${actionSpec(hd, a)})`;
    else s += `:${a.handler}(${a.varStr}).${a.actionName}(${actionSpec(hd, a)})`;
  }
  return s;
}

function actionSpec(hd: HistData, a: ActionData): string {
  if (a.action === 'save') return hd.saveVars.map((v) => v.var.varName).join(',');
  if (a.action === 'trace') return [...(a.useTraceKeyword ? [a.synthEventName!] : []), ...a.params].join(',');
  return '';
}

/** Stats of a value for .percent and .graph. */
interface ValStat {
  max: bigint;
  total: bigint;
}

function percentage(val: bigint, total: bigint): number | 'error' {
  if (!total) return val ? 'error' : 0;
  return Number((val * 10000n) / total);
}

function bar(val: bigint, max: bigint, size = 20): string {
  const pc = percentage(val, max);
  if (pc === 'error') return '[ERROR]';
  const len = Math.floor((pc * size) / 10000);
  return '#'.repeat(Math.min(len, size)).padEnd(size, ' ');
}

/** hist_trigger_print_key(). */
function printKey(hd: HistData, env: PrintEnv, key: Buffer, elt: MapElt | undefined): string {
  let s = '{ ';
  let multiline = false;
  hd.keyFields.forEach((f, i) => {
    if (i > 0) s += ', ';
    const name = histFieldName(f, 0);
    const u64 = (): bigint => (f.offset + 8 <= key.length ? key.readBigUInt64LE(f.offset) : 0n);
    if (f.has(HF.HEX)) s += `${name}: ${u64().toString(16)}`;
    else if (f.has(HF.SYM)) s += `${name}: [${u64().toString(16)}] ${env.symbol(u64(), false).padEnd(45)}`;
    else if (f.has(HF.SYM_OFFSET)) s += `${name}: [${u64().toString(16)}] ${env.symbol(u64(), true).padEnd(55)}`;
    else if (f.has(HF.EXECNAME)) s += `${name}: ${(elt?.comm ?? '').padEnd(16)}[${u64().toString().padStart(10)}]`;
    else if (f.has(HF.SYSCALL)) {
      const v = u64();
      s += `${name}: ${(env.syscallName(Number(v)) ?? 'unknown_syscall').padEnd(30)}[${v.toString().padStart(3)}]`;
    } else if (f.has(HF.STACKTRACE)) {
      s += f.field ? `${f.field.name}.stacktrace` : 'common_stacktrace:\n';
      for (let j = 0; j < HIST_STACKTRACE_DEPTH; j++) {
        const at = f.offset + j * 8;
        if (at + 8 > key.length) break;
        const a = key.readBigUInt64LE(at);
        if (!a) break;
        s += `${' '.repeat(9)}${env.symbol(a, true)}\n`;
      }
      multiline = true;
    } else if (f.has(HF.LOG2)) s += `${name}: ~ 2^${u64().toString().padEnd(2)}`;
    else if (f.has(HF.BUCKET)) {
      const v = u64();
      s += `${name}: ~ ${v}-${v + f.buckets - 1n}`;
    } else if (f.has(HF.STRING)) {
      const z = key.indexOf(0, f.offset);
      const str = key.toString('latin1', f.offset, z >= 0 && z < f.offset + f.size ? z : f.offset + f.size);
      s += `${name}: ${str.padEnd(50)}`;
    } else s += `${name}: ${u64().toString().padStart(10)}`;
  });
  if (!multiline) s += ' ';
  return `${s}}`;
}

function printVal(name: string, flags: number, val: bigint, stat: ValStat | undefined): string {
  if (flags & HF.PERCENT) {
    const pc = percentage(val, stat?.total ?? 0n);
    if (pc === 'error') return ` ${name} (%):[ERROR]`;
    return ` ${name} (%): ${String(Math.floor(pc / 100)).padStart(3)}.${String(pc % 100).padStart(2, '0')}`;
  }
  if (flags & HF.GRAPH) return ` ${name}: ${bar(val, stat?.max ?? 0n).padStart(20)}`;
  if (flags & HF.HEX) return ` ${name}: ${val.toString(16).padStart(10)}`;
  return ` ${name}: ${val.toString().padStart(10)}`;
}

/** track_data_print(): what onmax/onchange kept in an element. */
function trackPrint(hd: HistData, elt: MapElt, a: ActionData): string {
  const track = elt.vars[a.trackVar!.varIdx];
  const tv = typeof track === 'bigint' ? track : 0n;
  let s = a.handler === 'onmax' ? `\n\tmax: ${tv.toString().padStart(10)}` : `\n\tchanged: ${tv.toString().padStart(10)}`;
  if (a.action === 'snapshot') return s;
  for (const sv of hd.saveVars) {
    const v = elt.vars[sv.var.varIdx];
    if (sv.val.has(HF.STRING)) s += `  ${sv.var.varName}: ${String(typeof v === 'string' ? v : '').padEnd(32)}`;
    else s += `  ${sv.var.varName}: ${(typeof v === 'bigint' ? v : 0n).toString().padStart(10)}`;
  }
  return s;
}

/** hist_trigger_entry_print(). */
function entryLine(hd: HistData, env: PrintEnv, elt: MapElt, stats: (ValStat | undefined)[]): string {
  let s = printKey(hd, env, elt.key, elt);
  if (!hd.attrs.noHitcount) s += printVal('hitcount', 0, elt.sums[0] ?? 0n, stats[0]);
  for (let i = 1; i < hd.nVals; i++) {
    const f = hd.fields[i]!;
    if (f.has(HF.VAR) || f.has(HF.EXPR)) continue;
    s += ` ${printVal(histFieldName(f, 0), f.flags, elt.sums[i] ?? 0n, stats[i])}`;
  }
  for (const a of hd.actions) {
    if (a.action === 'snapshot') continue;
    if (a.handler === 'onmax' || a.handler === 'onchange') s += trackPrint(hd, elt, a);
  }
  return `${s}\n`;
}

/** The snapshot an onmax/onchange().snapshot() took, if any (track_data_snapshot_print). */
export interface SnapshotNote {
  action: ActionData;
  trackVal: bigint;
  key: Buffer;
  elt: MapElt;
}

/** hist_trigger_show(): one trigger's histogram. */
export function histShow(hd: HistData, env: PrintEnv, line: string, n: number, snap?: SnapshotNote): string {
  let s = n > 0 ? '\n\n' : '';
  s += `# event histogram\n#\n# trigger info: ${line}\n#\n\n`;
  const entries = hd.map.sorted(hd.sortKeys);
  const stats: (ValStat | undefined)[] = [];
  hd.valFields.forEach((f, j) => {
    if (!(f.flags & (HF.PERCENT | HF.GRAPH))) return;
    const st: ValStat = { max: 0n, total: 0n };
    for (const e of entries) {
      const v = e.sums[j] ?? 0n;
      st.total += v;
      if (st.max < v) st.max = v;
    }
    stats[j] = st;
  });
  for (const e of entries) s += entryLine(hd, env, e, stats);
  if (snap) {
    s += '\nSnapshot taken (see tracing/snapshot).  Details:\n';
    s += `\ttriggering value { ${snap.action.handler}(${snap.action.varStr}) }: ${snap.trackVal.toString().padStart(10)}`;
    s += `\ttriggered by event with key: ${printKey(hd, env, snap.key, snap.elt)}\n`;
  }
  s += `\nTotals:\n    Hits: ${hd.map.hits}\n    Entries: ${entries.length}\n    Dropped: ${hd.map.drops}\n`;
  return s;
}

export type { HistField };
