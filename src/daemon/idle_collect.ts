/**
 * A daemon gone quiet gives back what its last burst left behind. V8 grows
 * its heap to the high-water mark of a busy run (a full selftest run) and
 * keeps it while the garbage waits for a collection that an idle process
 * may not get for a long time; malloc likewise keeps the C heap's freed
 * chunks (Node's buffers). Once no request has come for IDLE_MS after some
 * did, one compacting full collection runs and the C heap is trimmed: both
 * shrink to what is live and emptied pages go back to the system, so an
 * idle daemon's RSS is what it holds, run after run.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How long without a request counts as idle. */
const IDLE_MS = 2000;
const CHECK_MS = 500;

/**
 * V8's full collection, compacting, when this process can have one (`gc`
 * exposed on request). A plain full collection frees objects but keeps
 * their pages: after a selftest run half the old space was empty and
 * stayed resident. Compacting moves what lives onto as few pages as it
 * needs, and the rest go back to the system.
 */
function exposedGc(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    if (typeof gc !== 'function') return undefined;
    return () => {
      setFlagsFromString('--compact-on-every-full-gc');
      try {
        (gc as () => void)();
      } finally {
        setFlagsFromString('--no-compact-on-every-full-gc');
      }
    };
  } catch {
    return undefined;
  }
}

export interface IdleCollectOptions {
  /** Gives the C heap's free pages back (after the collection freed the buffers that held them). */
  trim?: () => void;
  /** The collection (default: V8's full collection). */
  gc?: () => void;
  idleMs?: number;
  checkMs?: number;
}

/**
 * Collects once after each busy period; `activity` counts what was served
 * so far. Returns how to stop.
 */
export function collectWhenIdle(activity: () => number, o: IdleCollectOptions = {}): () => void {
  const gc = o.gc ?? exposedGc();
  if (!gc) return () => {};
  const idleMs = o.idleMs ?? IDLE_MS;
  let seen = activity();
  let quietSince = Date.now();
  let collected = true;
  const timer = setInterval(() => {
    const n = activity();
    if (n !== seen) {
      seen = n;
      quietSince = Date.now();
      collected = false;
    } else if (!collected && Date.now() - quietSince >= idleMs) {
      collected = true;
      gc();
      o.trim?.();
    }
  }, o.checkMs ?? CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
