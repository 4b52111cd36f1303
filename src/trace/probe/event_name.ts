/** `[GROUP/][EVENT]` (or `GROUP.EVENT`) as probe commands name their event (traceprobe_parse_event_name). */
import { isGoodName, isGoodSystemName } from './kstr.js';
import { MAX_EVENT_NAME_LEN } from './parse_context.js';
import type { ProbeLog } from './probe_log.js';

interface EventName {
  group?: string;
  /** Undefined for `GROUP/`: the default name applies. */
  event?: string;
}

/** Splits and checks a name; errors go to `log` at `offset` (the name's column in argv[index]). */
export function parseEventName(text: string, offset: number, log: ProbeLog): EventName | 'EINVAL' {
  let slash = text.indexOf('/');
  if (slash < 0) slash = text.indexOf('.');
  let group: string | undefined;
  let event = text;
  if (slash >= 0) {
    if (slash === 0) {
      log.err(offset, 'NO_GROUP_NAME');
      return 'EINVAL';
    }
    if (slash + 1 > MAX_EVENT_NAME_LEN) {
      log.err(offset, 'GROUP_TOO_LONG');
      return 'EINVAL';
    }
    group = text.slice(0, slash);
    if (!isGoodSystemName(group)) {
      log.err(offset, 'BAD_GROUP_NAME');
      return 'EINVAL';
    }
    event = text.slice(slash + 1);
    offset += slash + 1;
  }
  if (event.length === 0) {
    if (slash >= 0) return { group };
    log.err(offset, 'NO_EVENT_NAME');
    return 'EINVAL';
  }
  if (event.length >= MAX_EVENT_NAME_LEN) {
    log.err(offset, 'EVENT_TOO_LONG');
    return 'EINVAL';
  }
  if (!isGoodName(event)) {
    log.err(offset, 'BAD_EVENT_NAME');
    return 'EINVAL';
  }
  return { group, event };
}
