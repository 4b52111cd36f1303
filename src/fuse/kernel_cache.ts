/**
 * What the kernel caches of a mounted tree (dentries and attributes, kept for
 * ENTRY_TIMEOUT / ATTR_TIMEOUT), and how it is told to forget them when the
 * tree changes behind its back.
 *
 * The kernel names inodes by FUSE node id, which libfuse's high-level API
 * keeps to itself; ids are learned from requests instead: a LOOKUP names the
 * directory looked in, GETATTR / OPEN / READDIR name their node, and the
 * binding reports the id each LOOKUP reply gave (matched by request id). A
 * node never looked up has no dentry, so nothing to forget.
 *
 * The tree's changes (tree_watch.ts) become notices: a removed node's dentry
 * is invalidated (inval_entry, queued: the kernel takes the directory's lock,
 * which a pending request may hold); changed attributes are invalidated at
 * once (inval_inode takes no lock), or through the dentry when the node's own
 * id is not known.
 */
import { errno } from '../kernel/errno.js';
import { Dir, type Node } from '../tracefs/node.js';
import type { TreeWatcher } from '../tracefs/tree_watch.js';
import { FUSE_ROOT_ID, type FuseInstance, type FuseRequest } from './native.js';

/** What the kernel was told of a node. */
interface Known {
  /** Its own node id. */
  id?: number;
  /** The node id of the directory it was last looked up in. */
  parent?: number;
}

/** LOOKUPs whose reply id is not taken yet, beyond which the binding is asked for them. */
const PENDING_LIMIT = 1024;

/** The binding's side of the cache: a FuseInstance, or a recorder in tests. */
export type CacheNotifier = Pick<FuseInstance, 'invalEntry' | 'invalInodeNow' | 'flushNotices' | 'takeLookups'>;

export class KernelCache implements TreeWatcher {
  private readonly known = new WeakMap<Node, Known>();
  /** LOOKUP request id → the node looked up, until the reply's node id is taken. */
  private pending = new Map<number, Node>();
  private older = new Map<number, Node>();
  /** Counts queued notices: an operation that saw it move waits for them before answering. */
  queued = 0;
  notifier?: CacheNotifier;

  constructor(root: Dir) {
    this.known.set(root, { id: FUSE_ROOT_ID });
  }

  private k(n: Node): Known {
    let k = this.known.get(n);
    if (!k) this.known.set(n, (k = {}));
    return k;
  }

  /** A LOOKUP (or MKDIR: the new directory is looked up) found `node` in the directory the request names. */
  looked(req: FuseRequest, node: Node | undefined): void {
    if (!node || !req.nodeid) return;
    this.k(node).parent = req.nodeid;
    if (node.parent) this.k(node.parent).id = req.nodeid;
    this.pending.set(req.id, node);
    if (this.pending.size > PENDING_LIMIT) this.takeLookups(true);
  }

  /** A request named `node` by its own node id (GETATTR, OPEN, READDIR, SETATTR...). */
  named(nodeid: number, node: Node | undefined): void {
    if (!node || !nodeid) return;
    this.k(node).id = nodeid;
  }

  /** The node ids LOOKUP replies gave. `rotate`: LOOKUPs whose reply never came (it failed) are dropped after two rounds. */
  private takeLookups(rotate = false): void {
    const flat = this.notifier?.takeLookups() ?? [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const req = flat[i]!;
      const node = this.pending.get(req) ?? this.older.get(req);
      if (!node) continue;
      this.pending.delete(req);
      this.older.delete(req);
      this.k(node).id = flat[i + 1]!;
    }
    if (rotate) {
      this.older = this.pending;
      this.pending = new Map();
    }
  }

  /** What the kernel knows of `n`, if it ever looked it up. */
  idsOf(n: Node): Readonly<Known> | undefined {
    this.takeLookups();
    return this.known.get(n);
  }

  removed(_parent: Dir, node: Node): void {
    const k = this.known.get(node);
    if (k?.parent === undefined || !this.notifier) return;
    this.notifier.invalEntry(k.parent, node.name);
    this.queued++;
  }

  added(parent: Dir, node: Node): void {
    // A subdirectory counts in its parent's link count.
    if (node instanceof Dir && parent.fixedNlink === undefined) this.attrsChanged(parent, false);
  }

  attrsChanged(node: Node, subtree: boolean): void {
    if (!this.notifier) return;
    this.takeLookups();
    const visit = (n: Node) => {
      const k = this.known.get(n);
      // Never looked up: neither it nor anything below it is cached.
      if (!k) return;
      this.forgetAttrs(n, k);
      if (subtree && n instanceof Dir) for (const c of n.children.values()) visit(c);
    };
    visit(node);
  }

  private forgetAttrs(n: Node, k: Known): void {
    const notifier = this.notifier!;
    if (k.id !== undefined && notifier.invalInodeNow(k.id) !== -errno.ENOENT) return;
    // Id unknown, or no longer the kernel's: drop the dentry, the next lookup brings fresh attributes.
    if (k.parent === undefined) return;
    notifier.invalEntry(k.parent, n.name);
    this.queued++;
  }

  /** Resolves once every notice queued so far has reached the kernel. */
  settled(): Promise<void> {
    return this.notifier ? this.notifier.flushNotices() : Promise.resolve();
  }
}
