/**
 * One hist trigger's definition and state (struct hist_trigger_data): its
 * fields — values first (hitcount at 0), then variables, then keys — its
 * sort keys, its map, the variables of other triggers it reads, its actions,
 * and the variables made for the fields those actions name.
 */
import type { TraceArray } from '../../trace_array.js';
import type { EventFile } from '../event_file.js';
import type { ActionData } from './hist_actions.js';
import { type HistAttrs, parseVarDefs } from './hist_attrs.js';
import type { HistErrors } from './hist_errors.js';
import { createHistField, fieldHasHistVars, HistParseError, parseExpr } from './hist_expr.js';
import { HF, type HistField, histFieldName, isStringField, MAX_FILTER_STR_VAL } from './hist_field.js';
import { type KeyCmp, type SortKey, TRACING_MAP_KEYS_MAX, TRACING_MAP_SORT_KEYS_MAX, TRACING_MAP_VALS_MAX, TRACING_MAP_VARS_MAX, TracingMap } from './tracing_map.js';

/** HIST_KEY_SIZE_MAX: a string plus a stack. */
const HIST_KEY_SIZE_MAX = MAX_FILTER_STR_VAL + 31 * 8;

/** What every hist trigger of a tracing instance shares. */
export interface HistEnv {
  errors: HistErrors;
  /** tr->hist_vars: the triggers with variables or references, per trace array. */
  histVars(tr: TraceArray): Set<HistData>;
  /** The event file of `system/event` in `tr`. */
  findFile(tr: TraceArray, system: string | undefined, event: string | undefined): EventFile | undefined;
  /** The hist triggers registered on a file, in list order. */
  histsOn(file: EventFile): HistData[];
}

/** A variable made for a field an action names, and the field it holds. */
export interface FieldVar {
  var: HistField;
  val: HistField;
}

export class HistData {
  readonly fields: HistField[] = [];
  nVals = 0;
  nKeys = 0;
  nVars = 0;
  nVarStr = 0;
  keySize = 0;
  sortKeys: SortKey[] = [];
  map!: TracingMap;
  enableTimestamps = false;
  readonly varRefs: HistField[] = [];
  readonly actions: ActionData[] = [];
  readonly fieldVars: FieldVar[] = [];
  nFieldVarStr = 0;
  /** Triggers made on other events to hold variables for fields an action names there (the command that made each). */
  readonly fieldVarHists: { hist: HistData; cmd: string }[] = [];
  readonly saveVars: FieldVar[] = [];
  nSaveVarStr = 0;
  /** The filter of the trigger that owns this data (find_trigger_filter). */
  filterStr?: string;

  constructor(
    readonly env: HistEnv,
    readonly file: EventFile,
    readonly attrs: HistAttrs,
    /** A `!hist:` being parsed: duplicate variables are allowed (they are the same ones). */
    readonly remove: boolean,
  ) {}

  get tr(): TraceArray {
    return this.file.tr;
  }

  // ------------------------------------------------------------------ fields

  /** create_hist_fields(): values (hitcount first), variables, keys. */
  createFields(): void {
    const { errors } = this.env;
    if (parseVarDefs(this.tr, errors, this.attrs)) throw new HistParseError();
    this.createValFields();
    this.createVarFields();
    this.createKeyFields();
  }

  private createValFields(): void {
    const { errors } = this.env;
    this.fields.push(createHistField(this, undefined, HF.HITCOUNT));
    this.nVals++;
    let j = 1;
    try {
      if (this.attrs.vals === undefined) return;
      const parts = this.attrs.vals.split(',');
      let nHitcount = 0;
      let i = 0;
      for (; i < parts.length && i < TRACING_MAP_VALS_MAX && j < TRACING_MAP_VALS_MAX; i++) {
        const fieldStr = parts[i]!;
        if (fieldStr === 'hitcount' && !nHitcount++) continue;
        this.createValField(j++, fieldStr, 0);
      }
      const rest = parts.slice(i).join(',');
      if (i < parts.length && rest !== 'hitcount') throw new HistParseError();
    } finally {
      // Only the raw hitcount, which nohitcount hides.
      if (j === 1 && this.attrs.noHitcount) {
        errors.err(this.tr, 'NEED_NOHC_VAL', 0);
        // eslint-disable-next-line no-unsafe-finally
        throw new HistParseError('ENOENT');
      }
    }
  }

  /** __create_val_field(): a value or a variable, and the modifiers each may not have. */
  private createValField(idx: number, fieldStr: string, flags: number, varName?: string): void {
    const h = parseExpr(this, fieldStr, flags, varName, { v: 0 });
    const bad = h.has(HF.VAR)
      ? h.flags & (HF.GRAPH | HF.PERCENT | HF.BUCKET | HF.LOG2)
      : h.flags & (HF.BUCKET | HF.LOG2 | HF.SYM | HF.SYM_OFFSET | HF.SYSCALL | HF.STACKTRACE);
    if (bad) {
      this.env.errors.err(this.tr, 'BAD_FIELD_MODIFIER', this.env.errors.pos(fieldStr));
      throw new HistParseError();
    }
    this.fields[idx] = h;
    this.nVals++;
  }

