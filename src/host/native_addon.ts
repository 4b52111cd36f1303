/**
 * The daemon's native module (native/fuse, built by scripts/setup.sh): the
 * FUSE session (src/fuse/session.ts) and what Node's fs cannot do cheaply,
 * a read of a non-blocking fd that finds nothing without throwing, and the
 * C heap's figures and trimming.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { dataDir } from '../kernel/symbols_builtin.js';

interface NativeAddon {
  /** The FUSE session class (typed by src/fuse/session.ts). */
  readonly Session: unknown;
  /** Bytes read from a non-blocking fd: 0 when nothing waits (or at end of file), -errno on an error. */
  readAvailable(fd: number, buf: Buffer): number;
  /** The C heap (glibc's malloc): bytes held from the system, in use, and free inside what is held. */
  heapStats(): { held?: number; inUse?: number; free?: number };
  /** Gives the C heap's free pages back to the system; whether any went. */
  trimHeap(): boolean;
}

let addon: NativeAddon | undefined;

/** Where the module is built. */
function nativeAddonPath(): string {
  return join(dirname(dataDir()), 'native', 'fuse', 'build', 'Release', 'tracefs_fuse.node');
}

/** The native module; throws with set-up advice when it is not built. */
export function nativeAddon(): NativeAddon {
  if (addon) return addon;
  const path = nativeAddonPath();
  if (!existsSync(path)) throw new Error(`the native module is not built (${path} missing); run: sh scripts/setup.sh`);
  addon = createRequire(import.meta.url)(path) as NativeAddon;
  return addon;
}
