/**
 * set_event and the enable files: selecting events by "system:event",
 * "event" or "system" (exact names, "*" or empty for any), enabling or
 * disabling them in one trace array, and the `:mod:NAME` requests 7.2 keeps
 * for modules not loaded yet (ftrace_set_clr_event and friends).
 */
import { fail } from '../../kernel/errno.js';
import { EVENT_FL_IGNORE_ENABLE, EVENT_FL_NO_REG, type TraceEventType } from '../event_type.js';
import type { ArrayEvents } from './array_events.js';

/** A cached `:mod:` request: shown in set_event until the module loads or it is removed. */
export interface ModRequest {
  module: string;
  match?: string;
  system?: string;
  event?: string;
}

interface EventSelector {
  /** A system or an event name (the word had no ':'). */
  match?: string;
  system?: string;
  event?: string;
  module?: string;
}

/** Parses one set_event word (without its leading '!'). */
export function parseSelector(word: string, allowMod: boolean): EventSelector {
  let buf = word;
  let module: string | undefined;
  const m = allowMod ? buf.indexOf(':mod:') : -1;
  if (m >= 0) {
    module = buf.slice(m + 5);
    buf = buf.slice(0, m);
  }
  const colon = buf.indexOf(':');
  if (colon >= 0) {
    let system: string | undefined = buf.slice(0, colon);
    let event: string | undefined = buf.slice(colon + 1);
    if (!system || system === '*') system = undefined;
    if (!event || event === '*') event = undefined;
    return { system, event, module };
  }
  let match: string | undefined = buf;
  if (module !== undefined && (!match || match === '*')) match = undefined;
  return { match, module };
}

/** Whether set_event / enable files may switch this event (not the ftrace internal ones). */
export function canEnable(t: TraceEventType): boolean {
  const f = t.flags ?? (t.system === 'ftrace' ? EVENT_FL_IGNORE_ENABLE : 0);
  return (f & (EVENT_FL_IGNORE_ENABLE | EVENT_FL_NO_REG)) === 0;
}

function selects(sel: EventSelector, t: TraceEventType): boolean {
  if (sel.match !== undefined && sel.match !== t.name && sel.match !== t.system) return false;
  if (sel.system !== undefined && sel.system !== t.system) return false;
  if (sel.event !== undefined && sel.event !== t.name) return false;
  return true;
}

/**
 * __ftrace_set_clr_event(): enables or disables every matching event; EINVAL
 * if none matched (the first failure's errno otherwise). A `:mod:` request
 * for a module that has no events is cached (7.2).
 */
export function setClearEvents(ae: ArrayEvents, sel: EventSelector, set: boolean): void {
  let matched = false;
  let firstErr: unknown;
  const module = sel.module?.replace(/-/g, '_');
  for (const t of ae.events.types()) {
    // Module requests only match events of that module; built-in events have none.
    if (module !== undefined && ae.events.moduleOf(t) !== module) continue;
    if (!canEnable(t)) continue;
    if (!selects(sel, t)) continue;
    matched = true;
    try {
      ae.file(t).enableDisable(set, false);
    } catch (e) {
      firstErr ??= e;
    }
  }
  if (firstErr) throw firstErr;
  if (matched) return;
  if (module !== undefined && !ae.events.moduleLoaded(module)) {
    if (set) ae.modRequests.unshift({ module, match: sel.match, system: sel.system, event: sel.event });
    else removeModRequests(ae, module, sel);
    return;
  }
  fail('EINVAL');
}

function removeModRequests(ae: ArrayEvents, module: string, sel: EventSelector): void {
  const before = ae.modRequests.length;
  ae.modRequests = ae.modRequests.filter(
    (r) =>
      !(
        r.module === module &&
        (sel.match === undefined || r.match === sel.match) &&
        (sel.system === undefined || r.system === sel.system) &&
        (sel.event === undefined || r.event === sel.event)
      ),
  );
  if (ae.modRequests.length === before) fail('EINVAL');
}

/** The set_event listing: enabled events in list order, then the cached module requests. */
export function showSetEvent(ae: ArrayEvents): string {
  let out = '';
  for (const t of ae.events.types()) {
    const f = ae.peek(t);
    if (f?.enabled && canEnable(t)) out += `${t.system}:${t.name}\n`;
  }
  for (const r of ae.modRequests) {
    if (r.match !== undefined) out += `${r.match}:mod:${r.module}\n`;
    else out += `${r.system ?? '*'}:${r.event ?? '*'}:mod:${r.module}\n`;
  }
  return out;
}

/** trace_events_enabled(): '0' all off, '1' all on, 'X' mixed, '?' none (for one system or all). */
export function enabledState(ae: ArrayEvents, system?: string): '0' | '1' | 'X' | '?' {
  let set = 0;
  for (const t of ae.events.types()) {
    if (!canEnable(t)) continue;
    if (system !== undefined && t.system !== system) continue;
    set |= ae.peek(t)?.enabled ? 2 : 1;
    if (set === 3) break;
  }
  return (['?', '0', '1', 'X'] as const)[set];
}
