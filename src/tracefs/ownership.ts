/**
 * Who owns a tracefs inode, and who may do what with it: the rules of
 * fs/tracefs/inode.c (set_tracefs_inode_owner, tracefs_apply_options) and
 * event_inode.c (eventfs attributes), on the node tree.
 *
 * - A node chown'ed/chgrp'ed keeps what it was given (until a remount that
 *   sets that id).
 * - Otherwise a tracefs node shows the root's owner; under `instances/`, the
 *   instances directory's owner if that one was chown'ed, else the root's.
 * - An `events` directory (top or per instance) and everything below it
 *   (eventfs) shows the owner its events directory had when created: a
 *   later chgrp of `events` or of the root does not reach them.
 * - A remount with uid=/gid= sets that id on the root, clears it on every
 *   node, and resets every events directory's saved owner to it.
 */
import type { Caller } from '../kernel/caller.js';
import { fail } from '../kernel/errno.js';
import { Dir, type Node, type SuperBlock } from './node.js';
import { reportAttrs } from './tree_watch.js';

interface Owner {
  uid: number;
  gid: number;
}

/** The tracefs mount options (tracefs_parse_param). */
export interface TracefsMountOptions {
  uid?: number;
  gid?: number;
  /** Root directory permission bits; default 0700. */
  mode?: number;
}

const TRACEFS_DEFAULT_MODE = 0o700;

/** Owner an events directory saved at creation (eventfs_create_events_dir), by directory. */
const eventsOwner = new WeakMap<Dir, Owner>();

/** `instances/`: the only directory whose mkdir creates trace arrays. */
function isInstancesDir(n: Node | null): n is Dir {
  return n instanceof Dir && n.ops.mkdir !== undefined;
}

/** The `events` directory of a trace array (the root, or instances/NAME). */
function isEventsDir(n: Node): n is Dir {
  if (!(n instanceof Dir) || n.name !== 'events' || !n.parent) return false;
  const tr = n.parent;
  return tr.parent === null || isInstancesDir(tr.parent);
}

function eventsDirOf(node: Node): Dir | undefined {
  for (let n: Node | null = node; n; n = n.parent) if (isEventsDir(n)) return n;
  return undefined;
}

function rootOf(node: Node): Dir {
  let n: Node = node;
  while (n.parent) n = n.parent;
  return n as Dir;
}

function rootOwner(root: Node, sb: SuperBlock): Owner {
  return { uid: root.uid ?? sb.uid, gid: root.gid ?? sb.gid };
}

/** What a node shows when it was never chown'ed itself. */
function inheritedOwner(node: Node, sb: SuperBlock): Owner {
  if (!node.parent) return { uid: sb.uid, gid: sb.gid };
  const events = eventsDirOf(node);
  if (events) return savedEventsOwner(events, sb);
  const root = rootOf(node);
  for (let n: Node | null = node.parent; n && n !== root; n = n.parent) {
    if (isInstancesDir(n)) {
      const r = rootOwner(root, sb);
      return { uid: n.uid ?? r.uid, gid: n.gid ?? r.gid };
    }
  }
  return rootOwner(root, sb);
}

/** The owner a node shows: its own chown'ed values, else inherited as tracefs does. */
export function ownerOf(node: Node, sb: SuperBlock): Owner {
  const uid = node.uid;
  const gid = node.gid;
  if (uid !== undefined && gid !== undefined) return { uid, gid };
  const inh = inheritedOwner(node, sb);
  return { uid: uid ?? inh.uid, gid: gid ?? inh.gid };
}

function savedEventsOwner(events: Dir, sb: SuperBlock): Owner {
  let o = eventsOwner.get(events);
  if (!o) {
    o = events.parent ? ownerOf(events.parent, sb) : { uid: sb.uid, gid: sb.gid };
    eventsOwner.set(events, o);
  }
  return o;
}

/**
 * Saves the owner of every events directory not seen yet (the top one, and
 * those of new instances): called when the tree is built and after mkdir.
 */
export function captureEventsOwners(root: Dir, sb: SuperBlock): void {
  const visit = (trDir: Dir) => {
    const ev = trDir.get('events');
    if (ev && isEventsDir(ev)) savedEventsOwner(ev, sb);
  };
  visit(root);
  for (const c of root.children.values()) {
    if (!isInstancesDir(c)) continue;
    for (const inst of c.children.values()) if (inst instanceof Dir) visit(inst);
  }
}

