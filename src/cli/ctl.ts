/** `tracefs-emu ctl CMD [JSON]`: one request on a mount's control socket. */
import type { Argv, CommandModule } from 'yargs';
import { controlRequest } from '../daemon/control.js';
import { statePaths } from '../daemon/state.js';

interface CtlArgs {
  cmd: string;
  args?: string;
  dir: string;
}

export const ctlCommand: CommandModule<object, CtlArgs> = {
  command: 'ctl <cmd> [args]',
  describe: 'send a command to a mount\'s daemon (status, remount, commands, shutdown, ...)',
  builder: (y: Argv) =>
    y
      .positional('cmd', { type: 'string', demandOption: true, describe: 'command name ("commands" lists them)' })
      .positional('args', { type: 'string', describe: 'arguments as a JSON object' })
      .option('dir', { type: 'string', default: './mount', describe: 'mount point' })
      .example('$0 ctl remount \'{"options":"gid=1000"}\' --dir /sys/kernel/tracing', 'as mount -o remount,gid=1000') as unknown as Argv<CtlArgs>,
  handler: async (a) => {
    let args: Record<string, unknown> = {};
    if (a.args) {
      const parsed: unknown = JSON.parse(a.args);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('args: expected a JSON object');
      args = parsed as Record<string, unknown>;
    }
    const res = await controlRequest(statePaths(a.dir).socket, a.cmd, args);
    console.log(JSON.stringify(res, null, 2));
  },
};
