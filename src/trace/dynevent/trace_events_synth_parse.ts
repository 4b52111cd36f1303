/**
 * Parsing synthetic events (trace_events_synth.c): `s:[synthetic/]NAME FIELD[;FIELD]...`
 * through dynamic_events, `NAME FIELD[;FIELD]...` / `!NAME` through
 * synthetic_events: the field types and their sizes, into a SynthEvent
 * (trace_events_synth.ts) that then registers.
 */
import { argvSplit, isGoodName, kstrtouint, skipSpaces, strpbrk } from '../probe/kstr.js';
import type { KRet } from '../probe/parse_context.js';
import type { ErrorLogEntry } from '../probe/probe_log.js';
import type { DynEventRegistry } from './trace_dynevent.js';
import { STR_VAR_LEN_MAX, SYNTH_SYSTEM, SynthEvent, type SynthField } from './trace_events_synth.js';

const SYNTH_FIELDS_MAX = 64;

const SYNTH_ERR = {
  BAD_NAME: 'Illegal name',
  INVALID_CMD: 'Command must be of the form: <name> field[;field] ...',
  INVALID_DYN_CMD: 'Command must be of the form: s or -:[synthetic/]<name> field[;field] ...',
  EVENT_EXISTS: 'Event already exists',
  TOO_MANY_FIELDS: 'Too many fields',
  INCOMPLETE_TYPE: 'Incomplete type',
  INVALID_TYPE: 'Invalid type',
  INVALID_FIELD: 'Invalid field',
  INVALID_ARRAY_SPEC: 'Invalid array specification',
} as const;
type SynthErr = keyof typeof SYNTH_ERR;

const BASIC_SIZES: Record<string, number> = {
  s64: 8, u64: 8, s32: 4, u32: 4, s16: 2, u16: 2, s8: 1, u8: 1, char: 1, 'unsigned char': 1,
  int: 4, 'unsigned int': 4, long: 8, 'unsigned long': 8, bool: 1, pid_t: 4, gfp_t: 4,
};

/** synth_field_string_size(): `char[N]` (N <= 256, at most 3 digits), `char[]` is 0 (dynamic). */
function stringSize(type: string): number | 'EINVAL' | 'ERANGE' {
  const s = type.indexOf('char[');
  if (s < 0) return 'EINVAL';
  const start = s + 5;
  const end = type.indexOf(']');
  if (end < 0 || end < start || type.length > end + 1) return 'EINVAL';
  const len = end - start;
  if (len > 3) return 'EINVAL';
  if (len === 0) return 0;
  const r = kstrtouint(type.slice(start, end));
  if (!r.ok) return r.err === 'ERANGE' ? 'ERANGE' : 'EINVAL';
  if (r.value > BigInt(STR_VAR_LEN_MAX)) return 'EINVAL';
  return Number(r.value);
}

/** synth_field_size(): bytes, 0 for dynamic arrays and unknown types, negative for bad strings. */
function fieldSize(type: string): number | 'EINVAL' | 'ERANGE' {
  if (Object.hasOwn(BASIC_SIZES, type)) return BASIC_SIZES[type];
  if (type.includes('char[')) return stringSize(type);
  return 0;
}

/** The synthetic parser's error context: the last command, errors placed by strstr(). */
class SynthLog {
  constructor(
    private readonly cmd: string,
    private readonly sink: ErrorLogEntry[],
  ) {}
  err(type: SynthErr, pos: number): void {
    this.sink.push({ loc: 'synthetic_events', message: SYNTH_ERR[type], command: this.cmd, pos });
  }
  /** errpos(): where `s` first occurs in the command. */
  pos(s: string): number {
    const i = this.cmd.indexOf(s);
    return i < 0 ? 0 : i;
  }
}

/** parse_synth_field(): `[unsigned] TYPE NAME[ [N] ]` from argv words. */
function parseSynthField(argv: readonly string[], log: SynthLog): { field: SynthField; consumed: number } | KRet {
  let fieldType = argv[0];
  let prefix = '';
  let fieldName: string | undefined;
  let consumed: number;
  if (fieldType === 'unsigned') {
    if (argv.length < 3) {
      log.err('INCOMPLETE_TYPE', log.pos(fieldType));
      return 'EINVAL';
    }
    prefix = 'unsigned ';
    fieldType = argv[1];
    fieldName = argv[2];
    consumed = 3;
  } else {
    fieldName = argv[1];
    consumed = 2;
  }
  if (fieldName === undefined) {
    log.err('INVALID_FIELD', log.pos(fieldType));
    return 'EINVAL';
  }
  const lb = fieldName.indexOf('[');
  const array = lb >= 0 ? fieldName.slice(lb) : '';
  const name = lb >= 0 ? fieldName.slice(0, lb) : fieldName;
  if (!isGoodName(name)) {
    log.err('BAD_NAME', log.pos(fieldName));
    return 'EINVAL';
  }
  let type = prefix + fieldType + array;
  let size = fieldSize(type);
  if (typeof size === 'string') {
    if (array) log.err('INVALID_ARRAY_SPEC', log.pos(fieldName));
    else log.err('INVALID_TYPE', log.pos(fieldType));
    return 'EINVAL';
  }
  let dynamic = false;
  if (size === 0) {
    if (type.includes('char[') || type.includes('long[')) {
      type = `__data_loc ${type}`;
      dynamic = true;
      size = 8;
    } else {
      log.err('INVALID_TYPE', log.pos(fieldType));
      return 'EINVAL';
    }
  }
  const string = type.includes('char[');
  const stack = !string && type.includes('long[');
  const signed = !type.startsWith('u') && type !== 'gfp_t';
  return { field: { type, name, size, signed, string, stack, dynamic }, consumed };
}

