/**
 * What the kernel caches of a mounted tree (dentries and attributes, kept
 * for CACHE_TIMEOUT_S), and how it is told to forget them when the tree
 * changes behind its back (tree_watch.ts): a removed node's dentry is
 * invalidated (inval_entry, queued: the kernel takes the directory's lock,
 * which a pending request may hold) and what it cached below it is deleted
 * (notify_delete, queued likewise); changed attributes are invalidated at
 * once (inval_inode takes no lock), and so is the listing of a directory
 * that gained or lost an entry (kept by the kernel from one opendir to the
 * next, FOPEN_CACHE_DIR). Only nodes the kernel holds an id for can be
 * cached; the others have nothing to forget.
 */
import { errno } from '../kernel/errno.js';
import { Dir, type Node } from '../tracefs/node.js';
import type { TreeWatcher } from '../tracefs/tree_watch.js';
import type { FileCache } from './file_cache.js';
import type { NodeIds } from './node_ids.js';
import type { FuseNotices } from './session.js';

/**
 * How long the kernel may keep a lookup or attributes without asking again.
 * Every change is invalidated explicitly, so this only bounds the damage of
 * a change that was not (a bug); long enough that ftracetest's per-test walk
 * of every event directory (initialize_system) is served from the cache
 * from one test to the next.
 */
export const CACHE_TIMEOUT_S = 3600;

/**
 * A listing the kernel received just before it changed may be stored after
 * the invalidation (the reader stores it once it wakes up): a directory
 * listed that recently is invalidated once more, after this long.
 */
const LISTING_RACE_MS = 50;

export class KernelCache implements TreeWatcher {
  /** Counts notices queued: an operation that saw it move waits for them before answering. */
  queued = 0;
  /** Where notices go (none before the session starts or after it ends). */
  notices?: FuseNotices;
  /** When each directory's listing was last sent to the kernel (by node id). */
  private readonly listedAt = new Map<number, number>();

  constructor(
    private readonly ids: NodeIds,
    /** Files the native side answers: what changes here changes there too. */
    private readonly files?: FileCache,
  ) {}

  /** The kernel was sent the listing of directory `id` (it may keep it). */
  listed(id: number): void {
    this.listedAt.set(id, performance.now());
  }

  removed(parentDir: Dir, node: Node): void {
    const id = this.ids.idOf(node);
    if (id !== undefined) {
      this.files?.drop(id);
      this.listedAt.delete(id);
    }
    this.listingChanged(parentDir);
    const parent = this.ids.parentOf(node);
    if (parent === undefined || !this.notices) return;
    // What the kernel still caches inside a removed directory (entries looked up there, perhaps in use)
    // would hold their nodes, and through them the whole removed subtree (an instance and its
    // buffers), until the kernel forgets them: deleted, deepest first, they go once unused.
    for (const k of this.ids.knownBelow(node)) {
      this.files?.drop(k.id);
      this.listedAt.delete(k.id);
      this.notices.notifyDelete(k.parent, k.id, k.name);
      this.queued++;
    }
    this.notices.invalEntry(parent, node.name);
    this.queued++;
  }

  added(parent: Dir, node: Node): void {
    this.listingChanged(parent);
    // A subdirectory counts in its parent's link count.
    if (node instanceof Dir && parent.fixedNlink === undefined) this.attrsChanged(parent, false);
  }

  /** `dir` gained or lost an entry: the listing the kernel may keep of it goes. */
  private listingChanged(dir: Dir): void {
    const id = this.ids.idOf(dir);
    const at = id === undefined ? undefined : this.listedAt.get(id);
    if (at === undefined || !this.notices) return;
    this.notices.invalInode(id!, true);
    if (performance.now() - at < LISTING_RACE_MS) {
      setTimeout(() => {
        if (this.ids.idOf(dir) === id) this.notices?.invalInode(id!, true);
      }, LISTING_RACE_MS).unref();
    } else this.listedAt.delete(id!);
  }

  attrsChanged(node: Node, subtree: boolean): void {
    if (!this.notices) return;
    const visit = (n: Node): void => {
      const id = this.ids.idOf(n);
      // Never looked up: neither it nor anything below it is cached.
      if (id === undefined) return;
      this.files?.drop(id);
      if (this.notices!.invalInode(id) === -errno.ENOENT) {
        // No longer the kernel's: drop the dentry, the next lookup brings fresh attributes.
        const parent = this.ids.parentOf(n);
        if (parent !== undefined) {
          this.notices!.invalEntry(parent, n.name);
          this.queued++;
        }
      }
      if (subtree && n instanceof Dir) for (const c of n.children.values()) visit(c);
    };
    visit(node);
  }

  /** Resolves once every notice queued so far has reached the kernel. */
  settled(): Promise<void> {
    return this.notices ? this.notices.flushNotices() : Promise.resolve();
  }
}
