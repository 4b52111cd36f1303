/**
 * The tracefs-emu command line: the commands of the library, each in its own
 * module, and the yargs program that runs a list of commands. The
 * executable (bin/tracefs-emu.js) adds the repository's own (selftests,
 * bench) after these.
 */
import yargs, { type CommandModule } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ctlCommand } from './ctl.js';
import { execCommand, nsHelperCommand } from './exec.js';
import { mountCommand } from './mount.js';
import { statsCommand } from './stats.js';
import { statusCommand } from './status.js';
import { unmountCommand } from './unmount.js';

// Each command checks its own argument type; a list of them can only say `any` (handler and builder vary oppositely).
type Command = CommandModule<object, any>;

/** The library's commands, in the order `--help` lists them. */
export const COMMANDS: readonly Command[] = [mountCommand, unmountCommand, statusCommand, statsCommand, ctlCommand, execCommand, nsHelperCommand];

/** Parses this process's arguments and runs the command they name. */
export async function runCli(commands: readonly Command[]): Promise<void> {
  let y = yargs(hideBin(process.argv)).scriptName('tracefs-emu');
  for (const c of commands) y = y.command(c);
  await y
    .demandCommand(1)
    .strict()
    .help()
    .fail((msg, err, y) => {
      if (err) {
        console.error(`tracefs-emu: ${err.message}`);
      } else {
        y.showHelp();
        console.error(`\n${msg}`);
      }
      process.exit(1);
    })
    .parseAsync();
}