/** mount(8) flags that never reach the filesystem, and FUSE's own options: ignored. */
const IGNORED = new Set([
  'rw', 'ro', 'suid', 'nosuid', 'dev', 'nodev', 'exec', 'noexec', 'sync', 'async', 'atime', 'noatime',
  'diratime', 'nodiratime', 'relatime', 'norelatime', 'strictatime', 'nostrictatime', 'lazytime',
  'nolazytime', 'mand', 'nomand', 'silent', 'loud', 'remount', 'bind', 'defaults', 'auto', 'noauto',
  'user', 'nouser', 'users', 'owner', 'nofail', 'iversion', 'noiversion', 'dirsync', '_netdev',
  'user_id', 'group_id', 'allow_other', 'allow_root', 'default_permissions', 'fsname', 'subtype',
  'max_read', 'blksize',
]);

/** Parses `uid=N,gid=N,mode=OCT` (with other mount flags ignored). Bad values: EINVAL. */
export function parseTracefsOptions(text: string): TracefsMountOptions {
  const out: TracefsMountOptions = {};
  for (const raw of text.split(',')) {
    const opt = raw.trim();
    if (!opt) continue;
    const eq = opt.indexOf('=');
    const key = eq < 0 ? opt : opt.slice(0, eq);
    const val = eq < 0 ? undefined : opt.slice(eq + 1);
    if (key === 'uid' || key === 'gid') {
      if (val === undefined || !/^\d+$/.test(val) || Number(val) > 0xfffffffe) fail('EINVAL', `tracefs: Bad value for '${key}'`);
      out[key] = Number(val);
    } else if (key === 'mode') {
      if (val === undefined || !/^[0-7]+$/.test(val) || parseInt(val, 8) > 0xffffffff) fail('EINVAL', `tracefs: Bad value for 'mode'`);
      out.mode = parseInt(val, 8) & 0o7777;
    } else if (!IGNORED.has(key)) {
      fail('EINVAL', `tracefs: Unknown parameter '${key}'`);
    }
  }
  return out;
}

/** The options /proc/mounts shows after the generic ones (tracefs_show_options). */
export function showTracefsOptions(sb: SuperBlock): string {
  const o = sb.options ?? {};
  let s = '';
  if (o.uid !== undefined && o.uid !== 0) s += `,uid=${o.uid}`;
  if (o.gid !== undefined && o.gid !== 0) s += `,gid=${o.gid}`;
  if (o.mode !== undefined && o.mode !== TRACEFS_DEFAULT_MODE) s += `,mode=${o.mode.toString(8)}`;
  return s;
}

/**
 * Applies mount options to a mounted tree (tracefs_apply_options). At mount
 * every option takes its default when not given; on remount only the given
 * ones change anything.
 */
export function applyMountOptions(root: Dir, sb: SuperBlock, opts: TracefsMountOptions, remount: boolean): void {
  setMountOptions(root, sb, opts, remount);
  // Every node may show another owner now (or the root another mode).
  reportAttrs(root, true);
}

function setMountOptions(root: Dir, sb: SuperBlock, opts: TracefsMountOptions, remount: boolean): void {
  // What /proc/mounts shows: a remount keeps the options it does not give
  // (as `mount -o remount,gid=N` does on the kernel: mode= stays shown).
  const prev = remount ? (sb.options ?? {}) : {};
  sb.options = { uid: opts.uid ?? prev.uid ?? 0, gid: opts.gid ?? prev.gid ?? 0, mode: opts.mode ?? prev.mode ?? TRACEFS_DEFAULT_MODE };
  if (!remount || opts.mode !== undefined) root.perm = opts.mode ?? TRACEFS_DEFAULT_MODE;
  const setUid = !remount || opts.uid !== undefined;
  const setGid = !remount || opts.gid !== undefined;
  if (setUid) {
    sb.uid = opts.uid ?? 0;
    root.uid = undefined;
  }
  if (setGid) {
    sb.gid = opts.gid ?? 0;
    root.gid = undefined;
  }
  if (!remount || !(opts.uid !== undefined || opts.gid !== undefined)) return;
  const walk = (n: Node) => {
    if (setUid) n.uid = undefined;
    if (setGid) n.gid = undefined;
    if (isEventsDir(n)) {
      const saved = savedEventsOwner(n, sb);
      eventsOwner.set(n, { uid: setUid ? sb.uid : saved.uid, gid: setGid ? sb.gid : saved.gid });
    }
    if (n instanceof Dir) for (const c of n.children.values()) walk(c);
  };
  walk(root);
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
