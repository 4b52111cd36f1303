/** The `stats` control command: the return-hook statistics of the emulated kernel behind a mount. */
import { collectHookStats } from '../ftrace/hook_stats.js';
import { registerControlCommand } from './control.js';

registerControlCommand(
  'stats',
  'return hooks: fgraph shadow stacks, rethook pools, fprobe/kretprobe/kprobe hits and misses, doubly hooked functions; args {"perTask": N}',
  (args, ctx) => collectHookStats(ctx.emulator.ftrace, { perTaskLimit: typeof args.perTask === 'number' ? args.perTask : 50 }),
);
