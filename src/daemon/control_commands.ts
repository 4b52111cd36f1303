/**
 * The control commands every daemon has. Another subsystem adds its own by
 * calling registerControlCommand() in a module imported here.
 */
import { applyMountOptions, parseTracefsOptions, showTracefsOptions } from '../tracefs/ownership.js';
import { controlCommands, registerControlCommand } from './control.js';
import { writeMountOptions } from './state.js';
import './control_load.js';
import './control_modules.js';
import './control_stats.js';

registerControlCommand('status', 'what is mounted where, by which process, as which kernel', (_args, ctx) => ({
  mountpoint: ctx.mount.mountpoint,
  pid: process.pid,
  series: ctx.emulator.kernel.series,
  cpus: ctx.emulator.kernel.nrCpus,
  seed: ctx.emulator.kernel.seed,
  options: showTracefsOptions(ctx.emulator.fs.sb).replace(/^,/, ''),
  openFiles: ctx.mount.openFiles,
  startedAt: ctx.state.startedAt,
  uptimeMs: Math.round(process.uptime() * 1000),
}));

registerControlCommand(
  'remount',
  'mount -o remount,OPTIONS: args {"options": "gid=N,uid=N,mode=OCT"}; other mount flags are ignored',
  async (args, ctx) => {
    const text = typeof args.options === 'string' ? args.options : '';
    const opts = parseTracefsOptions(text);
    const { fs } = ctx.emulator;
    applyMountOptions(fs.root, fs.sb, opts, true);
    writeMountOptions(ctx.state.mountpoint, showTracefsOptions(fs.sb));
    // mount(8) returns once the kernel shows the new owners and modes.
    await ctx.mount.settled();
    return { options: showTracefsOptions(fs.sb).replace(/^,/, '') };
  },
);

registerControlCommand('commands', 'the commands this daemon answers', () =>
  controlCommands().map((c) => ({ name: c.name, describe: c.describe })),
);

registerControlCommand('shutdown', 'unmount and stop the daemon', (_args, ctx) => {
  setImmediate(() => ctx.shutdown());
  return { stopping: true };
});
