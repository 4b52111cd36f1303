/**
 * The VFS objects of a mount in emulated kernel memory: its super_block and
 * mount, a dentry and inode for every path touched, a struct file for every
 * open, all laid out with the kernel's BTF so that
 * `file->f_path.dentry->d_name.name`, `%pd` and `%pD` give the real names.
 * The tracefs mount has one (TracefsVfs); files of the machine that watched
 * processes open elsewhere get one per filesystem (src/host/syscalls.ts).
 */
import type { KernelMemory } from './kmem.js';
import type { KStructs } from './kstruct.js';

export const TRACEFS_MAGIC = 0x74726163;
export const S_IFMT = 0o170000;
export const S_IFDIR = 0o040000;
export const S_IFREG = 0o100000;

/** fmode_t bits do_dentry_open sets. */
const FMODE_READ = 0x1;
const FMODE_WRITE = 0x2;
const FMODE_LSEEK = 0x4;
const FMODE_PREAD = 0x8;
const FMODE_PWRITE = 0x10;
const FMODE_CAN_READ = 0x20000;
const FMODE_CAN_WRITE = 0x40000;
const FMODE_OPENED = 0x80000;

export interface KDentry {
  addr: bigint;
  inode: bigint;
  name: string;
  path: string;
  ino: number;
  parent?: KDentry;
  /** Cached children, and open files on it: a dentry with neither can be evicted. */
  kids: number;
  refs: number;
}

/** How many dentries the cache keeps before it evicts unused leaves (the kernel shrinks its dcache under pressure). */
const DCACHE_MAX = 8192;

export interface KFile {
  addr: bigint;
  dentry: KDentry;
  /** The fd number the process holds it under (plausible: the lowest free one). */
  fd: number;
}

/** What the kernel is told of a tracefs node. */
interface NodeInfo {
  ino: number;
  mode: number;
  uid?: number;
  gid?: number;
}

/** What a super_block says of its filesystem. */
export interface FsIdentity {
  /** s_id and the mount's devname (`tracefs`, `tmpfs`, `/dev/vda1`). */
  id: string;
  devname: string;
  magic: number;
  /** The file_system_type object's symbol (`trace_fs_type`, `shmem_fs_type`). */
  fsType?: string;
  /** The slab cache its inodes come from. */
  inodeCache: string;
  rootMode: number;
  /** s_dev (the kernel's encoding: major << 20 | minor). */
  dev?: number;
}

const TRACEFS_FS: FsIdentity = { id: 'tracefs', devname: 'tracefs', magic: TRACEFS_MAGIC, fsType: 'trace_fs_type', inodeCache: 'tracefs_inode_cache', rootMode: S_IFDIR | 0o700 };

/** The kernel's name hash is not ABI: a stable stand-in. */
function nameHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) >>> 0;
  return h;
}

export class MountVfs {
  readonly sb: bigint;
  readonly mount: bigint;
  /** &mount->mnt: what path.mnt points at. */
  readonly vfsmount: bigint;
  readonly root: KDentry;
  private readonly dentries = new Map<string, KDentry>();
  private nextIno = 1 << 20;

  constructor(
    private readonly kmem: KernelMemory,
    private readonly st: KStructs,
    /** Addresses of data symbols (trace_fs_type...), when the symbol table has them. */
    symbolAddr: (name: string) => bigint | undefined,
    readonly fs: FsIdentity,
  ) {
    this.sb = kmem.cacheAlloc('kmalloc-2k', st.sizeOf('super_block', 1408));
    st.set(this.sb, 'super_block', 's_magic', fs.magic);
    st.set(this.sb, 'super_block', 's_blocksize', 4096);
    st.set(this.sb, 'super_block', 's_blocksize_bits', 12);
    st.set(this.sb, 'super_block', 's_id', fs.id.slice(0, 31));
    if (fs.dev !== undefined) st.set(this.sb, 'super_block', 's_dev', fs.dev);
    const fsType = fs.fsType ? symbolAddr(fs.fsType) : undefined;
    if (fsType) st.set(this.sb, 'super_block', 's_type', fsType);
    this.mount = kmem.cacheAlloc('mnt_cache', st.sizeOf('mount', 368));
    const mntOff = st.field('mount', 'mnt')?.offset ?? 32;
    this.vfsmount = this.mount + BigInt(mntOff);
    st.set(this.mount, 'mount', 'mnt_devname', kmem.kstr(fs.devname));
    this.root = this.makeDentry('/', '', { ino: 1, mode: fs.rootMode }, undefined);
    st.set(this.sb, 'super_block', 's_root', this.root.addr);
    st.set(this.vfsmount, 'vfsmount', 'mnt_root', this.root.addr);
    st.set(this.vfsmount, 'vfsmount', 'mnt_sb', this.sb);
    this.dentries.set('', this.root);
  }

  /**
   * The dentry of a path (relative to the mount, '' for its root), made with
   * its parents on first use. `node` describes the last component; a node
   * with a different inode number than the cached dentry's (a directory
   * removed and made again) gets a fresh dentry.
   */
  dentry(path: string, node?: NodeInfo, isDir = false): KDentry {
    const parts = path.split('/').filter((p) => p && p !== '.');
    let cur = this.root;
    let sofar = '';
    for (let i = 0; i < parts.length; i++) {
      const name = parts[i]!;
      if (name === '..') {
        cur = cur.parent ?? this.root;
        sofar = cur.path;
        continue;
      }
      sofar = sofar ? `${sofar}/${name}` : name;
      const last = i === parts.length - 1;
      const info = last ? node : undefined;
      let d = this.dentries.get(sofar);
      if (d && info && info.ino !== d.ino) {
        this.drop(sofar);
        d = undefined;
      }
      if (!d) {
        d = this.makeDentry(name, sofar, info ?? { ino: this.nextIno++, mode: last && !isDir ? S_IFREG | 0o644 : S_IFDIR | 0o755 }, cur);
        this.dentries.set(sofar, d);
        cur.kids++;
        if (this.dentries.size > DCACHE_MAX) this.shrink();
      } else if (info) this.updateInode(d.inode, info);
      cur = d;
    }
    return cur;
  }

