/**
 * The emulator's small C programs (native/<dir>/<name>.c): what Node cannot
 * do itself (netlink, seccomp, ptrace). Used from build/<name> when a build left one
 * there, else compiled once into ~/.cache/tracefs-emu (as <name>-<hash of its
 * sources>) with the machine's cc.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { dataDir } from '../kernel/symbols_builtin.js';
import { expectCommandFailure } from './system_error.js';

/** The helpers' names (native/<dir>/<name>.c). */
const HELPER_NAMES = ['syscall_watch', 'cn_proc_listen', 'kmod_tool'];

/**
 * Whether an executable is one of the emulator's helpers (a build's or the
 * cache's, any checkout's): running one is the emulator's doing, not the
 * machine's (`exec` starts its command through the watcher).
 */
export function isNativeHelper(exe: string): boolean {
  const m = /^(\w+?)(-[0-9a-f]{16})?$/.exec(basename(exe));
  return !!m && HELPER_NAMES.includes(m[1]!);
}

/** The helper's binary, built if needed; undefined when it cannot be had (no source, no compiler). */
export function nativeHelper(dir: string, name: string): string | undefined {
  let root: string;
  try {
    root = dirname(dataDir());
  } catch {
    // No data directory (its only error): no native sources next to it either.
    return undefined;
  }
  const src = join(root, 'native', dir, `${name}.c`);
  const built = join(root, 'build', name);
  // The program's sources: its file and the ones it includes from its directory.
  const sources = existsSync(src) ? readdirSync(dirname(src)).filter((f) => /\.[ch]$/.test(f)).map((f) => join(dirname(src), f)) : [];
  const fresh = (bin: string) => existsSync(bin) && sources.every((s) => statSync(bin).mtimeMs >= statSync(s).mtimeMs);
  if (fresh(built)) return built;
  if (!existsSync(src)) return undefined;
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'tracefs-emu');
  // Named for its sources' content: checkouts of different versions sharing the cache never run each other's.
  const digest = createHash('sha256');
  for (const f of sources.sort()) digest.update(`${basename(f)}\0`).update(readFileSync(f));
  const bin = join(cache, `${name}-${digest.digest('hex').slice(0, 16)}`);
  if (existsSync(bin)) return bin;
  try {
    mkdirSync(cache, { recursive: true });
    // Built next to its final name, then renamed: two processes building at once never run a half-written binary.
    const tmp = `${bin}.${process.pid}`;
    execFileSync(process.env.CC ?? 'cc', ['-O2', '-o', tmp, src], { stdio: 'ignore', timeout: 30_000 });
    execFileSync('mv', ['-f', tmp, bin], { stdio: 'ignore' });
    return bin;
  } catch (e) {
    expectCommandFailure(e); // no compiler, or it failed
    return undefined;
  }
}
