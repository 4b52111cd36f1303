/**
 * Command-line options that configure the emulator behind a mount, and
 * their mapping onto createEmulator() and the daemon's host driver. To add
 * one: an entry in EMULATOR_CLI_OPTIONS and a line in emulatorOptionsFrom()
 * (or hostOptionsFrom()).
 */
import type { Options } from 'yargs';
import type { HostOptions } from '../host/driver.js';
import { isProcessScope, PROCESS_SCOPES } from '../host/proc_mirror.js';
import type { EmulatorOptions } from '../index.js';
import { isKernelFeature, KERNEL_FEATURES, type KernelFeature } from '../kernel/features.js';
import { DEFAULT_SERIES, isSeries, SERIES } from '../kernel/series.js';

export const EMULATOR_CLI_OPTIONS = {
  kernel: { type: 'string', choices: [...SERIES], default: DEFAULT_SERIES, describe: 'kernel series to behave as' },
  cpus: { type: 'number', describe: 'number of CPUs (default: the host\'s)' },
  seed: { type: 'number', describe: 'seed of everything random in the background activity' },
  features: { type: 'string', describe: `kernel options Debian builds without, comma-separated (${KERNEL_FEATURES.join(', ')}); default none` },
  activity: { type: 'number', default: 1, describe: "rate of the kernel's background activity (1: an idle machine's, 0: none)" },
  'proc-events': { type: 'boolean', default: true, describe: "follow every process's fork/exec/exit through the kernel's proc connector (root only)" },
  processes: {
    type: 'string',
    choices: [...PROCESS_SCOPES],
    default: 'all',
    describe: "whose lives the proc connector's events are followed for: every process of the machine, or only those run by `tracefs-emu exec` on this mount and the callers of its files (as on a machine of their own)",
  },
} as const satisfies Record<string, Options>;

export interface EmulatorCliArgs {
  kernel?: string;
  cpus?: number;
  seed?: number;
  features?: string;
  activity?: number;
  procEvents?: boolean;
  processes?: string;
}

export function emulatorOptionsFrom(a: EmulatorCliArgs): EmulatorOptions {
  const o: EmulatorOptions = {};
  if (a.kernel !== undefined) {
    if (!isSeries(a.kernel)) throw new Error(`unknown kernel series ${a.kernel} (${SERIES.join(', ')})`);
    o.series = a.kernel;
  }
  if (a.cpus !== undefined) {
    if (!Number.isInteger(a.cpus) || a.cpus < 1 || a.cpus > 8192) throw new Error(`--cpus: expected a CPU count, got ${a.cpus}`);
    o.cpus = a.cpus;
  }
  if (a.seed !== undefined) {
    if (!Number.isFinite(a.seed)) throw new Error(`--seed: expected a number, got ${a.seed}`);
    o.seed = a.seed;
  }
  if (a.features !== undefined) {
    const list = a.features.split(',').map((f) => f.trim()).filter(Boolean);
    const bad = list.filter((f) => !isKernelFeature(f));
    if (bad.length) throw new Error(`--features: unknown ${bad.join(', ')} (${KERNEL_FEATURES.join(', ')})`);
    o.features = list as KernelFeature[];
  }
  if (a.activity !== undefined && (!Number.isFinite(a.activity) || a.activity < 0)) throw new Error(`--activity: expected a rate >= 0, got ${a.activity}`);
  // A mounted kernel lives: its calls run their kernel paths, its background work runs.
  o.activity = a.activity ?? 1;
  o.callPaths = true;
  return o;
}

/** What the daemon's host driver follows of the machine: every process's life (or those of its own), where the proc connector allows. */
export function hostOptionsFrom(a: EmulatorCliArgs): HostOptions {
  const processes = a.processes ?? 'all';
  if (!isProcessScope(processes)) throw new Error(`--processes: expected ${PROCESS_SCOPES.join(' or ')}, got ${processes}`);
  return { procEvents: a.procEvents ?? true, processes };
}
