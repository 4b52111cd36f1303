/**
 * modprobe, insmod, rmmod and lsmod of the `exec` namespace, as kmod's
 * answer, on the emulated kernel: loads and unloads go to the daemon's
 * `module` control command (init_module / delete_module of the emulated
 * kernel), lsmod reads its /proc/modules. The host kernel is never asked.
 */
import { basename } from 'node:path';
import { controlRequest } from '../daemon/control.js';

type Tool = 'modprobe' | 'insmod' | 'rmmod' | 'lsmod';

interface ModuleReply {
  name?: string;
  text?: string;
}

/** Module names as the kernel keeps them (`-` → `_`, a path's `.ko*` dropped). */
function kernelName(arg: string): string {
  return basename(arg).replace(/\.ko(\.\w+)?$/, '').replace(/-/g, '_');
}

function errnoOf(e: unknown): string | undefined {
  return (e as { errno?: string }).errno;
}

async function ask(socket: string, op: string, name?: string): Promise<ModuleReply> {
  return (await controlRequest(socket, 'module', { op, name })) as ModuleReply;
}

/** lsmod's table: name, size, use count and holders, from /proc/modules. */
export function lsmodText(procModules: string): string {
  let out = 'Module                  Size  Used by\n';
  for (const line of procModules.split('\n').filter(Boolean)) {
    const [name, size, refs, holders] = line.split(' ');
    const by = holders && holders !== '-' ? ` ${holders.replace(/,$/, '')}` : '';
    out += `${name!.padEnd(19)} ${size!.padStart(8)}  ${refs}${by}\n`;
  }
  return out;
}

/** Runs one tool; returns its exit status. */
export async function runModuleTool(tool: Tool, argv: string[], opts: { socket?: string; release: string }): Promise<number> {
  const err = (m: string) => process.stderr.write(`${tool}: ${m}\n`);
  const { socket } = opts;
  const words = argv.filter((a) => !a.startsWith('-'));
  const flags = argv.filter((a) => a.startsWith('-') && !a.startsWith('--')).join('');
  const quiet = flags.includes('q') || argv.includes('--quiet');
  if (!socket) {
    err('no emulator daemon (TRACEFS_EMU_CONTROL unset)');
    return 1;
  }
  if (tool === 'lsmod') {
    process.stdout.write(lsmodText((await ask(socket, 'list')).text ?? ''));
    return 0;
  }
  const remove = tool === 'rmmod' || (tool === 'modprobe' && (flags.includes('r') || argv.includes('--remove')));
  // modprobe loads one module (the rest are its parameters) and removes several; insmod takes a path and parameters.
  const targets = remove ? words : words.slice(0, 1);
  if (targets.length === 0) {
    err(tool === 'insmod' ? 'ERROR: missing filename.' : tool === 'rmmod' ? 'ERROR: missing module name.' : 'ERROR: missing parameters. See -h.');
    return 1;
  }
  for (const arg of targets) {
    const name = kernelName(arg);
    try {
      await ask(socket, remove ? 'unload' : 'load', name);
    } catch (e) {
      const code = errnoOf(e);
      if (!code) throw e;
      if (tool === 'modprobe' && !remove && code === 'EEXIST') continue; // already loaded: nothing to do
      if (quiet) return 1;
      if (tool === 'insmod') err(`ERROR: could not insert module ${arg}: ${code === 'EEXIST' ? 'File exists' : 'No such file or directory'}`);
      else if (remove && code === 'EBUSY') err(`ERROR: Module ${name} is in use`);
      else if (tool === 'rmmod') err(`ERROR: Module ${name} is not currently loaded`);
      else if (remove) err(`FATAL: Module ${name} is not currently loaded`);
      else err(`FATAL: Module ${arg} not found in directory /lib/modules/${opts.release}`);
      return 1;
    }
  }
  return 0;
}

export function isModuleTool(tool: string): tool is Tool {
  return tool === 'modprobe' || tool === 'insmod' || tool === 'rmmod' || tool === 'lsmod';
}
