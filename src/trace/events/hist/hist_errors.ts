/**
 * How hist triggers report a bad command: the kernel remembers the last
 * command (prefixed `hist:`) and its event (`hist:SYSTEM:EVENT`), and an
 * error names a message of its table with a caret where a piece of the
 * command first occurs in it.
 */
import type { TraceArray } from '../../trace_array.js';

/** The messages of hist trigger errors (the error_log text is ABI). */
const HIST_ERR = {
  DUPLICATE_VAR: 'Variable already defined',
  VAR_NOT_UNIQUE: 'Variable name not unique, need to use fully qualified name (subsys.event.var) for variable',
  TOO_MANY_VARS: 'Too many variables defined',
  MALFORMED_ASSIGNMENT: 'Malformed assignment',
  NAMED_MISMATCH: "Named hist trigger doesn't match existing named trigger (includes variables)",
  TRIGGER_EEXIST: 'Hist trigger already exists',
  TRIGGER_ENOENT_CLEAR: "Can't clear or continue a nonexistent hist trigger",
  SET_CLOCK_FAIL: "Couldn't set trace_clock",
  BAD_FIELD_MODIFIER: 'Invalid field modifier',
  TOO_MANY_SUBEXPR: 'Too many subexpressions (3 max)',
  TIMESTAMP_MISMATCH: "Timestamp units in expression don't match",
  TOO_MANY_FIELD_VARS: 'Too many field variables defined',
  EVENT_FILE_NOT_FOUND: 'Event file not found',
  HIST_NOT_FOUND: 'Matching event histogram not found',
  HIST_CREATE_FAIL: "Couldn't create histogram for field",
  SYNTH_VAR_NOT_FOUND: "Couldn't find synthetic variable",
  SYNTH_EVENT_NOT_FOUND: "Couldn't find synthetic event",
  SYNTH_TYPE_MISMATCH: "Param type doesn't match synthetic event field type",
  SYNTH_COUNT_MISMATCH: "Param count doesn't match synthetic event field count",
  FIELD_VAR_PARSE_FAIL: "Couldn't parse field variable",
  VAR_CREATE_FIND_FAIL: "Couldn't create or find variable",
  ONX_NOT_VAR: 'For onmax(x) or onchange(x), x must be a variable',
  ONX_VAR_NOT_FOUND: "Couldn't find onmax or onchange variable",
  ONX_VAR_CREATE_FAIL: "Couldn't create onmax or onchange variable",
  FIELD_VAR_CREATE_FAIL: "Couldn't create field variable",
  TOO_MANY_PARAMS: 'Too many action params',
  PARAM_NOT_FOUND: "Couldn't find param",
  INVALID_PARAM: 'Invalid action param',
  ACTION_NOT_FOUND: 'No action found',
  NO_SAVE_PARAMS: 'No params found for save()',
  TOO_MANY_SAVE_ACTIONS: "Can't have more than one save() action per hist",
  ACTION_MISMATCH: "Handler doesn't support action",
  NO_CLOSING_PAREN: 'No closing paren found',
  SUBSYS_NOT_FOUND: 'Missing subsystem',
  INVALID_SUBSYS_EVENT: 'Invalid subsystem or event name',
  INVALID_REF_KEY: 'Using variable references in keys not supported',
  VAR_NOT_FOUND: "Couldn't find variable",
  FIELD_NOT_FOUND: "Couldn't find field",
  EMPTY_ASSIGNMENT: 'Empty assignment',
  INVALID_SORT_MODIFIER: 'Invalid sort modifier',
  EMPTY_SORT_FIELD: 'Empty sort field',
  TOO_MANY_SORT_FIELDS: 'Too many sort fields (Max = 2)',
  INVALID_SORT_FIELD: 'Sort field must be a key or a val',
  INVALID_STR_OPERAND: 'String type can not be an operand in expression',
  EXPECT_NUMBER: 'Expecting numeric literal',
  UNARY_MINUS_SUBEXPR: 'Unary minus not supported in sub-expressions',
  DIVISION_BY_ZERO: 'Division by zero',
  NEED_NOHC_VAL: "Non-hitcount value is required for 'nohitcount'",
} as const;

type HistErrType = keyof typeof HIST_ERR;

/** The last hist command (last_cmd / last_cmd_loc), shared by every trace array as in the kernel. */
export class HistErrors {
  private lastCmd: string | undefined;
  private lastLoc = '';

  constructor(private readonly log: (tr: TraceArray, loc: string, cmd: string, pos: number, msg: string) => void) {}

  /** last_cmd_set(): the command (without `hist:`) and its event. */
  set(str: string, system?: string, event?: string): void {
    this.lastCmd = `hist:${str}`;
    if (system && event) this.lastLoc = `hist:${system}:${event}`;
  }

  clear(): void {
    if (this.lastCmd !== undefined) this.lastCmd = '';
    this.lastLoc = '';
  }

  /** errpos(): where `piece` first occurs in the last command (0 if nowhere). */
  pos(piece: string | undefined): number {
    if (!piece || !this.lastCmd) return 0;
    const i = this.lastCmd.indexOf(piece);
    return i < 0 ? 0 : i;
  }

  /** hist_err(). */
  err(tr: TraceArray, type: HistErrType, pos: number): void {
    if (this.lastCmd === undefined) return;
    this.log(tr, this.lastLoc, this.lastCmd, pos, HIST_ERR[type]);
  }
}