/** __create_synth_event(). */
function createSynthEvent(name: string, rawFields: string, reg: DynEventRegistry, log: SynthLog): KRet {
  if (name === '') {
    log.err('INVALID_CMD', 0);
    return 'EINVAL';
  }
  if (!isGoodName(name)) {
    log.err('BAD_NAME', log.pos(name));
    return 'EINVAL';
  }
  if (findSynthEvent(reg, name)) {
    log.err('EVENT_EXISTS', log.pos(name));
    return 'EEXIST';
  }
  const fields: SynthField[] = [];
  for (const fieldStr of rawFields.split(';')) {
    const argv = argvSplit(fieldStr);
    if (!argv.length) continue;
    let consumed = 0;
    while (argv.length > consumed) {
      const r = parseSynthField(argv.slice(consumed), log);
      if (typeof r !== 'object') return r;
      consumed += r.consumed;
      if (fields.length === SYNTH_FIELDS_MAX) {
        log.err('TOO_MANY_FIELDS', 0);
        return 'EINVAL';
      }
      fields.push(r.field);
    }
  }
  if (!fields.length) {
    log.err('INVALID_CMD', 0);
    return 'EINVAL';
  }
  const ev = new SynthEvent(reg, name, fields, reg.env.profile.synthFieldSeparator);
  const ret = reg.registerEvent(ev);
  if (ret) return ret;
  reg.add(ev);
  return 0;
}

function findSynthEvent(reg: DynEventRegistry, name: string): SynthEvent | undefined {
  for (const ev of reg.list) if (ev instanceof SynthEvent && ev.name === name) return ev;
  return undefined;
}

/** check_command(): the part before the first `;` needs 3 words, unless it is a `!` removal. */
function checkCommand(raw: string): boolean {
  const head = raw.split(';')[0];
  if (head[0] === '!') return true;
  return argvSplit(head).length >= 3;
}

/** create_synth_event(): the `s:` command of dynamic_events. */
export function createSynthDynEvent(raw: string, reg: DynEventRegistry, sink: ErrorLogEntry[]): KRet | 'ECANCELED' {
  raw = skipSpaces(raw);
  if (raw === '') return 0;
  const log = new SynthLog(raw, sink);
  if (raw[0] !== 's' || raw[1] !== ':') return 'ECANCELED';
  let nameAt = 2;
  const sp = strpbrk(raw, ' \t');
  if (sp < 0) {
    log.err('INVALID_CMD', 0);
    return 'EINVAL';
  }
  const fields = skipSpaces(raw.slice(sp));
  if (raw.indexOf('/', nameAt) >= 0) {
    if (!raw.startsWith(`${SYNTH_SYSTEM}/`, nameAt)) {
      log.err('INVALID_DYN_CMD', 0);
      return 'EINVAL';
    }
    nameAt += SYNTH_SYSTEM.length + 1;
  }
  if (!checkCommand(raw.slice(nameAt))) {
    log.err('INVALID_CMD', 0);
    return 'EINVAL';
  }
  return createSynthEvent(raw.slice(nameAt, Math.max(nameAt, sp)), fields, reg, log);
}

/** create_or_delete_synth_event(): a line of synthetic_events. */
export function createOrDeleteSynthEvent(raw: string, reg: DynEventRegistry, sink: ErrorLogEntry[]): KRet {
  raw = skipSpaces(raw);
  if (raw === '') return 0;
  const log = new SynthLog(raw, sink);
  if (!checkCommand(raw)) {
    log.err('INVALID_CMD', 0);
    return 'EINVAL';
  }
  const sp = strpbrk(raw, ' \t');
  if (sp < 0 && raw[0] !== '!') {
    log.err('INVALID_CMD', 0);
    return 'EINVAL';
  }
  const name = sp < 0 ? raw : raw.slice(0, sp);
  if (name[0] === '!') {
    const ev = findSynthEvent(reg, name.slice(1));
    return ev ? ev.free() : 'ENOENT';
  }
  return createSynthEvent(name, skipSpaces(raw.slice(sp)), reg, log);
}
