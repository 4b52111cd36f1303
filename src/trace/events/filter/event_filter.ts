/**
 * Setting filters: an event's `filter` file, a system's `filter` file (the
 * same filter tried on each of its events), and trigger filters. A filter that
 * does not compile is kept as text with its error under it, and does not
 * filter; error_log gets an entry.
 */
import { type ErrnoName, errno, fail } from '../../../kernel/errno.js';
import { logError } from '../array_hooks.js';
import type { ArrayEvents } from '../array_events.js';
import type { EventFile } from '../event_file.js';
import { E, FILTER_ERRORS, FilterCompileError, type FilterContext, type FilterProgram, compileFilter, type ParseError } from './filter_parser.js';

const LOC = 'event filter parse error';

/** What a system's filter file shows when its filter applied. */
const DEFAULT_SYS_FILTER_MESSAGE =
  '### global filter ###\n' +
  '# Use this to set filters for multiple events.\n' +
  '# Only events with the given fields will be affected.\n' +
  '# If no events are modified, an error message will be displayed here';

function errnoOf(ret: number): ErrnoName {
  switch (ret) {
    case -errno.EPERM:
      return 'EPERM';
    case -errno.ENOENT:
      return 'ENOENT';
    case -errno.ESRCH:
      return 'ESRCH';
    default:
      return 'EINVAL';
  }
}

/** append_filter_err(): the filter text with a caret under the error and its message; logs it. */
function errorText(ae: ArrayEvents, str: string, pe: ParseError): string {
  let pos = Math.min(pe.pos, str.length);
  if (pos) pos++;
  if (pe.err > 0) {
    logError(ae.tr, LOC, str, pe.pos, FILTER_ERRORS[pe.err]);
    return `${str}\n${'^'.padStart(pos)}\nparse_error: ${FILTER_ERRORS[pe.err]}\n`;
  }
  logError(ae.tr, LOC, str, 0, FILTER_ERRORS[E.ERRNO]);
  return `${str}\nError: (${pe.err})\n`;
}

function filterContext(file: EventFile): FilterContext {
  const ev = file.owner.events;
  return {
    fields: file.type.fields,
    symbols: ev.symbols(),
    profile: ev.profile,
    isFunctionEvent: file.type.system === 'ftrace' && file.type.name === 'function',
    nrCpus: ev.nrCpus,
  };
}

/** strstrip() as apply_event_filter() uses it: trailing whitespace goes, leading stays in the text. */
function stripTrailing(s: string): string {
  return s.replace(/[\s\0]+$/, '');
}

/** apply_event_filter(): "0" clears; anything else replaces the filter, even when it fails. */
export function applyEventFilter(file: EventFile, input: string): void {
  const str = stripTrailing(input);
  if (str.trim() === '0') {
    file.filter = null;
    return;
  }
  try {
    const prog = compileFilter(str, filterContext(file));
    file.filter = { text: str, prog };
  } catch (e) {
    if (!(e instanceof FilterCompileError)) throw e;
    file.filter = { text: errorText(file.owner, str, e.pe), prog: null };
    fail(errnoOf(e.ret));
  }
}

/** apply_subsystem_event_filter(): each event of the system gets the filter, or the error why not. */
export function applySystemFilter(ae: ArrayEvents, system: string, input: string): void {
  const str = stripTrailing(input);
  const files = [...ae.events.types()].filter((t) => t.system === system).map((t) => ae.file(t));
  if (files.length === 0) fail('ENODEV');
  if (str.trim() === '0') {
    for (const f of files) f.filter = null;
    return;
  }
  for (const f of files) {
    try {
      f.filter = { text: str, prog: compileFilter(str, filterContext(f)) };
    } catch (e) {
      if (!(e instanceof FilterCompileError)) throw e;
      f.filter = { text: errorText(ae, str, { err: E.BAD_SUBSYS_FILTER, pos: 0 }), prog: null };
    }
  }
}

/** A trigger's "if FILTER": compiled for the triggering event; errors are logged, not shown. */
export function applyTriggerFilter(file: EventFile, str: string): FilterProgram {
  try {
    return compileFilter(str, filterContext(file));
  } catch (e) {
    if (!(e instanceof FilterCompileError)) throw e;
    errorText(file.owner, str, e.pe);
    fail(errnoOf(e.ret));
  }
}

/** A system's filter file: a system filter that applied keeps no text of its own. */
export function showSystemFilter(): string {
  return `${DEFAULT_SYS_FILTER_MESSAGE}\n`;
}
