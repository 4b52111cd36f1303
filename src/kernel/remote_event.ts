/**
 * The events a trace remote writes (struct remote_event): shared by the
 * writer, a module or a hypervisor, and the tracing side that reads and
 * prints them. A record is the event's struct: a u16 id header
 * (struct remote_event_hdr) then the fields, each at its natural alignment.
 */

/** A field of a remote event (re_field()): its C type as written, its size and signedness. */
interface RemoteEventField {
  type: string;
  name: string;
  size: number;
  signed: boolean;
}

/** A field's value as the printer gets it. */
export type RemoteFieldValues = Readonly<Record<string, bigint>>;

/** One REMOTE_EVENT(): its name, id, fields, print fmt and what its print() writes after the name. */
export interface RemoteEventDef {
  name: string;
  id: number;
  fields: readonly RemoteEventField[];
  /** The format file's print fmt (the RE_PRINTK() arguments stringified). */
  printFmt: string;
  /** The text after the event's name, without its newline ('' when RE_PRINTK() has no arguments). */
  show(entry: RemoteFieldValues): string;
}

/** sizeof(struct remote_event_hdr): the u16 id. */
export const REMOTE_EVENT_HDR_SIZE = 2;

/** Offsets of the fields in the record (the C struct's layout) and the record's size. */
function remoteEventLayout(ev: RemoteEventDef): { offsets: number[]; size: number } {
  let off = REMOTE_EVENT_HDR_SIZE;
  let align = 2;
  const offsets = ev.fields.map((f) => {
    off = Math.ceil(off / f.size) * f.size;
    align = Math.max(align, f.size);
    const at = off;
    off += f.size;
    return at;
  });
  return { offsets, size: Math.ceil(off / align) * align };
}

/** A record of `ev` with these field values. */
export function encodeRemoteEvent(ev: RemoteEventDef, values: RemoteFieldValues): Buffer {
  const { offsets, size } = remoteEventLayout(ev);
  const buf = Buffer.alloc(size);
  buf.writeUInt16LE(ev.id, 0);
  ev.fields.forEach((f, i) => {
    const v = BigInt.asUintN(f.size * 8, values[f.name] ?? 0n);
    for (let b = 0; b < f.size; b++) buf[offsets[i]! + b] = Number((v >> BigInt(8 * b)) & 0xffn);
  });
  return buf;
}

/** The id of a record. */
export function remoteEventId(rec: Buffer): number {
  return rec.readUInt16LE(0);
}

/** The field values of a record of `ev`. */
export function decodeRemoteEvent(ev: RemoteEventDef, rec: Buffer): RemoteFieldValues {
  const { offsets } = remoteEventLayout(ev);
  const out: Record<string, bigint> = {};
  ev.fields.forEach((f, i) => {
    let v = 0n;
    for (let b = f.size - 1; b >= 0; b--) v = (v << 8n) | BigInt(rec[offsets[i]! + b] ?? 0);
    out[f.name] = f.signed ? BigInt.asIntN(f.size * 8, v) : v;
  });
  return out;
}

/** A file a remote adds to its directory besides write_event, showing fixed text. */
interface RemoteFileDef {
  name: string;
  perm: number;
  text: string;
}

/**
 * What a trace remote is (trace_remote_register()'s name, callbacks and
 * events), for one whose writer is a simple ring buffer: its events in id
 * order, the `selftest` event its write_event file writes, and how that
 * file answers a write it cannot record.
 */
export interface TraceRemoteDef {
  /** remotes/<name>/ and events/<name>/. */
  name: string;
  events: readonly RemoteEventDef[];
  /** The event write_event writes, its one field the value written. */
  selftest: string;
  /** write_event fails with ENODEV when the event is off or the buffer not writable (else the write is dropped silently). */
  writeEventRefuses: boolean;
  /** enable_event refuses an id other than its selftest event's (EINVAL). */
  enableOnlySelftest: boolean;
  files?: readonly RemoteFileDef[];
}

/** A `selftest` event: one u64 `id`, printed as `id=N`. */
export function selftestRemoteEvent(id: number): RemoteEventDef {
  return {
    name: 'selftest',
    id,
    fields: [{ type: 'u64', name: 'id', size: 8, signed: false }],
    printFmt: '"id=%llu", REC->id',
    show: (e) => `id=${e.id}`,
  };
}
