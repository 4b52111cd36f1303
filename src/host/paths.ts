/**
 * Paths uprobes name: kern_path(LOOKUP_FOLLOW) and d_is_reg() on the
 * machine's file system (the emulated kernel has no files of its own), with
 * the inode identity uprobes compare (symlinks resolved).
 */
import { statSync } from 'node:fs';
import type { ErrnoName } from '../kernel/errno.js';

export function hostStatPath(path: string): { kind: 'regular' | 'other'; inode: string } | ErrnoName {
  try {
    const st = statSync(path);
    return { kind: st.isFile() ? 'regular' : 'other', inode: `${st.dev}:${st.ino}` };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR' || code === 'EACCES' || code === 'ELOOP' || code === 'ENAMETOOLONG') return code;
    return 'ENOENT';
  }
}
