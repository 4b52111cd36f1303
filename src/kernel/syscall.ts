/**
 * What a system call on the mount looks like from inside the kernel: the
 * arguments it was made with, and which tracefs node and open file it is on.
 * Filled by the tracefs layer; the kernel path (syscall_paths.ts) turns it
 * into registers, user memory, kernel objects and the calls of the real path.
 */

/** The kernel functions that implement a file's operations (its file_operations members, as the kernel names them). */
export interface FopNames {
  open?: string;
  read?: string;
  write?: string;
  release?: string;
  poll?: string;
  llseek?: string;
  /** iterate_shared of a directory (dcache_readdir, eventfs_iterate). */
  iterate?: string;
  /** The `struct file_operations` object itself (a data symbol, e.g. tracing_fops). */
  fops?: string;
}

/** What the kernel needs of a tracefs node: its inode and the names of its operations. */
export interface SyscallNode {
  readonly ino: number;
  readonly mode: number;
  readonly fops?: { readonly names?: FopNames };
}

export type SyscallName = 'openat' | 'read' | 'write' | 'close' | 'getdents64' | 'newfstatat' | 'mkdir' | 'rmdir' | 'fchownat' | 'fchmodat' | 'poll' | 'truncate' | 'chdir';

/** A system call made on the mount, as the kernel path that serves it needs to know it. */
export interface Syscall {
  name: SyscallName;
  /** Path relative to the tracefs root (chdir: the directory as the process named it). */
  path: string;
  /** Bytes asked for (read/write). */
  count?: number;
  /** The bytes written (write). */
  data?: Uint8Array;
  /** open(2) flags (openat). */
  flags?: number;
  /** mode_t (mkdir, fchmodat). */
  mode?: number;
  /** File position (read/write). */
  pos?: number;
  /** Owner (fchownat). */
  uid?: number;
  gid?: number;
  /** The open file this call is on (read/write/close/poll): the key of its struct file. */
  file?: object;
  /** The node the call is on, when known before the call. */
  node?: SyscallNode;
  /** Resolves the path as the kernel's walk does: the node, or throws ENOENT/ENOTDIR/EACCES. */
  walk?: () => SyscallNode;
  /** The call's interruption (a signal): a failure then reads -ERESTARTSYS inside the kernel. */
  signal?: Interruption;
}

/**
 * A pending system call's interruption: its caller got a signal. What a
 * sleeping file operation waits on besides its event (an AbortSignal is one).
 */
export interface Interruption {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, opts?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
