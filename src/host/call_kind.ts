/**
 * Which captured tree a traced call runs (traced_calls.ts): the `call:`
 * blocks of the call paths (tools/kernel-paths/calls.mjs) are named
 * `call:<syscall>:<kind>` when what the real kernel runs depends on the
 * file the call is on, or on an argument that picks its code (socket's
 * protocol, fcntl's command), and `call:<syscall>` when it does not (brk,
 * rt_sigaction, dup, getpid: one tree whatever the call is on).
 */

/**
 * The kind of file a call is on, as the `call:` blocks name them: `pipe`,
 * `chr` (/dev/null), `anon` (an mmap of no file), a socket's protocol
 * (`tcp`, `tcpv6`, `udp`, `udpv6`, `unix-stream`, `unix` for a datagram
 * one — and a SOCK_SEQPACKET one, whose calls wrap the datagram ones: the
 * watcher adds sockfs's name to `socket:[ino]`), or the filesystem of a
 * path (`tmpfs`, `devpts` for a terminal: what the trees of other
 * filesystems' files do was not captured); undefined for the rest. A
 * sendfile is named by the file it writes to (the watcher reports its
 * first fd): what it reads from is taken to be a file on tmpfs, as captured.
 */
function fileKind(name: string, file: string, fsType: (abs: string) => string): string | undefined {
  if (name === 'mmap' && !file) return 'anon';
  if (file.startsWith('pipe:')) return 'pipe';
  if (file.startsWith('socket:')) return /^socket:\[\d+\] (\S+)$/.exec(file)?.[1]!.toLowerCase();
  if (file === '/dev/null') return 'chr';
  if (!file.startsWith('/')) return undefined;
  return fsType(file);
}

/**
 * family → type → [the protocol sockfs names a new socket by, lowercased;
 * the protocol number that means it, besides 0]. SOCK_SEQPACKET's unix
 * sockets, also named UNIX, and the other protocols (ping, raw, ...) have none.
 */
const NEW_SOCKET: Record<number, Record<number, [string, number]>> = {
  1: { 1: ['unix-stream', 1], 2: ['unix', 1] }, // AF_UNIX: SOCK_STREAM, SOCK_DGRAM (protocol PF_UNIX)
  2: { 1: ['tcp', 6], 2: ['udp', 17] }, // AF_INET (IPPROTO_TCP, IPPROTO_UDP)
  10: { 1: ['tcpv6', 6], 2: ['udpv6', 17] }, // AF_INET6
};

/** The kind of the socket socket(family, type, protocol) or socketpair() makes. */
function newSocketKind([family = 0n, type = 0n, protocol = 0n]: readonly bigint[]): string | undefined {
  const known = NEW_SOCKET[Number(family)]?.[Number(type & 0xfn)]; // without SOCK_NONBLOCK, SOCK_CLOEXEC
  const p = Number(BigInt.asIntN(32, protocol));
  return known && (p === 0 || p === known[1]) ? known[0] : undefined;
}

/** fcntl's commands whose trees were captured, by number. */
const FCNTL_CMD: Record<number, string> = { 2: 'F_SETFD', 3: 'F_GETFL', 1030: 'F_DUPFD_CLOEXEC' };
/** futex's operations whose trees were captured, by number (FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME masked off). */
const FUTEX_OP: Record<number, string> = { 1: 'FUTEX_WAKE' };
const AT_REMOVEDIR = 0x200n;

/** The kind a call's block is named by; undefined if there is none to name (nor any captured). */
function callKind(name: string, file: string, args: readonly bigint[], fsType: (abs: string) => string): string | undefined {
  if (name === 'socket' || name === 'socketpair') return newSocketKind(args);
  if (name === 'fcntl') return FCNTL_CMD[Number(BigInt.asUintN(32, args[1] ?? 0n))];
  if (name === 'futex') return FUTEX_OP[Number((args[1] ?? 0n) & 0x7fn)];
  // An unlinkat that removes a directory runs another tree (a rmdir's), not captured.
  if (name === 'unlinkat' && ((args[2] ?? 0n) & AT_REMOVEDIR) !== 0n) return undefined;
  return fileKind(name, file, fsType);
}

/**
 * The names of the blocks a call may run, the first one the call paths
 * have being its tree: its kind's, then the one that holds for any call
 * of that name. `names` are the call's names (fstat, newfstat: the blocks
 * take the kernel's, the entry function the real kernel ran). (Past these,
 * traced_calls.ts falls back to a tree that holds for any file, or to the
 * entry function.)
 */
export function callBlockNames(names: readonly string[], file: string, args: readonly bigint[], fsType: (abs: string) => string): string[] {
  const kinds = names.map((n) => callKind(n, file, args, fsType));
  return [...names.flatMap((n, i) => (kinds[i] ? [`call:${n}:${kinds[i]}`] : [])), ...names.map((n) => `call:${n}`)];
}
