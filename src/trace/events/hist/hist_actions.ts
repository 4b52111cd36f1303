/**
 * What a hist trigger does beyond counting (handlers and actions):
 * onmatch(sys.event) — the other event's variables for this key are all set
 * — and onmax($v) / onchange($v) — a tracked variable reached a new maximum
 * or changed — each followed by one action: trace(synth,params) or
 * synth(params), save(fields), snapshot().
 */
import type { SynthEvent, SynthField } from '../../dynevent/trace_events_synth.js';
import type { EventFile } from '../event_file.js';
import { createVarRef, HistParseError, parseAtom } from './hist_expr.js';
import type { FieldVar, HistData } from './hist_data.js';
import { HF, type HistField } from './hist_field.js';

/** SYNTH_FIELDS_MAX. */
const SYNTH_FIELDS_MAX = 64;

type Handler = 'onmatch' | 'onmax' | 'onchange';
type Action = 'trace' | 'save' | 'snapshot';

export interface ActionData {
  handler: Handler;
  action: Action;
  actionName: string;
  params: string[];
  useTraceKeyword: boolean;
  synthEventName?: string;
  /** Per param: the var_ref_vals index its value comes from. */
  varRefIdx: number[];
  synth?: SynthEvent;
  matchSystem?: string;
  matchEvent?: string;
  /** onmax / onchange: the variable as written ($v), its reference, the hidden variable holding the max. */
  varStr?: string;
  varRef?: HistField;
  trackVar?: HistField;
}

/** What the actions need of the rest of the system. */
export interface ActionEnv {
  /** The synthetic event of a name (find_synth_event). */
  findSynth(name: string): SynthEvent | undefined;
  /** Another trigger made on another event (create_field_var_hist): parse `cmd` as a `hist` trigger there. */
  createFieldVarHist(hd: HistData, file: EventFile, cmd: string): HistData | undefined;
}

const fail = (): never => {
  throw new HistParseError();
};

/** parse_action_params(). */
function parseParams(hd: HistData, params: string, data: ActionData): void {
  const { errors } = hd.env;
  let first = true;
  for (const raw of params.split(',')) {
    if (data.params.length >= SYNTH_FIELDS_MAX) {
      errors.err(hd.tr, 'TOO_MANY_PARAMS', 0);
      fail();
    }
    const p = raw.trim();
    if (p.length < 2) {
      errors.err(hd.tr, 'INVALID_PARAM', errors.pos(p));
      fail();
    }
    if (first && data.useTraceKeyword) {
      data.synthEventName = p;
      first = false;
      continue;
    }
    first = false;
    data.params.push(p);
  }
}

/** action_parse(): `.action(params)` after a handler. */
function actionParse(hd: HistData, str: string, data: ActionData): void {
  const { errors } = hd.env;
  const dot = str.indexOf('.');
  if (dot < 0) {
    errors.err(hd.tr, 'ACTION_NOT_FOUND', 0);
    fail();
  }
  const rest = str.slice(dot + 1);
  const open = rest.indexOf('(');
  if (open < 0) {
    errors.err(hd.tr, 'ACTION_NOT_FOUND', 0);
    fail();
  }
  const name = rest.slice(0, open);
  const after = rest.slice(open + 1);
  const close = after.indexOf(')');
  const params = close < 0 ? after : after.slice(0, close);
  const tracking = data.handler === 'onmax' || data.handler === 'onchange';
  if (name.startsWith('save')) {
    if (!tracking) {
      parseParams(hd, params, data);
      errors.err(hd.tr, 'ACTION_MISMATCH', errors.pos(name));
      fail();
    }
    parseParams(hd, params, data);
    data.action = 'save';
  } else if (name.startsWith('snapshot')) {
    if (close < 0) {
      errors.err(hd.tr, 'NO_CLOSING_PAREN', errors.pos(params));
      fail();
    }
    if (!tracking) {
      errors.err(hd.tr, 'ACTION_MISMATCH', errors.pos(name));
      fail();
    }
    data.action = 'snapshot';
  } else {
    if (name.startsWith('trace')) data.useTraceKeyword = true;
    parseParams(hd, params, data);
    data.action = 'trace';
  }
  data.actionName = name;
}

function newAction(handler: Handler): ActionData {
  return { handler, action: 'trace', actionName: '', params: [], useTraceKeyword: false, varRefIdx: [] };
}

