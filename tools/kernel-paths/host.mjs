#!/usr/bin/env node
// Adds to data/kernel-<series>/call-paths.txt.br the `host:` blocks: what the
// real kernel runs for system calls on files outside tracefs — opens of a
// device node, a regular file, a directory, a new file, a missing one;
// chdir(); symlink() — cut out of the traces tools/oracle/kernel-paths-host.sh
// takes. The emulated kernel replays them for the calls `tracefs-emu exec`'s
// seccomp watcher reports (src/host/syscalls.ts). Each block has one
// hole, `$op`, as the last call of the function that returns the system
// call's result: the emulator settles the result there (the fd, or -errno).
//
//   cat tools/oracle/capture.sh tools/oracle/kernel-paths-host.sh | kernel-oracle [--series S] --out DIR run -
//   node tools/kernel-paths/host.mjs S DIR
//
// Blocks already named `host:*` in the file are replaced; the others are kept.
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanTree, has, node, openCapture, replaceBlocks } from './lib.mjs';

const [series, dir] = process.argv.slice(2);
if (!series || !dir) {
  console.error('usage: host.mjs SERIES ORACLE_OUT_DIR');
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const { find } = openCapture(dir);

const blocks = new Map();
/** A system call's tree from an op's trace, cleaned, with `$op` last under `resultFn`. */
function host(name, op, sysName, { resultFn = sysName, rename, ...opts } = {}) {
  const t = find(`host-${op}`, sysName, opts);
  if (!t) throw new Error(`${series}: host-${op}: no ${sysName}${opts.marker ? ` with ${opts.marker}` : ''}`);
  cleanTree(t);
  const r = t.name === resultFn ? t : node(t, resultFn);
  if (!r) throw new Error(`${series}: host-${op}: no ${resultFn} in ${sysName}`);
  r.kids.push({ name: '$op', kids: [] });
  if (rename) t.name = rename;
  blocks.set(name, [t]);
}

const notTracefs = (n) => !has(n, /^(tracefs_|eventfs_)/);
// opens: the kind of file decides what do_dentry_open calls (and whether a truncate or a create runs)
host('host:sys_openat:chr', 'open-devnull', '__x64_sys_openat', { resultFn: 'do_sys_openat2', marker: 'chrdev_open' });
host('host:sys_openat:chr-read', 'open-devnull-read', '__x64_sys_openat', { resultFn: 'do_sys_openat2', marker: 'chrdev_open' });
host('host:sys_openat:reg-read', 'open-file', '__x64_sys_openat', { resultFn: 'do_sys_openat2', where: notTracefs, marker: 'vfs_open' });
host('host:sys_openat:reg', 'open-file-write', '__x64_sys_openat', { resultFn: 'do_sys_openat2', where: notTracefs, marker: 'vfs_open' });
host('host:sys_openat:creat', 'open-create', '__x64_sys_openat', { resultFn: 'do_sys_openat2', where: notTracefs, marker: /create/ });
host('host:sys_openat:dir', 'ls-dir', '__x64_sys_openat', { resultFn: 'do_sys_openat2', comm: 'ls', where: notTracefs, marker: 'vfs_open' });
host('host:sys_openat:enoent', 'open-enoent', '__x64_sys_openat', { resultFn: 'do_sys_openat2', where: (n) => notTracefs(n) && !has(n, 'vfs_open') });
// chdir: into a directory (on tmpfs), and into one that is not there
host('host:sys_chdir', 'chdir', '__x64_sys_chdir', { where: (n) => has(n, 'set_fs_pwd') && !has(n, /^kernfs_/) });
host('host:sys_chdir:enoent', 'chdir-enoent', '__x64_sys_chdir', { where: (n) => !has(n, 'set_fs_pwd') });
// symlink (busybox ln calls symlink(2); coreutils' ln symlinkat(2), which does the same after its entry)
host('host:sys_symlink', 'symlink', '__x64_sys_symlink', { marker: 'vfs_symlink' });
host('host:sys_symlink:eexist', 'symlink-eexist', '__x64_sys_symlink', { where: (n) => !has(n, 'vfs_symlink') });

const file = join(root, 'data', `kernel-${series}`, 'call-paths.txt.br');
const { lines, bytes } = replaceBlocks(file, 'host:', blocks);
console.error(`${series}: ${blocks.size} host blocks; ${lines} lines, ${bytes} bytes in all`);
