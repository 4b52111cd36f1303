/**
 * Event triggers (trace_events_trigger.c): commands written to an event's
 * `trigger` file that run when the event fires — with an optional count and
 * filter — and how they are listed, added, removed and called.
 */
import type { ExecContext } from '../../../kernel/context.js';
import { fail } from '../../../kernel/errno.js';
import type { EventFile } from '../event_file.js';
import { applyTriggerFilter } from '../filter/event_filter.js';
import type { FilterProgram } from '../filter/filter_parser.js';
import { runFilter } from '../filter/filter_parser.js';

/** enum event_trigger_type bits. */
export const ETT_TRACE_ONOFF = 1 << 0;
export const ETT_SNAPSHOT = 1 << 1;
export const ETT_STACKTRACE = 1 << 2;
export const ETT_EVENT_ENABLE = 1 << 4;
export const ETT_EVENT_HIST = 1 << 5;
export const ETT_HIST_ENABLE = 1 << 6;
export const ETT_EVENT_EPROBE = 1 << 7;

export interface TriggerData {
  cmd: TriggerCommand;
  /** Fires left; -1 for unlimited. */
  count: number;
  /** Has a count (EVENT_TRIGGER_FL_COUNT): the command's count check runs first. */
  counted: boolean;
  filterStr?: string;
  filter?: FilterProgram;
  paused: boolean;
  /** enable_event / disable_event: the event switched, and to which state. */
  target?: EventFile;
  enable?: boolean;
}

/** A trigger command (struct event_command). */
export interface TriggerCommand {
  name: string;
  type: number;
  /** EVENT_CMD_FL_POST_TRIGGER: runs after the record is committed. */
  post: boolean;
  /** Parses `glob` ("name" or "!name") with what followed it, and (un)registers. */
  parse(file: EventFile, glob: string, paramAndFilter: string | undefined): void;
  /** Whether to fire now, counting down (count_func). */
  countFunc(data: TriggerData, file: EventFile): boolean;
  trigger(data: TriggerData, file: EventFile, ctx: ExecContext | undefined): void;
  print(data: TriggerData): string;
  /** EVENT_CMD_FL_NEEDS_REC: runs with the record (event probes). */
  needsRec?: boolean;
  /** Not a user's trigger: the `trigger` file does not show it (event probes' hooks). */
  hidden?: boolean;
  /** unreg_all: what an O_TRUNC open of the `trigger` file removes of this command's triggers (hist ones). */
  unregAll?(file: EventFile): void;
}

/** A trigger's command with the record it fired with (EVENT_CMD_FL_NEEDS_REC commands). */
export interface RecTriggerCommand extends TriggerCommand {
  triggerRec(data: TriggerData, file: EventFile, ctx: ExecContext, rec: Buffer): void;
}

/** Every trigger command, in the order they were registered. */
export class TriggerCommands {
  private readonly cmds: TriggerCommand[] = [];

  constructor(
    /** Names the `trigger` file lists (the kernel's, hist ones included, even before they are implemented). */
    readonly listed: readonly string[],
  ) {}

  /** Every command (an O_TRUNC open of `trigger` calls their unreg_all). */
  all(): readonly TriggerCommand[] {
    return this.cmds;
  }

  register(cmd: TriggerCommand): void {
    if (this.cmds.some((c) => c.name === cmd.name)) fail('EBUSY');
    this.cmds.push(cmd);
  }

  get(name: string): TriggerCommand | undefined {
    return this.cmds.find((c) => c.name === name);
  }
}

function runTrigger(data: TriggerData, file: EventFile, ctx: ExecContext | undefined, rec?: Buffer | null): void {
  if (data.counted && !data.cmd.countFunc(data, file)) return;
  if (data.cmd.needsRec) {
    // eprobe_trigger_func(): nothing to do without the record
    if (rec && ctx) (data.cmd as RecTriggerCommand).triggerRec(data, file, ctx, rec);
    return;
  }
  data.cmd.trigger(data, file, ctx);
}

/**
 * event_triggers_call(): with no record, every trigger runs; with one, the
 * filtered ones run if it matches and post triggers are returned for later.
 */
export function callTriggers(file: EventFile, rec: Buffer | null, ctx: ExecContext): number {
  let tt = 0;
  for (const data of [...file.triggers]) {
    if (data.paused) continue;
    if (!rec) {
      runTrigger(data, file, ctx);
      continue;
    }
    if (data.filter && !runFilter(data.filter, file.filterInput(rec, ctx))) continue;
    if (data.cmd.post) {
      tt |= data.cmd.type;
      continue;
    }
    runTrigger(data, file, ctx, rec);
  }
  return tt;
}