  private createVarFields(): void {
    let j = this.nVals;
    for (const d of this.attrs.varDefs) {
      if (this.findVar(d.name) && !this.remove) {
        this.env.errors.err(this.tr, 'DUPLICATE_VAR', this.env.errors.pos(d.name));
        throw new HistParseError();
      }
      this.nVars++;
      if (this.nVars > TRACING_MAP_VARS_MAX) throw new HistParseError();
      const idx = j++;
      this.createValField(idx, d.expr, HF.VAR, d.name);
      const h = this.fields[idx]!;
      if (h.has(HF.EXECNAME)) {
        // a variable of common_pid.execname holds the comm
        h.flags = HF.STRING | HF.VAR | HF.EXECNAME;
        h.size = MAX_FILTER_STR_VAL;
        h.isSigned = false;
        h.type = 'char[]';
        h.fn = 'execname';
      }
      if (!h.has(HF.ALIAS) && h.flags & (HF.STRING | HF.STACKTRACE)) h.varStrIdx = this.nVarStr++;
    }
  }

  private createKeyFields(): void {
    const parts = this.attrs.keys!.split(',');
    let offset = 0;
    const n = Math.min(parts.length, TRACING_MAP_KEYS_MAX);
    for (let k = 0; k < n; k++) {
      const fieldStr = parts[k]!;
      let h: HistField;
      let keySize: number;
      if (fieldStr === 'stacktrace') {
        h = createHistField(this, undefined, HF.KEY | HF.STACKTRACE);
        keySize = 31 * 8;
      } else {
        h = parseExpr(this, fieldStr, HF.KEY, undefined, { v: 0 });
        if (fieldHasHistVars(h)) {
          this.env.errors.err(this.tr, 'INVALID_REF_KEY', this.env.errors.pos(fieldStr));
          throw new HistParseError();
        }
        keySize = h.size;
      }
      keySize = Math.ceil(keySize / 8) * 8;
      h.size = keySize;
      h.offset = offset;
      this.fields.push(h);
      offset += keySize;
      this.keySize += keySize;
      if (this.keySize > HIST_KEY_SIZE_MAX) throw new HistParseError();
      this.nKeys++;
    }
    if (parts.length > TRACING_MAP_KEYS_MAX) throw new HistParseError();
  }

  /** The value fields (hitcount, values, variables), and the key fields. */
  get valFields(): HistField[] {
    return this.fields.slice(0, this.nVals);
  }

  get keyFields(): HistField[] {
    return this.fields.slice(this.nVals);
  }

  // ------------------------------------------------------------------ sort keys

  /** create_sort_keys(). */
  createSortKeys(): void {
    const { errors } = this.env;
    const tr = this.tr;
    this.sortKeys = [{ fieldIdx: 0, descending: false }];
    const str = this.attrs.sort;
    if (str === undefined) return;
    const parts = str.split(',');
    const keys: SortKey[] = [];
    const descending = (mod: string | undefined): boolean => {
      if (mod === undefined || mod === 'ascending') return false;
      if (mod === 'descending') return true;
      errors.err(tr, 'INVALID_SORT_MODIFIER', errors.pos(mod));
      throw new HistParseError();
    };
    for (let i = 0; i < TRACING_MAP_SORT_KEYS_MAX && i < parts.length; i++) {
      const fieldStr = parts[i]!;
      if (!fieldStr) {
        errors.err(tr, 'EMPTY_SORT_FIELD', errors.pos('sort='));
        throw new HistParseError();
      }
      if (i === TRACING_MAP_SORT_KEYS_MAX - 1 && parts.length > TRACING_MAP_SORT_KEYS_MAX) {
        errors.err(tr, 'TOO_MANY_SORT_FIELDS', errors.pos('sort='));
        throw new HistParseError();
      }
      const dot = fieldStr.indexOf('.');
      const name = dot < 0 ? fieldStr : fieldStr.slice(0, dot);
      const mod = dot < 0 ? undefined : fieldStr.slice(dot + 1);
      if (!name) {
        errors.err(tr, 'EMPTY_SORT_FIELD', errors.pos('sort='));
        throw new HistParseError();
      }
      if (name === 'hitcount') {
        keys[i] = { fieldIdx: 0, descending: descending(mod) };
        continue;
      }
      let found = false;
      for (let j = 1, k = 1; j < this.fields.length; j++) {
        const h = this.fields[j]!;
        if (h.has(HF.VAR)) continue;
        const idx = k++;
        if (histFieldName(h, 0) === name) {
          keys[i] = { fieldIdx: idx, descending: descending(mod) };
          found = true;
          break;
        }
      }
      if (!found) {
        errors.err(tr, 'INVALID_SORT_FIELD', errors.pos(name));
        throw new HistParseError();
      }
    }
    this.sortKeys = keys.length ? keys : this.sortKeys;
  }

