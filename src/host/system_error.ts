/**
 * A host system call's failure as Node reports it (fs, net, process.kill,
 * spawn: an Error with the call's `syscall` and its errno `code`). A catch
 * around host calls expects these; anything else is a bug and goes on.
 */

type SystemError = NodeJS.ErrnoException & { code: string; syscall: string };

/** `e` is a failed system call (with one of `codes`, when some are given). */
function isSystemError(e: unknown, ...codes: string[]): e is SystemError {
  if (!(e instanceof Error)) return false;
  const { code, syscall } = e as NodeJS.ErrnoException;
  return typeof code === 'string' && typeof syscall === 'string' && (codes.length === 0 || codes.includes(code));
}

/** For a catch that expects a failed system call: rethrows anything else. */
export function expectSystemError(e: unknown, ...codes: string[]): asserts e is SystemError {
  if (!isSystemError(e, ...codes)) throw e;
}

/** For a catch around execFileSync: a command that could not run, failed or timed out; rethrows anything else. */
export function expectCommandFailure(e: unknown): void {
  if (isSystemError(e)) return;
  if (e instanceof Error && 'status' in e && 'signal' in e) return;
  throw e;
}
