/**
 * Changes to a mounted tree that whoever caches it must hear of: the FUSE
 * adapter turns them into kernel dentry/attribute invalidations, so the
 * mount can cache lookups and attributes. Reported centrally — by Dir.add /
 * Dir.remove, and by the few places that change what stat shows (chown,
 * chmod, times, mount options) — never by the code that removes an event or
 * an instance.
 */
import type { Dir, Node } from './node.js';

export interface TreeWatcher {
  /** `node` was taken out of `parent` (already detached). */
  removed(parent: Dir, node: Node): void;
  /** `node` was put into `parent`. */
  added(parent: Dir, node: Node): void;
  /** What stat shows of `node` changed; with `subtree`, maybe of every node below it too (inherited owners). */
  attrsChanged(node: Node, subtree: boolean): void;
}

const watchers = new WeakMap<Dir, Set<TreeWatcher>>();

function rootOf(n: Node): Node {
  let r = n;
  while (r.parent) r = r.parent;
  return r;
}

function watchersOf(n: Node): Set<TreeWatcher> | undefined {
  return watchers.get(rootOf(n) as Dir);
}

/** Reports the changes of the tree under `root` to `w` until the returned function is called. */
export function watchTree(root: Dir, w: TreeWatcher): () => void {
  let set = watchers.get(root);
  if (!set) watchers.set(root, (set = new Set()));
  set.add(w);
  return () => {
    set.delete(w);
  };
}

export function reportRemoved(parent: Dir, node: Node): void {
  const ws = watchersOf(parent);
  if (ws) for (const w of ws) w.removed(parent, node);
}

export function reportAdded(parent: Dir, node: Node): void {
  const ws = watchersOf(parent);
  if (ws) for (const w of ws) w.added(parent, node);
}

export function reportAttrs(node: Node, subtree = false): void {
  const ws = watchersOf(node);
  if (ws) for (const w of ws) w.attrsChanged(node, subtree);
}