/** parse_actions(): onmatch(sys.event).action(...), onmax($v).action(...), onchange($v).action(...). */
export function parseActions(hd: HistData): void {
  const { errors } = hd.env;
  for (const str of hd.attrs.actions) {
    const handler: Handler = str.startsWith('onmatch(') ? 'onmatch' : str.startsWith('onmax(') ? 'onmax' : 'onchange';
    const body = str.slice(handler.length + 1);
    const data = newAction(handler);
    const close = body.indexOf(')');
    if (handler === 'onmatch') {
      const matchEvent = close < 0 ? body : body.slice(0, close);
      if (close < 0) {
        errors.err(hd.tr, 'NO_CLOSING_PAREN', errors.pos(matchEvent));
        fail();
      }
      const dot = matchEvent.indexOf('.');
      if (dot < 0) {
        errors.err(hd.tr, 'SUBSYS_NOT_FOUND', errors.pos(matchEvent));
        fail();
      }
      const system = matchEvent.slice(0, dot);
      const event = matchEvent.slice(dot + 1);
      if (!hd.env.findFile(hd.tr, system, event)) {
        errors.err(hd.tr, 'INVALID_SUBSYS_EVENT', errors.pos(event));
        fail();
      }
      data.matchSystem = system;
      data.matchEvent = event;
    } else {
      if (close < 0) fail();
      data.varStr = body.slice(0, close);
    }
    actionParse(hd, body.slice(close + 1), data);
    hd.actions.push(data);
  }
}

// ------------------------------------------------------------------ creation (after the fields exist)

/** create_field_var(): a variable of this trigger holding a field of its event. */
function createFieldVar(hd: HistData, name: string): FieldVar {
  const { errors } = hd.env;
  if (hd.fieldVars.length >= SYNTH_FIELDS_MAX) {
    errors.err(hd.tr, 'TOO_MANY_FIELD_VARS', errors.pos(name));
    fail();
  }
  let val: HistField;
  try {
    val = parseAtom(hd, name, { v: HF.VAR });
  } catch (e) {
    errors.err(hd.tr, 'FIELD_VAR_PARSE_FAIL', errors.pos(name));
    throw e;
  }
  const v = hd.createVar(name, val.size, val.type);
  if (!v) {
    errors.err(hd.tr, 'VAR_CREATE_FIND_FAIL', errors.pos(name));
    fail();
  }
  v!.flags |= val.flags & HF.STACKTRACE;
  return { var: v!, val };
}

/** create_target_field_var(): a field of this trigger's own event (system and event, if given, must be its own). */
function createTargetFieldVar(hd: HistData, system: string | undefined, event: string | undefined, name: string): FieldVar | undefined {
  if (system) {
    if (!event) return undefined;
    if (system !== hd.file.type.system || event !== hd.file.type.name) return undefined;
  }
  return createFieldVar(hd, name);
}

function saveFieldVar(hd: HistData, fv: FieldVar): void {
  hd.fieldVars.push(fv);
  if (fv.val.flags & (HF.STRING | HF.STACKTRACE)) hd.nFieldVarStr++;
}

/** create_field_var_hist(): a trigger on the other event, with the same keys as one already there, holding `synthetic_<field>`. */
function createFieldVarHist(hd: HistData, env: ActionEnv, system: string | undefined, event: string | undefined, field: string): HistField | undefined {
  const { errors } = hd.env;
  if (hd.fieldVarHists.length >= SYNTH_FIELDS_MAX) {
    errors.err(hd.tr, 'TOO_MANY_FIELD_VARS', errors.pos(field));
    return undefined;
  }
  const file = hd.env.findFile(hd.tr, system, event);
  if (!file) {
    errors.err(hd.tr, 'EVENT_FILE_NOT_FOUND', errors.pos(field));
    return undefined;
  }
  const nKeys = hd.nKeys;
  const compatible = hd.env.histsOn(file).find((other) => {
    if (other.nKeys !== nKeys) return false;
    return hd.keyFields.every((k, i) => {
      const o = other.keyFields[i]!;
      return k.type === o.type && k.size === o.size && k.isSigned === o.isSigned;
    });
  });
  if (!compatible) {
    errors.err(hd.tr, 'HIST_NOT_FOUND', errors.pos(field));
    return undefined;
  }
  const existing = hd.findEventVar(system, event, `synthetic_${field}`);
  if (existing) return existing;
  let cmd = `keys=${compatible.keyFields.map((k) => k.field?.name ?? '').join(',')}:synthetic_${field}=${field}`;
  const filter = compatible.filterStr;
  if (filter !== undefined) cmd += ` if ${filter}`;
  const made = env.createFieldVarHist(hd, file, cmd);
  if (!made) {
    errors.err(hd.tr, 'HIST_CREATE_FAIL', errors.pos(field));
    return undefined;
  }
  const v = hd.findEventVar(system, event, `synthetic_${field}`);
  if (!v) {
    errors.err(hd.tr, 'SYNTH_VAR_NOT_FOUND', errors.pos(field));
    return undefined;
  }
  hd.fieldVarHists.push({ hist: compatible, cmd });
  return v;
}

/** check_synth_field(): a param fits the synthetic event's field at `pos`. */
function checkSynthField(fields: readonly SynthField[], h: HistField, pos: number): boolean {
  const f = fields[pos];
  if (!f) return false;
  if (h.type.includes('char[') && f.string && f.dynamic) return true;
  if (h.has(HF.STACKTRACE) !== f.stack) return false;
  if (f.stack) return true;
  const ft = f.type.replace(/^__data_loc /, '');
  if (ft !== h.type) {
    if (f.size !== h.size || (!f.string && f.signed !== h.isSigned)) return false;
  }
  return true;
}

