/** `tracefs-emu stats [--json]`: return-hook statistics of a running mount, through its control socket. */
import type { Argv, CommandModule } from 'yargs';
import { controlRequest } from '../daemon/control.js';
import { statePaths } from '../daemon/state.js';
import { formatHookStats, type HookStats } from '../ftrace/hook_stats.js';

interface StatsArgs {
  dir: string;
  json: boolean;
  tasks: number;
}

export const statsCommand: CommandModule<object, StatsArgs> = {
  command: 'stats',
  describe: 'what the kernel does not show: shadow stacks, rethook pools, probe hits and misses, functions hooked twice',
  builder: (y: Argv) =>
    y
      .option('dir', { type: 'string', default: './mount', describe: 'mount point' })
      .option('json', { type: 'boolean', default: false, describe: 'print JSON' })
      .option('tasks', { type: 'number', default: 20, describe: 'how many tasks to list by shadow-stack use' }) as unknown as Argv<StatsArgs>,
  handler: async (a) => {
    const res = (await controlRequest(statePaths(a.dir).socket, 'stats', { perTask: a.tasks })) as HookStats;
    console.log(a.json ? JSON.stringify(res, null, 2) : formatHookStats(res));
  },
};
