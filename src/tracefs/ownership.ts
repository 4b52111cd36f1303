/** Who owns a tracefs inode, and who may do what with it. */
import type { Caller } from '../kernel/caller.js';
import { Dir, type Node, type SuperBlock } from './node.js';

export interface Owner {
  uid: number;
  gid: number;
}

/** The owner a node shows: its own chown'ed values, else the mount's. */
export function ownerOf(node: Node, sb: SuperBlock): Owner {
  return { uid: node.uid ?? sb.uid, gid: node.gid ?? sb.gid };
}

export const MAY_EXEC = 1;
export const MAY_WRITE = 2;
export const MAY_READ = 4;

/** generic_permission(): root overrides read/write, and search on directories. */
export function mayAccess(node: Node, sb: SuperBlock, caller: Caller, mask: number): boolean {
  if (caller.uid === 0) {
    if (!(mask & MAY_EXEC) || node instanceof Dir) return true;
    return (node.perm & 0o111) !== 0;
  }
  const { uid, gid } = ownerOf(node, sb);
  const shift = caller.uid === uid ? 6 : caller.gid === gid ? 3 : 0;
  const granted = (node.perm >> shift) & 7;
  return (granted & mask) === mask;
}
