/** Linux errno values (x86_64) and the error type every layer throws. */
export const errno = {
  EPERM: 1,
  ENOENT: 2,
  ESRCH: 3,
  EINTR: 4,
  EIO: 5,
  ENXIO: 6,
  E2BIG: 7,
  EBADF: 9,
  EAGAIN: 11,
  ENOMEM: 12,
  EACCES: 13,
  EFAULT: 14,
  EBUSY: 16,
  EEXIST: 17,
  EXDEV: 18,
  ENODEV: 19,
  ENOTDIR: 20,
  EISDIR: 21,
  EINVAL: 22,
  ENFILE: 23,
  EMFILE: 24,
  EFBIG: 27,
  ENOSPC: 28,
  ESPIPE: 29,
  EROFS: 30,
  EMLINK: 31,
  EDOM: 33,
  ERANGE: 34,
  EDEADLK: 35,
  ENAMETOOLONG: 36,
  ENOSYS: 38,
  ENOTEMPTY: 39,
  ELOOP: 40,
  ENODATA: 61,
  EOVERFLOW: 75,
  EILSEQ: 84,
  EOPNOTSUPP: 95,
  ENOTCONN: 107,
  /** Kernel-internal: an interrupted call the signal code restarts or turns into EINTR. */
  ERESTARTSYS: 512,
  ENOTSUPP: 524,
} as const;

export type ErrnoName = keyof typeof errno;

/** A failed kernel operation: carries the positive errno the syscall reports. */
export class KernelError extends Error {
  readonly errno: number;
  constructor(readonly code: ErrnoName, message?: string) {
    super(message ?? code);
    this.errno = errno[code];
  }
}

export function isKernelError(e: unknown): e is KernelError {
  return e instanceof KernelError;
}

/** For a catch that expects the kernel's errors: rethrows anything else (a bug). */
export function expectKernelError(e: unknown): asserts e is KernelError {
  if (!(e instanceof KernelError)) throw e;
}

/** Throws KernelError(code): for expressions like `x ?? fail('ENOENT')`. */
export function fail(code: ErrnoName, message?: string): never {
  throw new KernelError(code, message);
}
