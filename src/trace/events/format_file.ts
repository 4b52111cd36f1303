/** The `format` file of an event directory (event_format_fops / f_show in the kernel). */
import type { EventField, TraceEventType } from '../event_type.js';
import { COMMON_FIELDS, fieldDecl } from './field_layout.js';

function fieldLine(f: EventField): string {
  return `\tfield:${fieldDecl(f)};\toffset:${f.offset};\tsize:${f.size};\tsigned:${f.signed ? 1 : 0};\n`;
}

export function formatText(type: Pick<TraceEventType, 'name' | 'id' | 'fields' | 'printFmt'>): string {
  let s = `name: ${type.name}\nID: ${type.id}\nformat:\n`;
  for (const f of COMMON_FIELDS) s += fieldLine(f);
  s += '\n';
  for (const f of type.fields) s += fieldLine(f);
  return `${s}\nprint fmt: ${type.printFmt}\n`;
}
