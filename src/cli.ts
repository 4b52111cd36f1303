#!/usr/bin/env node
/** The tracefs-emu command line. Each command lives in its own module. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { selftestsCommand } from '../selftests/command.js';
import { ctlCommand } from './fuse/cli_ctl.js';
import { execCommand, nsHelperCommand } from './fuse/cli_exec.js';
import { mountCommand } from './fuse/cli_mount.js';
import { statusCommand } from './fuse/cli_status.js';
import { unmountCommand } from './fuse/cli_unmount.js';

await yargs(hideBin(process.argv))
  .scriptName('tracefs-emu')
  .command(mountCommand)
  .command(unmountCommand)
  .command(statusCommand)
  .command(ctlCommand)
  .command(execCommand)
  .command(nsHelperCommand)
  .command(selftestsCommand)
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
