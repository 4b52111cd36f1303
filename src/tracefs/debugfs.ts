/**
 * The part of debugfs that tracing tools and the ftrace selftests look at
 * (/sys/kernel/debug): kprobes/{list,enabled,blacklist} as the kernel's
 * debugfs_kprobe_init() creates them, and the `tracing` directory where
 * debugfs automounts tracefs (the `exec` namespace binds the tracefs there).
 * Served as a second tree through the same library API and FUSE adapter.
 */
import type { TaskOf } from '../kernel/caller.js';
import type { Kernel } from '../kernel/kernel.js';
import { fail } from '../kernel/errno.js';
import { Dir, File } from './node.js';
import { seqRead } from './seq_file.js';
import { Tracefs } from './tracefs.js';

/**
 * What debugfs shows of the kprobes subsystem. The probes layer provides the
 * real view; until then `idleKprobes()` shows a kernel with no kprobe.
 */
export interface KprobesDebugView {
  /** kprobes/list: one line per registered kprobe (`ADDR  TYPE  SYM+OFFS  [FLAGS]`). */
  list(): string;
  /** kprobes/blacklist: `START-END\tSYMBOL` lines of functions kprobes refuse. */
  blacklist(): string;
  /** False once every kprobe was disarmed through kprobes/enabled. */
  armed(): boolean;
  /** arm_all_kprobes() / disarm_all_kprobes(); may throw a KernelError. */
  setArmed(on: boolean): void;
}

/** A kprobes subsystem with nothing registered, and the kernel's blacklist. */
function idleKprobes(kernel: Kernel): KprobesDebugView {
  let armed = true;
  return {
    list: () => '',
    blacklist: () => kernel.kprobeBlacklist.text,
    armed: () => armed,
    setArmed(on) {
      armed = on;
    },
  };
}

/** kstrtobool(): y/Y/t/T/1, n/N/f/F/0, on/off; anything else is EINVAL. */
function parseBool(data: Buffer | string): boolean {
  const s = typeof data === 'string' ? data : data.toString('latin1');
  const c = s[0];
  if (c !== undefined && 'yYtT1'.includes(c)) return true;
  if (c !== undefined && 'nNfF0'.includes(c)) return false;
  if (c === 'o' || c === 'O') {
    if (s[1] === 'n' || s[1] === 'N') return true;
    if (s[1] === 'f' || s[1] === 'F') return false;
  }
  fail('EINVAL');
}

export interface DebugfsOptions {
  kprobes?: KprobesDebugView;
  /** Which task a request runs in (see Tracefs). */
  taskOf?: TaskOf;
}

/** The debugfs tree, as the library API serves it (root drwx------, as on the kernel). */
export function buildDebugfs(kernel: Kernel, opts: DebugfsOptions = {}): Tracefs {
  const kp = opts.kprobes ?? idleKprobes(kernel);
  const root = new Dir('', 0o700);
  const kprobes = root.add(new Dir('kprobes', 0o755));
  kprobes.add(new File('blacklist', 0o400, seqRead(() => kp.blacklist())));
  kprobes.add(
    new File('enabled', 0o600, {
      ...seqRead(() => (kp.armed() ? '1\n' : '0\n')),
      write(_f, data) {
        kp.setArmed(parseBool(data));
        return data.length;
      },
    }),
  );
  kprobes.add(new File('list', 0o400, seqRead(() => kp.list())));
  // The automount point of tracefs: read-only and empty until tracefs is mounted on it.
  root.add(new Dir('tracing', 0o555));
  return new Tracefs(root, kernel, undefined, opts.taskOf);
}