  /** Whether the dcache already has this path (a lookup finds it without asking the filesystem). */
  known(path: string): boolean {
    return this.dentries.has(path.split('/').filter((p) => p && p !== '.').join('/'));
  }

  /** Forgets a path and everything below it (rmdir, or a node replaced). */
  drop(path: string): void {
    for (const [p, d] of this.dentries) {
      if (p === path || p.startsWith(`${path}/`)) this.evict(p, d);
    }
  }

  private evict(p: string, d: KDentry): void {
    this.dentries.delete(p);
    if (d.parent) d.parent.kids--;
    // Still open: its memory stays (the struct file points at it).
    if (d.refs > 0) return;
    this.kmem.free(d.addr);
    this.kmem.free(d.inode);
  }

  /** Evicts the oldest quarter of the unused leaves. */
  private shrink(): void {
    let n = this.dentries.size >> 2;
    for (const [p, d] of this.dentries) {
      if (n <= 0) break;
      if (d === this.root || d.kids > 0 || d.refs > 0) continue;
      this.evict(p, d);
      n--;
    }
  }

  private makeDentry(name: string, path: string, node: NodeInfo, parent: KDentry | undefined): KDentry {
    const { st, kmem } = this;
    const addr = kmem.cacheAlloc('dentry', st.sizeOf('dentry', 192));
    const inode = kmem.cacheAlloc(this.fs.inodeCache, st.sizeOf('inode', 600));
    const inline = st.field('dentry', 'd_shortname') ?? st.field('dentry', 'd_iname');
    let nameAddr: bigint;
    if (inline && Buffer.byteLength(name, 'latin1') < inline.size) {
      nameAddr = addr + BigInt(inline.offset);
      kmem.space.writeCString(nameAddr, name);
    } else nameAddr = kmem.kstr(name);
    st.set(addr, 'dentry', 'd_name.name', nameAddr);
    st.set(addr, 'dentry', 'd_name.hash', nameHash(name));
    st.set(addr, 'dentry', 'd_name.len', Buffer.byteLength(name, 'latin1'));
    st.set(addr, 'dentry', 'd_parent', parent ? parent.addr : addr);
    st.set(addr, 'dentry', 'd_inode', inode);
    st.set(addr, 'dentry', 'd_sb', this.sb);
    st.set(addr, 'dentry', 'd_lockref.count', 1);
    st.set(inode, 'inode', 'i_sb', this.sb);
    this.updateInode(inode, node);
    return { addr, inode, name, path, ino: node.ino, parent, kids: 0, refs: 0 };
  }

  private updateInode(inode: bigint, node: NodeInfo): void {
    const { st } = this;
    st.set(inode, 'inode', 'i_mode', node.mode);
    st.set(inode, 'inode', 'i_ino', node.ino);
    st.set(inode, 'inode', 'i_uid.val', node.uid ?? 0);
    st.set(inode, 'inode', 'i_gid.val', node.gid ?? 0);
    st.set(inode, 'inode', '__i_nlink', (node.mode & S_IFMT) === S_IFDIR ? 2 : 1);
  }

  /** alloc_empty_file + do_dentry_open: a struct file on `dentry`. */
  openFile(dentry: KDentry, flags: number, fops: bigint | undefined, fd: number): KFile {
    const { st, kmem } = this;
    const addr = kmem.cacheAlloc('filp', st.sizeOf('file', 184));
    const acc = flags & 3;
    let mode = FMODE_LSEEK | FMODE_PREAD | FMODE_PWRITE | FMODE_OPENED;
    if (acc === 0 || acc === 2) mode |= FMODE_READ | FMODE_CAN_READ;
    if (acc === 1 || acc === 2) mode |= FMODE_WRITE | FMODE_CAN_WRITE;
    st.set(addr, 'file', 'f_mode', mode);
    st.set(addr, 'file', 'f_flags', flags | 0o100000 /* O_LARGEFILE */);
    st.set(addr, 'file', 'f_path.mnt', this.vfsmount);
    st.set(addr, 'file', 'f_path.dentry', dentry.addr);
    st.set(addr, 'file', 'f_inode', dentry.inode);
    if (fops) st.set(addr, 'file', 'f_op', fops);
    dentry.refs++;
    st.set(addr, 'file', 'f_ref.refcnt', 0);
    st.set(addr, 'file', 'f_count.counter', 1);
    return { addr, dentry, fd };
  }

  setPos(file: KFile, pos: number): void {
    this.st.set(file.addr, 'file', 'f_pos', BigInt(pos));
  }

  closeFile(file: KFile): void {
    this.kmem.free(file.addr);
    file.dentry.refs--;
  }
}

/** The tracefs mount's objects. */
export class TracefsVfs extends MountVfs {
  constructor(kmem: KernelMemory, st: KStructs, symbolAddr: (name: string) => bigint | undefined) {
    super(kmem, st, symbolAddr, TRACEFS_FS);
  }
}