  // ------------------------------------------------------------------ map

  /** tracing_map_create() + create_tracing_map_fields(). */
  createMap(bits: number): void {
    this.map = new TracingMap(bits, this.keySize);
    this.savesComm = this.fields.some((h) => h.has(HF.EXECNAME));
    for (const h of this.fields) {
      if (h.has(HF.KEY)) {
        let cmp: KeyCmp;
        if (h.has(HF.STACKTRACE)) cmp = { kind: 'none' };
        else if (h.has(HF.COMM) || (h.field && isStringField(h.field) && h.field.filterType !== 'ptr_string')) cmp = { kind: 'string' };
        else if (!h.field || h.has(HF.CPU)) cmp = { kind: 'num', size: h.size, signed: h.isSigned };
        else cmp = { kind: 'num', size: h.field.size, signed: h.field.signed };
        this.map.addKeyField(h.offset, cmp);
      } else if (!h.has(HF.VAR)) this.map.addSumField();
      if (h.has(HF.VAR)) {
        h.varIdx = this.map.addVar();
        h.varHist = this;
      }
    }
  }

  /** Whether a new element records its task's comm (an `.execname` field). */
  savesComm = false;

  /** A variable made later (field variables, onmax/onchange tracking), on this map. */
  createVar(name: string, size: number, type: string): HistField | undefined {
    if (this.findVar(name) && !this.remove) return undefined;
    const v = createHistField(this, undefined, HF.VAR, name);
    v.flags = HF.VAR;
    v.varIdx = this.map.addVar();
    v.varHist = this;
    v.size = size;
    v.type = type;
    return v;
  }

  // ------------------------------------------------------------------ variables

  /** find_var_field(): a variable of this trigger by name. */
  findVarField(name: string): HistField | undefined {
    return this.fields.find((h) => h.has(HF.VAR) && h.varName === name);
  }

  /** find_var(): here, or in any hist trigger on the same event. */
  findVar(name: string): HistField | undefined {
    return this.findVarField(name) ?? this.findFileVar(this.file, name);
  }

  private findFileVar(file: EventFile, name: string): HistField | undefined {
    for (const h of this.env.histsOn(file)) {
      const v = h.findVarField(name);
      if (v) return v;
    }
    return undefined;
  }

  /** find_var_file(): the event a variable is on (named, or the only trigger defining it). */
  private findVarFile(system: string | undefined, event: string | undefined, name: string): EventFile | undefined | null {
    if (system) return this.env.findFile(this.tr, system, event);
    let found: EventFile | undefined;
    for (const h of this.env.histVars(this.tr)) {
      if (h.file === found) continue;
      if (h.findVarField(name)) {
        if (found) {
          this.env.errors.err(this.tr, 'VAR_NOT_UNIQUE', this.env.errors.pos(name));
          return null;
        }
        found = h.file;
      }
    }
    return found;
  }

  /** find_match_var(): on the events this trigger's onmatch() handlers name. */
  private findMatchVar(name: string): HistField | undefined | null {
    let found: HistField | undefined;
    for (const a of this.actions) {
      if (a.handler !== 'onmatch') continue;
      const file = this.findVarFile(a.matchSystem, a.matchEvent, name);
      if (!file) continue;
      const v = this.findFileVar(file, name);
      if (v) {
        if (found) {
          this.env.errors.err(this.tr, 'VAR_NOT_UNIQUE', this.env.errors.pos(name));
          return null;
        }
        found = v;
      }
    }
    return found;
  }

  /** find_event_var(). */
  findEventVar(system: string | undefined, event: string | undefined, name: string): HistField | undefined {
    if (!system || !event) {
      const v = this.findMatchVar(name);
      if (v === null) return undefined;
      if (v) return v;
    }
    const file = this.findVarFile(system, event, name);
    if (!file) return undefined;
    return this.findFileVar(file, name);
  }

  /** find_target_event_var(): a variable of this trigger, if the system and event (when given) are its own. */
  findTargetEventVar(system: string | undefined, event: string | undefined, name: string): HistField | undefined {
    if (system) {
      if (!event) return undefined;
      if (system !== this.file.type.system || event !== this.file.type.name) return undefined;
    }
    return this.findVarField(name);
  }

  /** has_hist_vars(). */
  hasHistVars(): boolean {
    return this.fields.some((h) => fieldHasHistVars(h));
  }

  /** check_var_refs(): another trigger reads one of this trigger's variables. */
  varsReferenced(): boolean {
    for (const h of this.fields) {
      if (!h.has(HF.VAR)) continue;
      for (const other of this.env.histVars(this.tr)) {
        if (other === this) continue;
        if (other.varRefs.some((r) => r.varIdx === h.varIdx && r.varHist === this)) return true;
      }
    }
    return false;
  }
}
