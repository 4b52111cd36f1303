/**
 * The switch that tells the system-call watchers (native/seccomp) what the
 * kernel can see, and waits until they act on it. On a real kernel a hook
 * is live once the write that armed it returns; here a watcher learns of it
 * through a file (inotify) and must start reporting opens, or interrupt its
 * tracees so that their next calls stop. So a request that raises the level
 * is answered only once every live watcher has said (an `O pid gen` line)
 * that it acts on it, for the requester too: `echo 1 > tracing_on; ping`
 * sees ping's fork.
 */
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { expectSystemError } from './system_error.js';

/**
 * How long an answer waits for a watcher that does not acknowledge (a stuck
 * or dying one). Answers sent without it are counted (`timeouts`): on a
 * saturated machine a live watcher may be that slow to wake, and the
 * requester's next calls could then go unseen.
 */
const ACK_TIMEOUT_MS = 200;
/** How often the FIFO is read while an answer waits. */
const ACK_POLL_MS = 1;

/**
 * What the kernel can see of watched processes' calls: nothing (their opens
 * and symlinks outside the mount go unreported), that their tasks run for
 * them (reported: the scheduler's events show it), or every system call
 * (traced).
 */
export const enum ObserveLevel {
  Nothing = 0,
  Processes = 1,
  Syscalls = 2,
}

interface AckWait {
  gen: number;
  done: () => void;
  deadline: number;
}

export class ObserveSwitch {
  private level = ObserveLevel.Nothing;
  private gen = 0;
  /** Watchers that said hello (`W pid`), with the last switch each acknowledged. */
  private readonly watchers = new Map<number, number>();
  private waits: AckWait[] = [];
  /** Answers that went out without every live watcher's acknowledgement. */
  timeouts = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    /** The file the watchers read (FIFO.observe). */
    private readonly path: string,
    /** Reads what the FIFO holds (acks among it). */
    private readonly drain: () => void,
  ) {
    writeFileSync(path, '0\n');
  }

  /**
   * Sets the level. A rise by a request of thread `requester` returns what
   * its answer waits for (undefined when no watcher is there).
   */
  set(level: ObserveLevel, requester = 0): Promise<void> | undefined {
    if (level === this.level) return undefined;
    const rise = level > this.level;
    this.level = level;
    if (level === ObserveLevel.Nothing) {
      this.write('0');
      return undefined;
    }
    // A fall keeps its generation: the watchers have nothing to acknowledge.
    const gen = rise ? ++this.gen : this.gen;
    // Fixed width, written in place: a watcher's read never sees it half written or empty.
    this.write(`${level} ${String(gen).padStart(10, '0')} ${String(requester).padStart(10, '0')}\n`);
    if (!rise || !this.pending(gen)) return undefined;
    return new Promise<void>((done) => {
      this.waits.push({ gen, done, deadline: Date.now() + ACK_TIMEOUT_MS });
      this.timer ??= setInterval(this.check, ACK_POLL_MS);
    });
  }

  /** Handles a watcher's line (`W pid`, `O pid gen`); false if it is none of these. */
  line(line: string): boolean {
    const kind = line[0];
    if ((kind !== 'W' && kind !== 'O') || line[1] !== ' ') return false;
    const [, pid, gen] = line.split(' ').map(Number);
    if (!Number.isInteger(pid)) return true;
    this.watchers.set(pid!, kind === 'O' && Number.isInteger(gen) ? gen! : (this.watchers.get(pid!) ?? 0));
    return true;
  }

  /** Ends every wait, as when the daemon stops. */
  close(): void {
    for (const w of this.waits) w.done();
    this.waits = [];
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private readonly check = (): void => {
    this.drain();
    const now = Date.now();
    this.waits = this.waits.filter((w) => {
      if (this.pending(w.gen)) {
        if (now < w.deadline) return true;
        this.timeouts++;
      }
      w.done();
      return false;
    });
    if (this.waits.length === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  };

  /** Whether a live watcher has not yet acknowledged switch `gen`. */
  private pending(gen: number): boolean {
    let any = false;
    for (const [pid, acked] of this.watchers) {
      if (acked >= gen) continue;
      if (!alive(pid)) this.watchers.delete(pid);
      else any = true;
    }
    return any;
  }

  /** Writes at the start, in place (no truncation): what follows is left over from a longer record and read by no one. */
  private write(text: string): void {
    try {
      const fd = openSync(this.path, 'r+');
      try {
        writeSync(fd, text, 0);
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      expectSystemError(e); // its directory went away: nobody is watching
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
