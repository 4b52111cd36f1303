/**
 * The simple trigger commands: traceon, traceoff, snapshot, stacktrace,
 * enable_event, disable_event, and enable_hist, disable_hist (which pause or
 * continue another event's hist triggers; the `hist` command is in ../hist/).
 */
import { fail } from '../../../kernel/errno.js';
import { armSnapshot, disarmSnapshot, recordStack, takeSnapshot } from '../array_hooks.js';
import type { EventFile } from '../event_file.js';
import { canEnable } from '../set_event.js';
import {
  ETT_EVENT_ENABLE,
  ETT_EVENT_HIST,
  ETT_HIST_ENABLE,
  ETT_SNAPSHOT,
  ETT_STACKTRACE,
  ETT_TRACE_ONOFF,
  newTriggerData,
  parseCount,
  printTrigger,
  registerTrigger,
  separateFilter,
  setTriggerFilter,
  type TriggerCommand,
  TriggerCommands,
  type TriggerData,
  unregisterTrigger,
} from './trigger.js';

/** What the `trigger` file lists (HIST_TRIGGERS is on in both series' configs). */
const LISTED = ['traceon', 'traceoff', 'snapshot', 'stacktrace', 'enable_event', 'disable_event', 'enable_hist', 'disable_hist', 'hist'];

/** event_trigger_parse(): the generic "[!]cmd[:count] [if filter]". */
function genericParse(this: TriggerCommand, file: EventFile, glob: string, paramAndFilter: string | undefined, reg = registerTrigger, unreg = unregisterTrigger): void {
  const { param, filter } = separateFilter(paramAndFilter, false);
  const data = newTriggerData(this, param);
  const sameType = (t: TriggerData) => t.cmd.type === this.type;
  if (glob.startsWith('!')) {
    unreg(file, sameType);
    return;
  }
  parseCount(param, data);
  setTriggerFilter(file, filter, data);
  reg(file, data, sameType);
}

function countDown(data: TriggerData): boolean {
  if (data.count === 0) return false;
  if (data.count !== -1) data.count--;
  return true;
}

function onOff(name: 'traceon' | 'traceoff', post: boolean): TriggerCommand {
  const on = name === 'traceon';
  return {
    name,
    type: ETT_TRACE_ONOFF,
    post,
    parse: genericParse,
    countFunc(data, file) {
      if (file.tr.tracingOn === on) return false;
      return countDown(data);
    },
    trigger(_data, file) {
      if (file.tr.tracingOn !== on) file.tr.tracingOn = on;
    },
    print: (data) => printTrigger(name, data),
  };
}

const snapshot: TriggerCommand = {
  name: 'snapshot',
  type: ETT_SNAPSHOT,
  post: true,
  parse(file, glob, paramAndFilter) {
    genericParse.call(
      this,
      file,
      glob,
      paramAndFilter,
      (f, data, same) => {
        armSnapshot(f.tr);
        try {
          registerTrigger(f, data, same);
        } catch (e) {
          disarmSnapshot(f.tr);
          throw e;
        }
      },
      (f, same) => {
        const d = unregisterTrigger(f, same);
        if (d) disarmSnapshot(f.tr);
        return d;
      },
    );
  },
  countFunc: (data) => countDown(data),
  trigger(_data, file, ctx) {
    takeSnapshot(file.tr, ctx);
  },
  print: (data) => printTrigger('snapshot', data),
};

const stacktrace: TriggerCommand = {
  name: 'stacktrace',
  type: ETT_STACKTRACE,
  post: true,
  parse: genericParse,
  countFunc: (data) => countDown(data),
  trigger(_data, file, ctx) {
    if (ctx) recordStack(file.tr, ctx);
  },
  print: (data) => printTrigger('stacktrace', data),
};

type EnableCommandName = 'enable_event' | 'disable_event' | 'enable_hist' | 'disable_hist';

/** event_enable_trigger_parse() and its commands: `name:system:event[:count] [if filter]`, the target kept soft-enabled. */
function enableEvent(name: EnableCommandName): TriggerCommand {
  const enable = name.startsWith('enable_');
  const hist = name.endsWith('_hist');
  const type = hist ? ETT_HIST_ENABLE : ETT_EVENT_ENABLE;
  return {
    name,
    type,
    post: false,
    parse(file, glob, paramAndFilter) {
      if (paramAndFilter === undefined) fail('EINVAL');
      const { param, filter } = separateFilter(paramAndFilter, true);
      const parts = (param ?? '').split(':');
      if (parts.length < 2) fail('EINVAL');
      const [system, event] = parts;
      const count = parts.length > 2 ? parts.slice(2).join(':') : undefined;
      const target = findTarget(file, system!, event!);
      const data = newTriggerData(this, count);
      data.target = target;
      data.enable = enable;
      const same = (t: TriggerData) => t.cmd.type === type && t.target === target;
      if (glob.startsWith('!')) {
        const d = unregisterTrigger(file, same);
        if (d) target.enableDisable(false, true);
        return;
      }
      parseCount(count, data);
      setTriggerFilter(file, filter, data);
      target.enableDisable(true, true);
      try {
        registerTrigger(file, data, same);
      } catch (e) {
        target.enableDisable(false, true);
        throw e;
      }
    },
    countFunc(data) {
      if (data.count === 0) return false;
      // Nothing to do if the event is already in the state this trigger wants (event_enable_count_func).
      if (!hist && data.enable === !data.target!.softDisabled) return false;
      if (data.count !== -1) data.count--;
      return true;
    },
    trigger(data) {
      if (!hist) {
        data.target!.softDisabled = !data.enable;
        return;
      }
      for (const t of data.target!.triggers) if (t.cmd.type === ETT_EVENT_HIST) t.paused = !data.enable;
    },
    print(data) {
      const t = data.target!.type;
      return printTrigger(`${name}:${t.system}:${t.name}`, data);
    },
    // hist_enable_unreg_all(): an O_TRUNC open of `trigger` drops enable_hist/disable_hist (not enable_event)
    unregAll: hist
      ? (file) => {
          const mine = (t: TriggerData) => t.cmd.type === type;
          let d: TriggerData | undefined;
          while ((d = unregisterTrigger(file, mine))) d.target!.enableDisable(false, true);
        }
      : undefined,
  };
}

function findTarget(file: EventFile, system: string, event: string): EventFile {
  const type = file.owner.events.find(system, event);
  if (!type || !canEnable(type)) fail('EINVAL');
  return file.owner.file(type);
}

export function standardTriggerCommands(): TriggerCommands {
  const cmds = new TriggerCommands(LISTED);
  // traceoff runs after the record is committed (a post trigger), so the event that stops tracing is kept.
  cmds.register(onOff('traceon', false));
  cmds.register(onOff('traceoff', true));
  cmds.register(snapshot);
  cmds.register(stacktrace);
  cmds.register(enableEvent('enable_event'));
  cmds.register(enableEvent('disable_event'));
  cmds.register(enableEvent('enable_hist'));
  cmds.register(enableEvent('disable_hist'));
  return cmds;
}
