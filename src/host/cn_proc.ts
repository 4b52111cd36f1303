/**
 * The host kernel's process events (the proc connector: every fork, exec
 * and exit on the machine, as they happen), read through a small helper
 * program (native/cn_proc/cn_proc_listen.c) because Node cannot open
 * netlink sockets; events.ts reads its lines. They let a process that
 * never touches the mount — `sh -c true` — appear in sched_process_fork
 * traces. Needs root in the initial network namespace; without it (or
 * without a C compiler to build the helper) the emulator mirrors only the
 * processes it sees.
 */
import { nativeHelper } from './native_helper.js';
import type { ProcessMirror } from './proc_mirror.js';

/** The helper binary (see native_helper.ts). */
export function procEventsHelper(): string | undefined {
  return nativeHelper('cn_proc', 'cn_proc_listen');
}

/** Dispatches one helper line to the mirror. */
export function procEventLine(mirror: ProcessMirror, line: string): void {
  const sp = line.split(' ');
  switch (sp[0]) {
    case 'F':
      mirror.onFork(Number(sp[2]), Number(sp[4]), Number(sp[5]), Number(sp[1]));
      break;
    case 'E': {
      const rest = line.split(' ').slice(4).join(' ');
      const [comm, exe] = rest.split('\t');
      mirror.onExec(Number(sp[2]), comm ?? '', exe || undefined);
      break;
    }
    case 'C':
      mirror.onComm(Number(sp[2]), sp.slice(4).join(' '));
      break;
    case 'X':
      mirror.onExit(Number(sp[2]), Number(sp[4]));
      break;
    case 'L':
      // The socket overflowed and events were lost: exits among them are found by looking.
      mirror.checkExits();
      break;
  }
}
