/**
 * The events of loadable modules (trace_module_notify()): a coming module's
 * TRACE_EVENTs get their ids and directories, and the `:mod:` requests
 * set_event kept for it are applied; a going module's events are switched
 * off everywhere and removed. While a file of one of its events is open or
 * a trigger uses one, the module is held (rmmod: EBUSY).
 */
import { expectKernelError } from '../../kernel/errno.js';
import type { ModuleDef } from '../../kernel/module.js';
import type { ArrayEvents } from './array_events.js';
import { setClearEvents } from './set_event.js';
import { type PrintEnvSource, StaticEventType } from './static_event.js';
import type { TraceEvents } from './trace_events.js';

/** An event a module defines: a static event that knows its module. */
class ModuleEventType extends StaticEventType {
  constructor(
    spec: ConstructorParameters<typeof StaticEventType>[0],
    env: PrintEnvSource,
    readonly module: string,
  ) {
    super(spec, env);
  }
}

/** Follows the kernel's modules for `events`: adds, removes and holds their event types. */
export function followModuleEvents(events: TraceEvents, env: PrintEnvSource): void {
  const { modules } = events.kernel;
  const ofModule = (name: string) => events.types().filter((t) => t instanceof ModuleEventType && t.module === name);
  const add = (def: ModuleDef) => {
    for (const ev of def.events ?? []) {
      const type = new ModuleEventType({ system: ev.system, name: ev.name, id: events.allocEventId(), fields: ev.fields.map((f) => ({ ...f })), printFmt: ev.printFmt }, env, def.name);
      events.addEventType(type, events.tracepointRegistration(type));
    }
    for (const ae of events.allArrays()) applyModRequests(ae, def.name);
  };
  for (const mod of [...modules.loaded].reverse()) add(mod.def);
  modules.notifiers.add((mod, state) => {
    if (state === 'coming') add(mod.def);
    else if (state === 'going') {
      for (const t of ofModule(mod.def.name)) {
        for (const f of events.filesOf(t)) if (f.enabled) f.enableDisable(false, false);
        events.removeEventType(t);
      }
    }
  });
  modules.holders.add((mod) => ofModule(mod.def.name).some((t) => !events.removableWhenOff(t)));
}

/** The set_event requests waiting for `module` are applied now and forgotten. */
function applyModRequests(ae: ArrayEvents, module: string): void {
  const waiting = ae.modRequests.filter((r) => r.module === module);
  if (waiting.length === 0) return;
  ae.modRequests = ae.modRequests.filter((r) => r.module !== module);
  for (const r of waiting.reverse()) {
    try {
      setClearEvents(ae, r, true);
    } catch (e) {
      expectKernelError(e); // as the kernel's: a request that selects none of the module's events is dropped
    }
  }
}