/** event_triggers_post_call(). */
export function callPostTriggers(file: EventFile, tt: number, ctx: ExecContext): void {
  for (const data of [...file.triggers]) {
    if (data.paused) continue;
    if (data.cmd.type & tt) runTrigger(data, file, ctx);
  }
}

/** trigger_process_regex(): "[!]cmd[:param] [if filter]". */
export function processTrigger(file: EventFile, input: string): void {
  const buff = input.trim();
  const m = /[: \t]/.exec(buff);
  let command = m ? buff.slice(0, m.index) : buff;
  let next: string | undefined = m ? buff.slice(m.index + 1).replace(/^\s+/, '') : undefined;
  if (next === '') next = undefined;
  const glob = command;
  if (command.startsWith('!')) command = command.slice(1);
  const cmd = file.owner.events.triggerCommands.get(command);
  if (!cmd) fail('EINVAL');
  cmd.parse(file, glob, next);
}

/** The `trigger` file: the triggers, or the list of available commands when there are none. */
export function showTriggers(file: EventFile): string {
  if (!file.triggers.some((t) => !t.cmd.hidden)) return availableTriggers(file.owner.events.triggerCommands);
  return file.triggers.filter((t) => !t.cmd.hidden).map((t) => t.cmd.print(t)).join('');
}

/** What a trigger file with no visible trigger shows: the commands it takes. */
export function availableTriggers(commands: TriggerCommands): string {
  return `# Available triggers:\n#${commands.listed.map((n) => ` ${n}`).join('')}\n`;
}

/** The common "name:count if filter" line. */
export function printTrigger(name: string, data: TriggerData): string {
  const count = data.count === -1 ? ':unlimited' : `:count=${data.count}`;
  return `${name}${count}${data.filterStr !== undefined ? ` if ${data.filterStr}` : ''}\n`;
}

/** event_trigger_separate_filter(): "[n] [if filter]" (param required or optional). */
export function separateFilter(paramAndFilter: string | undefined, paramRequired: boolean): { param?: string; filter?: string } {
  if (paramAndFilter === undefined) {
    if (paramRequired) fail('EINVAL');
    return {};
  }
  if (!paramRequired && !/^[0-9]/.test(paramAndFilter)) return { filter: paramAndFilter };
  const m = /[ \t]/.exec(paramAndFilter);
  if (!m) return { param: paramAndFilter };
  const filter = paramAndFilter.slice(m.index + 1).replace(/^\s+/, '');
  return { param: paramAndFilter.slice(0, m.index), filter: filter === '' ? undefined : filter };
}

/** event_trigger_parse_num(): the count before any further ':'. */
export function parseCount(param: string | undefined, data: TriggerData): void {
  if (param === undefined) return;
  const number = param.split(':')[0];
  if (!number) fail('EINVAL');
  let v: bigint;
  if (/^0[xX][0-9a-fA-F]+$/.test(number)) v = BigInt(number);
  else if (/^0[0-7]*$/.test(number)) v = number.length > 1 ? BigInt('0o' + number.slice(1)) : 0n;
  else if (/^[1-9][0-9]*$/.test(number)) v = BigInt(number);
  else fail('EINVAL');
  if (v >= 1n << 64n) fail('ERANGE');
  data.count = Number(BigInt.asIntN(64, v));
}

/** set_trigger_filter(): "if FILTER", compiled for the triggering event. */
export function setTriggerFilter(file: EventFile, filterStr: string | undefined, data: TriggerData): void {
  if (filterStr === undefined) return;
  const m = /[ \t]/.exec(filterStr);
  const word = m ? filterStr.slice(0, m.index) : filterStr;
  const rest = m ? filterStr.slice(m.index + 1) : undefined;
  if (word !== 'if' || rest === undefined) fail('EINVAL');
  data.filter = applyTriggerFilter(file, rest);
  data.filterStr = rest;
}

export function newTriggerData(cmd: TriggerCommand, param: string | undefined): TriggerData {
  return { cmd, count: -1, counted: param !== undefined, paused: false };
}

/** register_trigger(): one trigger per type and event; it keeps the event in trigger mode. */
export function registerTrigger(file: EventFile, data: TriggerData, same: (t: TriggerData) => boolean): void {
  if (file.triggers.some(same)) fail('EEXIST');
  file.triggers.unshift(data);
  file.updateCond();
  file.triggerModeRef(true);
}

/** try_unregister_trigger(): removes the first trigger `same` picks; false if none. */
export function unregisterTrigger(file: EventFile, same: (t: TriggerData) => boolean): TriggerData | undefined {
  const i = file.triggers.findIndex(same);
  if (i < 0) return undefined;
  const [data] = file.triggers.splice(i, 1);
  file.triggerModeRef(false);
  file.updateCond();
  return data;
}
