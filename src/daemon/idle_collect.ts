/**
 * A daemon gone quiet gives back what its last burst left behind. V8 grows
 * its heap to the high-water mark of a busy run (a full selftest run) and
 * keeps it while the garbage waits for a collection that an idle process
 * may not get for a long time. Once no request has come for IDLE_MS after
 * some did, one full collection runs: the heap shrinks to what is live and
 * emptied pages go back to the system, so an idle daemon's RSS is what it
 * holds, run after run.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How long without a request counts as idle. */
const IDLE_MS = 2000;
const CHECK_MS = 500;

/** A full collection, when this process can have one (`gc` exposed on request). */
function fullCollection(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Collects once after each busy period; `activity` counts what was served
 * so far. Returns how to stop.
 */
export function collectWhenIdle(activity: () => number, gc = fullCollection(), idleMs = IDLE_MS, checkMs = CHECK_MS): () => void {
  if (!gc) return () => {};
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
    }
  }, checkMs);
  timer.unref();
  return () => clearInterval(timer);
}
