#!/usr/bin/env node
/** The tracefs-emu command line. Each command lives in its own module. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';

await yargs(hideBin(process.argv))
  .scriptName('tracefs-emu')
  .command(
    'mount [dir]',
    'mount an emulated tracefs (foreground unless --daemon)',
    (y) => y.positional('dir', { type: 'string', default: './mount', describe: 'mount point' }),
    () => {
      throw new Error('mount: not implemented yet');
    },
  )
  .demandCommand(1)
  .strict()
  .help()
  .parseAsync();
