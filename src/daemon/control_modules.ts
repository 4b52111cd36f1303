/**
 * The `module` control command: what the `exec` namespace's modprobe,
 * insmod, rmmod and lsmod ask of the emulated kernel (init_module,
 * delete_module, /proc/modules).
 */
import { fail } from '../kernel/errno.js';
import { procModulesText } from '../kernel/module.js';
import { registerControlCommand } from './control.js';

registerControlCommand(
  'module',
  'loadable modules: args {"op": "load"|"unload"|"list", "name": NAME, "params": {NAME: VALUE}}; errors carry the kernel\'s errno (ENOENT, EEXIST, EBUSY)',
  async (args, ctx) => {
    const { modules } = ctx.emulator.kernel;
    const name = typeof args.name === 'string' ? args.name : '';
    switch (args.op) {
      case 'load': {
        const params: Record<string, string> = {};
        if (args.params && typeof args.params === 'object') for (const [k, v] of Object.entries(args.params)) params[k] = String(v);
        return { name: modules.load(name, params).def.name };
      }
      case 'unload':
        modules.unload(name);
        // rmmod returns once the mount no longer shows the module's events (the kernel forgot their entries).
        await ctx.mount.settled();
        return { name };
      case 'list':
        return { text: procModulesText(modules) };
      default:
        fail('EINVAL');
    }
  },
);
