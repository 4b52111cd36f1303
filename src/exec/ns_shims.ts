/**
 * Programs the `exec` namespace puts in front of the host's: kernel-module
 * tools that load and unload the emulated kernel's modules through the
 * daemon (without a daemon, they answer as a kernel without modules; the
 * host kernel is never touched),
 * the mount helpers that carry `mount -o remount` of tracefs to the daemon,
 * and GNU awk as `awk`. Generated per namespace, with absolute paths baked in.
 */

export interface ShimContext {
  /** Kernel release the emulated kernel reports (modprobe's messages name /lib/modules/RELEASE). */
  release: string;
  /** Command line that runs `tracefs-emu ns-helper` (node and the CLI script), already shell-quoted. */
  nsHelper: string;
  /** The daemon's control socket, if there is one. */
  controlSocket?: string;
  /** native/kmod/kmod_tool, built: the kmod tools on the emulated kernel (undefined when it cannot be built). */
  kmodTool?: string;
  /** Where gawk is, for `awk`. */
  gawk?: string;
  /** The directory holding the namespace's tracefs and debugfs (`tracefs/`, `debugfs/`), which new mounts of them bind. */
  sources?: string;
}

/** POSIX shell quoting. */
export function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * modprobe as kmod's, on a kernel whose module directory has none of the
 * modules asked for: every load fails with kmod's message and status 1.
 */
function modprobe(ctx: ShimContext): string {
  return `#!/bin/sh
# tracefs-emu: modprobe of the emulated kernel (no loadable modules).
quiet=0 remove=0 mods=
while [ $# -gt 0 ]; do
  case $1 in
    -q|--quiet) quiet=1 ;;
    -r|--remove) remove=1 ;;
    -[a-zA-Z]*) case $1 in *q*) quiet=1 ;; esac; case $1 in *r*) remove=1 ;; esac ;;
    --*) ;;
    *=*) ;;
    *) if [ -z "$mods" ]; then mods=$1; elif [ $remove = 1 ]; then mods="$mods $1"; fi ;;
  esac
  shift
done
[ -n "$mods" ] || { echo "modprobe: ERROR: missing parameters. See -h." >&2; exit 1; }
for m in $mods; do
  if [ $remove = 1 ]; then
    [ $quiet = 1 ] || echo "modprobe: FATAL: Module $m not found." >&2
  else
    [ $quiet = 1 ] || echo "modprobe: FATAL: Module $m not found in directory /lib/modules/${ctx.release}" >&2
  fi
  exit 1
done
`;
}

function rmmod(): string {
  return `#!/bin/sh
# tracefs-emu: rmmod of the emulated kernel (nothing is loaded).
for a in "$@"; do
  case $a in -*) continue ;; esac
  m=$(printf '%s' "\${a##*/}" | sed 's/\\.ko.*$//; s/-/_/g')
  echo "rmmod: ERROR: Module $m is not currently loaded" >&2
  exit 1
done
echo "rmmod: ERROR: missing module name." >&2
exit 1
`;
}

function lsmod(): string {
  return `#!/bin/sh
# tracefs-emu: lsmod of the emulated kernel (nothing is loaded).
echo "Module                  Size  Used by"
`;
}

function insmod(): string {
  return `#!/bin/sh
# tracefs-emu: insmod on the emulated kernel (it loads nothing).
for a in "$@"; do
  case $a in -*) continue ;; esac
  echo "insmod: ERROR: could not load module $a: No such file or directory" >&2
  exit 1
done
echo "insmod: ERROR: missing filename." >&2
exit 1
`;
}

/**
 * /sbin/mount.<type> helper: util-linux mount runs it for `-t tracefs`
 * (mount.tracefs) and, for a remount without -t, by the type in mountinfo
 * (mount.fuse.tracefs; without it mount would fall back to mount.fuse).
 */
function mountHelper(ctx: ShimContext, type: string): string {
  const sock = ctx.controlSocket ? `TRACEFS_EMU_CONTROL=${shq(ctx.controlSocket)} ` : '';
  return `#!/bin/sh
# tracefs-emu: mount helper for ${type} inside the exec namespace.
${sock}exec ${ctx.nsHelper} mount --type ${shq(type)}${ctx.sources ? ` --sources ${shq(ctx.sources)}` : ''} -- "$@"
`;
}

/** A kmod tool that asks the daemon's emulated kernel (its `module` control command). */
function moduleTool(ctx: ShimContext & { controlSocket: string; kmodTool: string }, tool: string): string {
  return `#!/bin/sh
# tracefs-emu: ${tool} on the emulated kernel.
TRACEFS_EMU_CONTROL=${shq(ctx.controlSocket)} exec ${shq(ctx.kmodTool)} ${tool} --release ${shq(ctx.release)} -- "$@"
`;
}

/** Files of the namespace's PATH directory (first in PATH). */
export function binShims(ctx: ShimContext): Record<string, string> {
  const { controlSocket: sock, kmodTool } = ctx;
  if (sock && kmodTool) {
    const c = { ...ctx, controlSocket: sock, kmodTool };
    return { modprobe: moduleTool(c, 'modprobe'), rmmod: moduleTool(c, 'rmmod'), lsmod: moduleTool(c, 'lsmod'), insmod: moduleTool(c, 'insmod') };
  }
  return { modprobe: modprobe(ctx), rmmod: rmmod(), lsmod: lsmod(), insmod: insmod() };
}

/** Files laid over /sbin (= /usr/sbin) inside the namespace. */
export function sbinShims(ctx: ShimContext): Record<string, string> {
  return {
    ...binShims(ctx),
    'mount.tracefs': mountHelper(ctx, 'tracefs'),
    'mount.fuse.tracefs': mountHelper(ctx, 'fuse.tracefs'),
    'mount.debugfs': mountHelper(ctx, 'debugfs'),
    'mount.fuse.debugfs': mountHelper(ctx, 'fuse.debugfs'),
  };
}
