/** `tracefs-emu exec` (and the hidden `ns-helper` its namespace runs). */
import type { Argv, CommandModule } from 'yargs';
import { runExec, runNsHelper } from '../exec/exec.js';

interface ExecCliArgs {
  mount: string;
  debugfs?: string;
  kallsyms?: string;
  control?: string;
  watch?: boolean;
  '--'?: string[];
}

export const execCommand: CommandModule<object, ExecCliArgs> = {
  command: 'exec',
  describe: 'run a command in a private mount namespace where the emulator is the only tracefs (/sys/kernel/tracing, /sys/kernel/debug, /proc/kallsyms)',
  builder: (y: Argv) =>
    y
      .usage('$0 exec [--mount DIR] -- CMD [ARG…]')
      .parserConfiguration({ 'populate--': true })
      .option('mount', { type: 'string', default: './mount', describe: 'the emulator mount to use' })
      .option('debugfs', { type: 'string', hidden: true, describe: "debugfs mount to use instead of the daemon's" })
      .option('kallsyms', { type: 'string', hidden: true, describe: "file to show as /proc/kallsyms instead of the daemon's" })
      .option('control', { type: 'string', hidden: true, describe: "control socket instead of the daemon's" })
      .option('watch', { type: 'boolean', default: true, describe: 'show the emulated kernel the system calls the command makes outside the mount (opens, chdir, symlink; through seccomp): --no-watch leaves them unseen' })
      .example('$0 exec -- sh -c "cat /sys/kernel/tracing/trace"', 'a shell command against ./mount')
      .example('$0 exec --mount /tmp/t -- perf ftrace -a sleep 1', 'a tracing tool against /tmp/t') as unknown as Argv<ExecCliArgs>,
  handler: async (a) => {
    const command = (a['--'] ?? []).map(String);
    if (command.length === 0) throw new Error('exec: give the command after --');
    process.exitCode = await runExec({ mount: a.mount, command, debugfs: a.debugfs, kallsyms: a.kallsyms, control: a.control, watch: a.watch });
  },
};

/** The helper's arguments exactly as given (yargs would parse their options). */
function rawArgsAfter(tool: string): string[] {
  const a = process.argv.slice(2);
  const i = a.indexOf('ns-helper');
  return i >= 0 && a[i + 1] === tool ? a.slice(i + 2) : [];
}

export const nsHelperCommand: CommandModule<object, { tool: string }> = {
  command: 'ns-helper <tool> [args..]',
  describe: false,
  builder: (y: Argv) => y.positional('tool', { type: 'string', demandOption: true }).strict(false) as unknown as Argv<{ tool: string }>,
  handler: async (a) => {
    process.exitCode = await runNsHelper(a.tool, rawArgsAfter(a.tool));
  },
};
