/**
 * The colon-separated parts of a hist trigger (parse_hist_trigger_attrs):
 * keys=, vals=, sort=, name=, clock=, size=, the flags (pause, cont, clear,
 * nohitcount), variable assignments and actions.
 */
import { kstrtoul } from '../../probe/kstr.js';
import type { TraceArray } from '../../trace_array.js';
import { orderBase2 } from './hist_field.js';
import type { HistErrors } from './hist_errors.js';
import { TRACING_MAP_BITS_MAX, TRACING_MAP_BITS_MIN, TRACING_MAP_VARS_MAX } from './tracing_map.js';

/** HIST_ACTIONS_MAX. */
const HIST_ACTIONS_MAX = 8;

export interface HistAttrs {
  keys?: string;
  vals?: string;
  sort?: string;
  /** `name=NAME` as written (the kernel keeps the whole assignment). */
  name?: string;
  clock: string;
  pause: boolean;
  cont: boolean;
  clear: boolean;
  tsInUsecs: boolean;
  noHitcount: boolean;
  mapBits: number;
  assignments: string[];
  actions: string[];
  /** Variables parsed from the assignments: `name=expr`. */
  varDefs: { name: string; expr: string }[];
}

/** parse_map_size(): the map's bits for `size=N` (rounded up to a power of two), or undefined when out of range. */
function parseMapSize(s: string): number | undefined {
  const v = kstrtoul(s);
  if (!v.ok || v.value === 0n) return undefined;
  const bits = Number(orderBase2(v.value));
  return bits < TRACING_MAP_BITS_MIN || bits > TRACING_MAP_BITS_MAX ? undefined : bits;
}

/** Returns the attributes, or an errno (an error_log entry made where the kernel makes one). */
export function parseHistAttrs(tr: TraceArray, errors: HistErrors, triggerStr: string): HistAttrs | 'EINVAL' {
  const a: HistAttrs = { clock: 'global', pause: false, cont: false, clear: false, tsInUsecs: false, noHitcount: false, mapBits: 0, assignments: [], actions: [], varDefs: [] };
  for (const str of triggerStr.split(':')) {
    const eq = str.indexOf('=');
    if (eq >= 0) {
      if (eq === str.length - 1) {
        errors.err(tr, 'EMPTY_ASSIGNMENT', errors.pos(str));
        return 'EINVAL';
      }
      const prefix = (p: string) => (str.startsWith(p) ? str.slice(p.length) : undefined);
      let v: string | undefined;
      if ((v = prefix('key=') ?? prefix('keys=')) !== undefined) a.keys = v;
      else if ((v = prefix('val=') ?? prefix('vals=') ?? prefix('values=')) !== undefined) a.vals = v;
      else if ((v = prefix('sort=')) !== undefined) a.sort = v;
      else if (str.startsWith('name=')) a.name = str;
      else if ((v = prefix('clock=')) !== undefined) a.clock = v.trim();
      else if ((v = prefix('size=')) !== undefined) {
        const bits = parseMapSize(v);
        if (bits === undefined) return 'EINVAL';
        a.mapBits = bits;
      } else {
        if (a.assignments.length === TRACING_MAP_VARS_MAX) {
          errors.err(tr, 'TOO_MANY_VARS', errors.pos(str));
          return 'EINVAL';
        }
        a.assignments.push(str);
      }
    } else if (str === 'nohitcount' || str === 'NOHC') a.noHitcount = true;
    else if (str === 'pause') a.pause = true;
    else if (str === 'cont' || str === 'continue') a.cont = true;
    else if (str === 'clear') a.clear = true;
    else if (a.actions.length < HIST_ACTIONS_MAX && (str.startsWith('onmatch(') || str.startsWith('onmax(') || str.startsWith('onchange('))) a.actions.push(str);
    else return 'EINVAL';
  }
  if (a.keys === undefined) return 'EINVAL';
  return a;
}

/** parse_var_defs(): `name=expr[,name=expr]` of every assignment. */
export function parseVarDefs(tr: TraceArray, errors: HistErrors, a: HistAttrs): 'EINVAL' | undefined {
  const defs: { name: string; expr: string }[] = [];
  for (const assignment of a.assignments) {
    for (const fieldStr of assignment.split(',').slice(0, TRACING_MAP_VARS_MAX)) {
      const eq = fieldStr.indexOf('=');
      if (eq < 0) {
        errors.err(tr, 'MALFORMED_ASSIGNMENT', errors.pos(fieldStr));
        return 'EINVAL';
      }
      const name = fieldStr.slice(0, eq);
      if (defs.length === TRACING_MAP_VARS_MAX) {
        errors.err(tr, 'TOO_MANY_VARS', errors.pos(name));
        return 'EINVAL';
      }
      defs.push({ name, expr: fieldStr.slice(eq + 1) });
    }
  }
  a.varDefs = defs;
  return undefined;
}