/** trace_action_create(): each param becomes a reference to a variable (made for plain fields). */
function traceActionCreate(hd: HistData, env: ActionEnv, data: ActionData): void {
  const { errors } = hd.env;
  const name = data.useTraceKeyword ? data.synthEventName! : data.actionName;
  const synth = env.findSynth(name);
  if (!synth) {
    errors.err(hd.tr, 'SYNTH_EVENT_NOT_FOUND', errors.pos(name));
    fail();
  }
  const fields = synth!.synthFields;
  synth!.refs++;
  try {
    let pos = 0;
    data.params.forEach((param, i) => {
      let system: string | undefined;
      let event: string | undefined;
      let p = param;
      const parts = param.split('.');
      if (parts.length > 1) {
        if (parts.length < 3) fail();
        system = parts[0];
        event = parts[1];
        p = parts.slice(2).join('.');
      }
      let h: HistField | undefined;
      if (p.startsWith('$')) h = traceActionFindVar(hd, data, system, event, p);
      else {
        const fv = createTargetFieldVar(hd, system, event, p);
        if (fv) {
          saveFieldVar(hd, fv);
          h = fv.var;
        } else {
          if (!system && data.handler === 'onmatch') {
            system = data.matchSystem;
            event = data.matchEvent;
          }
          h = event ? createFieldVarHist(hd, env, system, event, p) : undefined;
        }
      }
      if (!h) fail();
      if (!checkSynthField(fields, h!, pos)) {
        errors.err(hd.tr, 'SYNTH_TYPE_MISMATCH', errors.pos(p));
        fail();
      }
      const ref = createVarRef(hd, h!, system, event);
      if (!ref) fail();
      data.varRefIdx[i] = hd.varRefs.indexOf(ref!);
      pos++;
    });
    if (pos !== fields.length) {
      errors.err(hd.tr, 'SYNTH_COUNT_MISMATCH', errors.pos(synth!.name));
      fail();
    }
    data.synth = synth;
  } catch (e) {
    synth!.refs--;
    throw e;
  }
}

/** trace_action_find_var(). */
function traceActionFindVar(hd: HistData, data: ActionData, system: string | undefined, event: string | undefined, v: string): HistField | undefined {
  const name = v.slice(1);
  let h = hd.findTargetEventVar(system, event, name);
  if (!h) {
    if (!system && data.handler === 'onmatch') {
      system = data.matchSystem;
      event = data.matchEvent;
    }
    h = hd.findEventVar(system, event, name);
  }
  if (!h) hd.env.errors.err(hd.tr, 'PARAM_NOT_FOUND', hd.env.errors.pos(name));
  return h;
}

/** action_create(). */
function actionCreate(hd: HistData, env: ActionEnv, data: ActionData): void {
  const { errors } = hd.env;
  if (data.action === 'trace') return traceActionCreate(hd, env, data);
  if (data.action === 'save') {
    if (hd.saveVars.length) {
      errors.err(hd.tr, 'TOO_MANY_SAVE_ACTIONS', 0);
      throw new HistParseError('EEXIST');
    }
    for (const p of data.params) {
      let fv: FieldVar | undefined;
      try {
        fv = createTargetFieldVar(hd, undefined, undefined, p);
      } catch (e) {
        errors.err(hd.tr, 'FIELD_VAR_CREATE_FAIL', errors.pos(p));
        throw e;
      }
      hd.saveVars.push(fv!);
      if (fv!.val.flags & (HF.STRING | HF.STACKTRACE)) hd.nSaveVarStr++;
    }
  }
}

/** create_actions(): onmatch handlers create their action; onmax/onchange first the variable they track. */
export function createActions(hd: HistData, env: ActionEnv): void {
  const { errors } = hd.env;
  for (const data of hd.actions) {
    if (data.handler === 'onmatch') {
      actionCreate(hd, env, data);
      continue;
    }
    const varStr = data.varStr ?? '';
    if (!varStr.startsWith('$')) {
      errors.err(hd.tr, 'ONX_NOT_VAR', errors.pos(varStr));
      fail();
    }
    const v = hd.findTargetEventVar(undefined, undefined, varStr.slice(1));
    if (!v) {
      errors.err(hd.tr, 'ONX_VAR_NOT_FOUND', errors.pos(varStr.slice(1)));
      fail();
    }
    const ref = createVarRef(hd, v!);
    if (!ref) throw new HistParseError('ENOMEM');
    data.varRef = ref;
    const track = hd.createVar(data.handler === 'onmax' ? '__max' : '__change', 8, 'u64');
    if (!track) {
      errors.err(hd.tr, 'ONX_VAR_CREATE_FAIL', 0);
      fail();
    }
    data.trackVar = track;
    actionCreate(hd, env, data);
  }
}

