/** The real process behind an operation on the mount (from FUSE's request context). */
export interface Caller {
  pid: number;
  uid: number;
  gid: number;
}

/** The daemon itself, for in-process use of the library API. */
export const SELF: Caller = { pid: process.pid, uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };

export function rootCaller(pid = process.pid): Caller {
  return { pid, uid: 0, gid: 0 };
}
