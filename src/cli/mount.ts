/** `tracefs-emu mount [dir]`: mount an emulated tracefs. */
import type { Argv, CommandModule } from 'yargs';
import { runForeground, startDaemon } from '../daemon/daemon.js';
import { EMULATOR_CLI_OPTIONS, type EmulatorCliArgs, emulatorOptionsFrom, hostOptionsFrom } from './emulator_options.js';

interface MountArgs extends EmulatorCliArgs {
  dir: string;
  daemon: boolean;
  options?: string | string[];
  'fuse-option'?: string | string[];
  'pid-file'?: string;
  'auto-unmount': boolean;
}

function list(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

export const mountCommand: CommandModule<object, MountArgs> = {
  command: 'mount [dir]',
  describe: 'mount an emulated tracefs (foreground unless --daemon); SIGINT/SIGTERM unmount',
  builder: (y: Argv) =>
    y
      .positional('dir', { type: 'string', default: './mount', describe: 'mount point (created if missing)' })
      .options(EMULATOR_CLI_OPTIONS)
      .option('daemon', { alias: 'd', type: 'boolean', default: false, describe: 'detach once mounted (pid and log in the state dir)' })
      .option('options', {
        alias: 'o',
        type: 'string',
        describe: 'tracefs mount options: gid=N,uid=N,mode=OCT (root dir default 0700, root:root); repeatable',
      })
      .option('fuse-option', { type: 'string', describe: 'extra libfuse mount option (repeatable)' })
      .option('pid-file', { type: 'string', describe: 'also write the serving pid to this file' })
      .option('auto-unmount', {
        type: 'boolean',
        default: true,
        describe: 'have fusermount remove the mount if the daemon dies (--no-auto-unmount to keep a stale one)',
      })
      .example('$0 mount', 'mount at ./mount in the foreground')
      .example('$0 mount -d --kernel 6.12 -o gid=1000 /tmp/t', 'a 6.12 tracefs in the background, group 1000') as unknown as Argv<MountArgs>,
  handler: async (a) => {
    const tracefsOptions = list(a.options).join(',');
    const serveOpts = {
      dir: a.dir,
      emulator: emulatorOptionsFrom(a),
      host: hostOptionsFrom(a),
      tracefsOptions,
      fuseOptions: list(a['fuse-option']),
      pidFile: a['pid-file'],
      autoUnmount: a['auto-unmount'],
    };
    if (a.daemon && process.env.TRACEFS_EMU_DAEMON_CHILD !== '1') {
      const d = await startDaemon(a.dir);
      console.log(`mounted tracefs at ${d.mountpoint} (daemon pid ${d.pid}, log ${d.log})`);
      return;
    }
    await runForeground({ ...serveOpts, daemon: a.daemon });
  },
};
