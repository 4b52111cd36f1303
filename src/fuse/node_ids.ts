/**
 * The node ids the kernel knows the tree's nodes by: given out by LOOKUP
 * (and MKDIR) replies, each counted as the kernel counts its references,
 * forgotten when FORGET brings the count to zero. Ids are never reused, so
 * a late request about a forgotten node finds nothing rather than another
 * node. The root is id 1 and never forgotten.
 */
import type { Dir, Node } from '../tracefs/node.js';

const ROOT_ID = 1;

interface Known {
  readonly node: Node;
  /** References the kernel holds (lookups not yet forgotten). */
  count: number;
  /** The directory it was looked up in, by id (what inval_entry names). */
  parent: number;
}

export class NodeIds {
  private readonly byId = new Map<number, Known>();
  /** Ids the kernel holds, by the id of the directory they were looked up in. */
  private readonly kids = new Map<number, Set<number>>();
  private readonly ids = new WeakMap<Node, number>();
  private next = ROOT_ID + 1;

  constructor(readonly root: Dir) {
    this.byId.set(ROOT_ID, { node: root, count: 1, parent: ROOT_ID });
    this.ids.set(root, ROOT_ID);
  }

  node(id: number): Node | undefined {
    return this.byId.get(id)?.node;
  }

  /** The id the kernel knows `node` by, if it holds one. */
  idOf(node: Node): number | undefined {
    return this.ids.get(node);
  }

  /** The directory the kernel looked `node` up in, if it knows `node`. */
  parentOf(node: Node): number | undefined {
    const id = this.ids.get(node);
    return id === undefined ? undefined : this.byId.get(id)?.parent;
  }

  /** A lookup reply hands `node` (found in directory `parent`) to the kernel: its id, counted once more. */
  looked(node: Node, parent: number): number {
    let id = this.ids.get(node);
    const k = id === undefined ? undefined : this.byId.get(id);
    if (k) {
      k.count++;
      if (k.parent !== parent) {
        this.unlink(id!, k.parent);
        this.link(id!, parent);
        k.parent = parent;
      }
      return id!;
    }
    id = this.next++;
    this.ids.set(node, id);
    this.byId.set(id, { node, count: 1, parent });
    this.link(id, parent);
    return id;
  }

  private link(id: number, parent: number): void {
    let set = this.kids.get(parent);
    if (!set) this.kids.set(parent, (set = new Set()));
    set.add(id);
  }

  private unlink(id: number, parent: number): void {
    const set = this.kids.get(parent);
    if (!set) return;
    set.delete(id);
    if (!set.size) this.kids.delete(parent);
  }

  /**
   * What the kernel still holds below `node`, deepest first: the id, the
   * directory it was looked up in, and its name there (a directory's
   * entries come before the directory, as a tree is taken apart).
   */
  knownBelow(node: Node): { id: number; parent: number; name: string }[] {
    const out: { id: number; parent: number; name: string }[] = [];
    const top = this.ids.get(node);
    if (top === undefined) return out;
    const visit = (dir: number): void => {
      for (const id of this.kids.get(dir) ?? []) {
        visit(id);
        const k = this.byId.get(id);
        if (k) out.push({ id, parent: dir, name: k.node.name });
      }
    };
    visit(top);
    return out;
  }

  /** The kernel let go of `n` references to `id`. */
  forget(id: number, n: number): void {
    if (id === ROOT_ID) return;
    const k = this.byId.get(id);
    if (!k) return;
    k.count -= n;
    if (k.count > 0) return;
    this.byId.delete(id);
    this.unlink(id, k.parent);
    if (this.ids.get(k.node) === id) this.ids.delete(k.node);
  }

  /** Ids the kernel holds now (root included). */
  get size(): number {
    return this.byId.size;
  }
}
