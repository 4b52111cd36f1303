/** All trace event types by id (common_type) and by system/name. */
import type { TraceEventType } from './event_type.js';

export class EventRegistry {
  private readonly byIdMap = new Map<number, TraceEventType>();
  private readonly byNameMap = new Map<string, TraceEventType>();

  register(type: TraceEventType): TraceEventType {
    if (this.byIdMap.has(type.id)) throw new Error(`event id ${type.id} taken`);
    this.byIdMap.set(type.id, type);
    this.byNameMap.set(`${type.system}/${type.name}`, type);
    return type;
  }

  unregister(type: TraceEventType): void {
    this.byIdMap.delete(type.id);
    this.byNameMap.delete(`${type.system}/${type.name}`);
  }

  byId(id: number): TraceEventType | undefined {
    return this.byIdMap.get(id);
  }

  get(system: string, name: string): TraceEventType | undefined {
    return this.byNameMap.get(`${system}/${name}`);
  }

  all(): IterableIterator<TraceEventType> {
    return this.byIdMap.values();
  }
}
